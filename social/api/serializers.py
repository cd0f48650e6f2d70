"""Input and output serializers of the friends and blocks API (no writes here: see
``social.services``)."""

from __future__ import annotations

from rest_framework import serializers

from core.api_fields import StrictCharField
from social.selectors import FRIENDS, RECEIVED, SENT

USERNAME_MAX_LENGTH = 150
STATUSES = ("playing", "online", "offline")


class UsernameInputSerializer(serializers.Serializer):
    username = StrictCharField(max_length=USERNAME_MAX_LENGTH, help_text="Any case.")


class PresenceSerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=STATUSES,
        help_text="playing: seated at a match in play; online: a stream of theirs is open (the "
        "app is in use); offline: neither.",
    )
    game_id = serializers.UUIDField(
        allow_null=True, help_text="playing: the table, when it is public (else null)."
    )
    last_seen = serializers.DateTimeField(
        allow_null=True,
        help_text="offline: when their streams last came or went (null: not known).",
    )


class PersonSerializer(serializers.Serializer):
    username = serializers.CharField(help_text='Shown now ("deleted player" once deleted).')
    display_name = serializers.CharField()
    avatar = serializers.CharField(allow_null=True, help_text="A key of GET /avatars.")


class FriendSerializer(PersonSerializer):
    user_id = serializers.IntegerField(help_text="As in presence frames and notifications.")
    state = serializers.ChoiceField(
        choices=(FRIENDS, RECEIVED, SENT),
        help_text="friends; received: they asked you; sent: you asked them.",
    )
    since = serializers.DateTimeField(
        help_text="friends: when the request was accepted; a request: when it was sent."
    )
    presence = PresenceSerializer(
        allow_null=True,
        help_text="Friends only, unless they hide it (show_presence); null otherwise.",
    )


class FriendListSerializer(serializers.Serializer):
    friends = FriendSerializer(many=True, help_text="By display name.")
    received = FriendSerializer(many=True, help_text="Requests to you, newest first.")
    sent = FriendSerializer(many=True, help_text="Your requests, newest first.")


class BlockSerializer(PersonSerializer):
    created_at = serializers.DateTimeField()


class BlockListSerializer(serializers.Serializer):
    results = BlockSerializer(many=True, help_text="Newest first.")


# ---------------------------------------------------------------- /me/export's section


class ExportedPersonSerializer(PersonSerializer):
    user_id = serializers.IntegerField()
    since = serializers.DateTimeField()


class SocialExportSerializer(serializers.Serializer):
    show_presence = serializers.BooleanField()
    friends = ExportedPersonSerializer(many=True)
    requests_received = ExportedPersonSerializer(many=True)
    requests_sent = ExportedPersonSerializer(many=True)
    blocks = BlockSerializer(many=True)
