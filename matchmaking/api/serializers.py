"""The matchmaking API's shapes (typed in the schema)."""

from __future__ import annotations

from rest_framework import serializers

from accounts.api.serializers import USERNAME_MAX_LENGTH, RulesField
from core.api_fields import StrictBooleanField, StrictCharField
from games.api.serializers import RulesField as GameRulesField
from matchmaking.models import Member, Ticket
from matchmaking.services import MAX_BOTS_AFTER, MAX_FRIENDS


class BotsAfterField(serializers.FloatField):
    """Seconds, or null for people only; a JSON number only (no strings)."""

    default_error_messages = {"not_a_number": "A number of seconds, or null."}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("not_a_number")
        return super().to_internal_value(data)


class MatchTicketInputSerializer(serializers.Serializer):
    room = StrictCharField(
        max_length=32, help_text='A room\'s "key" of GET /rooms, e.g. "1000:50".'
    )
    rules = GameRulesField(
        required=False,
        default="standard",
        help_text='A preset ("standard", "house", "h19") or options as tables take them; the '
        "room's stake applies. Default: standard.",
    )
    rated = StrictBooleanField(required=False, default=True)
    bots_after = BotsAfterField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=MAX_BOTS_AFTER,
        help_text="Seconds to wait for people before bots of the room's level fill the table; "
        "null: people only. Default: the room's.",
    )
    with_ = serializers.ListField(
        child=StrictCharField(max_length=USERNAME_MAX_LENGTH),
        required=False,
        max_length=MAX_FRIENDS,
        help_text="Up to two friends' usernames: a party, which searches once they all join "
        "and always sits at one table.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["with"] = self.fields.pop("with_")


class MatchTicketMemberSerializer(serializers.Serializer):
    username = serializers.CharField()
    display_name = serializers.CharField()
    avatar = serializers.CharField(allow_null=True)
    owner = serializers.BooleanField(help_text="The person who asked for the table.")
    status = serializers.ChoiceField(choices=Member.Status.values)


class MatchTicketSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(
        choices=Ticket.Status.values,
        help_text="forming: a party waiting for its friends; searching; matched (game_id); "
        "cancelled (reason).",
    )
    reason = serializers.CharField(
        allow_null=True,
        help_text="cancelled: cancelled, member_left, member_declined, party_lapsed, "
        "insufficient_chips, already_seated.",
    )
    room = serializers.CharField()
    rules = RulesField()
    rated = serializers.BooleanField()
    bots_after = serializers.FloatField(allow_null=True)
    created_at = serializers.DateTimeField()
    searching_since = serializers.DateTimeField(allow_null=True)
    estimated_wait = serializers.FloatField(
        allow_null=True,
        help_text="Seconds a searching ticket can expect to wait (recent matches in the room); "
        "null when nothing tells.",
    )
    game_id = serializers.UUIDField(allow_null=True, help_text="matched: the table's game.")
    members = MatchTicketMemberSerializer(many=True)
