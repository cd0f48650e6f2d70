"""Input and output serializers of the chat API (no writes here: see ``chat.services``)."""

from __future__ import annotations

from rest_framework import serializers

from chat.models import Channel, Report
from core.api_fields import QuerySerializer, StrictCharField


class MessagePostInputSerializer(serializers.Serializer):
    text = StrictCharField(
        allow_blank=True,
        trim_whitespace=False,
        help_text="1 to TONGITS_CHAT_MAX_LENGTH (200) characters once stripped of surrounding "
        "spaces; no control or format character (Unicode Cc, Cf: newlines and tabs too).",
    )
    channel = serializers.ChoiceField(
        choices=Channel.choices,
        required=False,
        default=Channel.PLAYERS,
        help_text="players (default): seated players write here; spectators: readers without "
        "a seat, when the table allows spectator chat.",
    )


class ChatQuerySerializer(QuerySerializer):
    after = serializers.IntegerField(
        required=False, min_value=0, default=0, help_text="Only messages with a larger id."
    )


class HiddenSerializer(serializers.Serializer):
    by = serializers.CharField(help_text="The staff member who hid it.")
    at = serializers.DateTimeField()
    reason = serializers.CharField()


class MessageSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="Grows with every message of the server.")
    game_id = serializers.UUIDField()
    channel = serializers.ChoiceField(choices=Channel.choices)
    user_id = serializers.IntegerField()
    username = serializers.CharField(help_text='Shown now ("deleted player" once deleted).')
    display_name = serializers.CharField(help_text="The name the author chose (else the username).")
    avatar = serializers.CharField(
        allow_null=True, help_text="A key of GET /avatars (null: a deleted player)."
    )
    text = serializers.CharField(
        allow_null=True, help_text="null (staff only see these) once the author's account is gone."
    )
    created_at = serializers.DateTimeField()
    hidden = HiddenSerializer(
        allow_null=True,
        help_text="Staff only: who hid it, when, why (everyone else never receives a hidden "
        "message).",
    )


class ChatPageSerializer(serializers.Serializer):
    channels = serializers.ListField(
        child=serializers.ChoiceField(choices=Channel.choices),
        help_text="The channels you read here: players (players), spectators (spectators, when "
        "the table allows it), both (staff).",
    )
    writes = serializers.ChoiceField(
        choices=Channel.choices, allow_null=True, help_text="The channel you may write in."
    )
    closes_at = serializers.DateTimeField(
        allow_null=True,
        help_text="When the chat closes (TONGITS_CHAT_KEEP_SECONDS after the match ended; null "
        "while it runs).",
    )
    messages = MessageSerializer(many=True, help_text="Oldest first, at most 100.")
    more = serializers.BooleanField(help_text="More follow: ask again with after=<last id>.")


class ReportInputSerializer(serializers.Serializer):
    reason = serializers.ChoiceField(
        choices=Report.Reason.choices, required=False, default=Report.Reason.OTHER
    )


class ReportSerializer(serializers.Serializer):
    message_id = serializers.IntegerField()
    reason = serializers.ChoiceField(choices=Report.Reason.choices)
    at = serializers.DateTimeField()


class HideInputSerializer(serializers.Serializer):
    reason = StrictCharField(
        required=False, allow_blank=True, default="", max_length=200, help_text="For the log."
    )


class MuteSerializer(serializers.Serializer):
    username = serializers.CharField()
    created_at = serializers.DateTimeField()


class MuteListSerializer(serializers.Serializer):
    results = MuteSerializer(many=True, help_text="Newest first.")


# ---------------------------------------------------------------- /me/export's section


class ExportedMessageSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    game_id = serializers.UUIDField()
    channel = serializers.ChoiceField(choices=Channel.choices)
    text = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    hidden = serializers.BooleanField(help_text="Staff hid it from its readers.")


class ExportedReportSerializer(serializers.Serializer):
    message_id = serializers.IntegerField()
    game_id = serializers.UUIDField()
    reason = serializers.ChoiceField(choices=Report.Reason.choices)
    at = serializers.DateTimeField()


class ChatExportSerializer(serializers.Serializer):
    messages = ExportedMessageSerializer(
        many=True, help_text="Every message I wrote, oldest first."
    )
    mutes = MuteSerializer(many=True)
    reports = ExportedReportSerializer(many=True)
