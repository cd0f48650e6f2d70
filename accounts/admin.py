"""Admin: users as Django's UserAdmin (plus the bot flag); the match projections read-only.

The projections are derived from the event log (``manage.py rebuild_projections`` rewrites
them), so editing a row here would only be undone: staff audit them, never change them.
"""

from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from accounts.models import MatchRecord, PlayerMatch, PlayerStats, Session, User
from core.admin import ReadOnlyAdmin


class PlayerStatsInline(admin.StackedInline):
    model = PlayerStats
    can_delete = False
    extra = 0
    max_num = 0

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(User)
class PlayerAdmin(UserAdmin):
    list_display = ("username", "is_bot", "email", "is_staff", "is_active", "date_joined")
    list_filter = ("is_bot", *UserAdmin.list_filter)
    readonly_fields = ("is_bot", "match_history")
    fieldsets = (*UserAdmin.fieldsets, ("Player", {"fields": ("is_bot", "match_history")}))
    inlines = [PlayerStatsInline]

    @admin.display(description="match history")
    def match_history(self, obj: User) -> str:
        url = reverse("admin:accounts_playermatch_changelist") + f"?player__id__exact={obj.pk}"
        return format_html('<a href="{}">{} matches</a>', url, obj.match_records.count())


@admin.register(MatchRecord)
class MatchRecordAdmin(ReadOnlyAdmin):
    list_display = ("game_id", "rules_preset", "started_at", "ended_at", "winner_seat")
    list_filter = ("rules_preset",)
    search_fields = ("game__id",)
    readonly_fields = ("game_link",)

    @admin.display(description="game and its events")
    def game_link(self, obj: MatchRecord) -> str:
        return format_html(
            '<a href="{}">{}</a>', reverse("admin:games_game_change", args=[obj.pk]), obj.pk
        )


@admin.register(PlayerMatch)
class PlayerMatchAdmin(ReadOnlyAdmin):
    list_display = (
        "player",
        "match_id",
        "ended_at",
        "rules_preset",
        "result",
        "placement",
        "rounds_won",
        "chips",
        "ordinal",
    )
    list_filter = ("result", "rules_preset", "player__is_bot")
    search_fields = ("player__username", "match__game__id")
    list_select_related = ("player",)
    date_hierarchy = "ended_at"


@admin.register(PlayerStats)
class PlayerStatsAdmin(ReadOnlyAdmin):
    list_display = ("player", "matches", "wins", "rounds_won", "chips", "mu", "sigma", "ordinal")
    list_filter = ("player__is_bot",)
    search_fields = ("player__username",)
    list_select_related = ("player",)
    ordering = ("-ordinal",)


@admin.register(Session)
class SessionAdmin(ReadOnlyAdmin):
    """Sessions (knox tokens): who is logged in where; only the digest of a key is stored."""

    list_display = ("id", "user", "device", "created", "last_used_at", "expiry")
    search_fields = ("user__username", "device")
    exclude = ("digest", "token_key")

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return True  # ending a session (staff logging a device out) is allowed
