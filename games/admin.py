"""Read-only admin: games and their events are written by the services only.

Changing a game row here would desynchronise the projection from its events, and the database
refuses event edits anyway, so every model is view-only.
"""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from core.admin import ReadOnlyAdmin
from games.models import Event, Game, Seat


class SeatInline(admin.TabularInline):
    model = Seat
    fields = ("index", "user", "bot_level", "joined_at")
    readonly_fields = fields
    can_delete = False
    extra = 0
    max_num = 0


@admin.register(Game)
class GameAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "status",
        "version",
        "phase",
        "round",
        "current_seat",
        "awaiting",
        "due_at",
        "created_at",
    )
    list_filter = ("status", "awaiting")
    search_fields = ("id",)
    exclude = ("snapshot", "last_hash")  # hands and stock: not for casual eyes
    readonly_fields = ("events", "match_record")
    inlines = [SeatInline]

    @admin.display(description="events")
    def events(self, obj: Game) -> str:
        """The game's event stream (one row per event, in seq order) in the event admin."""
        url = reverse("admin:games_event_changelist") + f"?game__id__exact={obj.pk}"
        return format_html('<a href="{}">{} events</a>', url, obj.version)

    @admin.display(description="match record")
    def match_record(self, obj: Game) -> str:
        """The finished match's projection (accounts), if it has been settled."""
        record = getattr(obj, "record", None)
        if record is None:
            return "-"
        url = reverse("admin:accounts_matchrecord_change", args=[obj.pk])
        return format_html('<a href="{}">{}</a>', url, record)


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ("game", "seq", "type", "actor", "recorded_at")
    list_filter = ("type",)
    ordering = ("game", "seq")
    search_fields = ("game__id",)
    list_select_related = ("game",)
