"""Admin: the chat's log for moderators. Messages (with their text and whether and by whom they
were hidden), hides and reports are read-only lists; the one write is the "hide" action, which
records who hid each message, as the API's hide does (``chat.services.hide``)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from chat import services
from chat.errors import AlreadyHidden
from chat.models import Hidden, Message, Report
from core.admin import ReadOnlyAdmin


@admin.register(Message)
class MessageAdmin(ReadOnlyAdmin):
    list_display = ("id", "game_id", "channel", "user", "created_at", "text", "hidden_by")
    list_filter = ("channel",)
    search_fields = ("=game_id", "user__username", "body__text")
    list_select_related = ("user", "body", "hidden__by")
    ordering = ("-id",)
    actions = ["hide_messages"]

    @admin.display(description="text")
    def text(self, obj: Message) -> str:
        body = getattr(obj, "body", None)
        return body.text if body is not None else "(deleted with the account)"

    @admin.display(description="hidden by")
    def hidden_by(self, obj: Message) -> Any:
        hidden = getattr(obj, "hidden", None)
        return f"{hidden.by} at {hidden.at:%Y-%m-%d %H:%M}" if hidden is not None else ""

    @admin.action(description="Hide the selected messages from every reader")
    def hide_messages(self, request: HttpRequest, queryset: QuerySet[Message]) -> None:
        done = 0
        for message in queryset:
            try:
                services.hide(message, by=request.user, reason="admin")
            except AlreadyHidden:
                continue
            done += 1
        self.message_user(request, f"{done} message(s) hidden.", messages.SUCCESS)


@admin.register(Hidden)
class HiddenAdmin(ReadOnlyAdmin):
    list_display = ("id", "message", "by", "at", "reason")
    list_select_related = ("message", "by")
    ordering = ("-id",)


@admin.register(Report)
class ReportAdmin(ReadOnlyAdmin):
    list_display = ("id", "message", "message_text", "user", "reason", "at")
    list_filter = ("reason",)
    list_select_related = ("message__body", "user")
    ordering = ("-id",)

    @admin.display(description="text")
    def message_text(self, obj: Report) -> str:
        body = getattr(obj.message, "body", None)
        return body.text if body is not None else ""
