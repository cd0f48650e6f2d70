"""The inbox API's shapes (typed in the schema)."""

from __future__ import annotations

from django.utils.translation import gettext as _
from rest_framework import serializers

from core.api_fields import QuerySerializer, StrictBooleanField
from notifications.models import Kind


class NotificationSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="Newer notifications have larger ids.")
    kind = serializers.ChoiceField(choices=Kind.choices)
    game_id = serializers.UUIDField(allow_null=True, help_text="The table it concerns, if any.")
    data = serializers.DictField(
        help_text="Per kind: ids, seats, amounts, usernames' ids; never a card "
        "(docs/notifications.md)."
    )
    created_at = serializers.DateTimeField(help_text="When its cause was committed.")
    read = serializers.BooleanField()
    title = serializers.CharField(
        help_text="A short title to show, in the answer's language (as a push of it says)."
    )
    body = serializers.CharField(
        help_text="One sentence to show, in the answer's language: ids, flags and usernames "
        "only, never a card or an amount."
    )


class NotificationPageSerializer(serializers.Serializer):
    next = serializers.CharField(allow_null=True, help_text="The next (older) page, or null.")
    previous = serializers.CharField(allow_null=True)
    unread = serializers.IntegerField(help_text="How many of mine are unread, in all.")
    results = NotificationSerializer(many=True)


class NotificationQuerySerializer(QuerySerializer):
    cursor = serializers.CharField(required=False, help_text="From a page's next/previous.")
    page_size = serializers.IntegerField(required=False, min_value=1, max_value=100)
    unread = serializers.BooleanField(required=False, help_text="Only the unread ones.")


class MarkReadInputSerializer(serializers.Serializer):
    ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        required=False,
        max_length=500,
        help_text="The notifications to mark read; leave out with all: true.",
    )
    all = StrictBooleanField(required=False, default=False, help_text="Mark every one read.")

    def validate(self, attrs: dict) -> dict:
        if attrs.get("all") == ("ids" in attrs):
            raise serializers.ValidationError({"ids": [_("Give ids, or all: true (not both).")]})
        return attrs


class MarkReadOutputSerializer(serializers.Serializer):
    marked = serializers.IntegerField(help_text="How many changed from unread to read.")
    unread = serializers.IntegerField()
