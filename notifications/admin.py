"""Admin: the operator's view of the notifications, the pushes and the webhooks.

Studios' webhook endpoints are the one thing edited here (their URL, kinds, secret); those of
``TONGITS_WEBHOOKS`` belong to the settings (``notifications.webhooks.sync_endpoints``) and are
shown read-only. Everything else is an outbox or a projection written by the services and the
workers, listed with its status and tries, never edited by hand.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from core.admin import ReadOnlyAdmin
from notifications import webhooks
from notifications.models import (
    Device,
    Notification,
    PushAttempt,
    PushDelivery,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookMessage,
)


class AttemptInline(admin.TabularInline):
    """A delivery's tries, read-only: what was tried, when, and what the other side answered."""

    extra = 0
    can_delete = False
    fields = ("at", "status_code", "error", "milliseconds")
    readonly_fields = fields
    ordering = ("id",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class WebhookAttemptInline(AttemptInline):
    model = WebhookAttempt


class PushAttemptInline(AttemptInline):
    model = PushAttempt


class HttpsURLField(forms.URLField):
    """A URL typed without its scheme is https (Django 6's default, without its warning)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("assume_scheme", "https")
        super().__init__(**kwargs)


class WebhookEndpointForm(forms.ModelForm):
    kinds = forms.MultipleChoiceField(
        choices=WebhookMessage.Kind.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every kind.",
    )

    class Meta:
        model = WebhookEndpoint
        fields = ("url", "description", "kinds", "active", "secret")
        field_classes = {"url": HttpsURLField}
        widgets = {"secret": forms.TextInput(attrs={"size": 60, "autocomplete": "off"})}

    def clean_secret(self) -> str:
        try:
            return webhooks.check_secret(self.cleaned_data["secret"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean_kinds(self) -> list[str]:
        return webhooks.check_kinds(self.cleaned_data["kinds"])


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    form = WebhookEndpointForm
    list_display = ("id", "url", "description", "kinds_shown", "active", "from_settings")
    list_filter = ("active", "from_settings")
    search_fields = ("url", "description")

    @admin.display(description="kinds")
    def kinds_shown(self, obj: WebhookEndpoint) -> str:
        return ", ".join(obj.kinds) or "every kind"

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        # A new endpoint starts with a fresh secret, to be handed to the studio.
        return {"secret": webhooks.new_secret(), **super().get_changeform_initial_data(request)}

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is not None and obj.from_settings:
            # The settings own it: an edit here would be undone at the next start.
            return ("url", "description", "kinds", "active", "secret", "from_settings")
        return ("from_settings",)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.from_settings:
            return False
        return super().has_delete_permission(request, obj)


@admin.register(WebhookMessage)
class WebhookMessageAdmin(ReadOnlyAdmin):
    list_display = ("id", "kind", "cause", "created_at")
    list_filter = ("kind",)
    search_fields = ("id", "cause")
    date_hierarchy = "created_at"


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "status",
        "endpoint",
        "message_kind",
        "message_id",
        "attempts",
        "next_attempt_at",
        "created_at",
        "finished_at",
        "detail",
    )
    list_filter = ("status", "message__kind", "endpoint")
    search_fields = ("message__id", "message__cause", "endpoint__url")
    list_select_related = ("message", "endpoint")
    date_hierarchy = "created_at"
    inlines = [WebhookAttemptInline]

    @admin.display(description="kind", ordering="message__kind")
    def message_kind(self, obj: WebhookDelivery) -> str:
        return obj.message.kind


@admin.register(PushDelivery)
class PushDeliveryAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "status",
        "device_kind",
        "target",
        "notification_kind",
        "user",
        "attempts",
        "next_attempt_at",
        "created_at",
        "finished_at",
        "detail",
    )
    list_filter = ("status", "device_kind", "notification__kind")
    search_fields = ("notification__user__username", "notification__cause", "target")
    list_select_related = ("notification", "notification__user")
    date_hierarchy = "created_at"
    inlines = [PushAttemptInline]

    @admin.display(description="kind", ordering="notification__kind")
    def notification_kind(self, obj: PushDelivery) -> str:
        return obj.notification.kind

    @admin.display(description="user", ordering="notification__user__username")
    def user(self, obj: PushDelivery) -> Any:
        return obj.notification.user


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin):
    list_display = ("id", "user", "kind", "cause", "game_id", "created_at", "read_at")
    list_filter = ("kind",)
    search_fields = ("user__username", "cause", "game_id")
    list_select_related = ("user",)
    date_hierarchy = "created_at"


@admin.register(Device)
class DeviceAdmin(ReadOnlyAdmin):
    # The token and the Web Push keys are what lets anyone push to the device: never shown.
    list_display = ("id", "user", "kind", "service", "session", "created_at")
    list_filter = ("kind",)
    search_fields = ("user__username",)
    list_select_related = ("user", "session")
    fields = ("id", "user", "kind", "service", "session", "created_at")
    readonly_fields = fields

    @admin.display(description="push service")
    def service(self, obj: Device) -> str:
        if obj.kind == Device.Kind.WEBPUSH:
            return urlsplit(obj.token).hostname or "?"
        return obj.get_kind_display()
