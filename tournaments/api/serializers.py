"""The tournaments API's shapes (typed in the schema)."""

from __future__ import annotations

from rest_framework import serializers

from core.api_fields import StrictBooleanField, StrictCharField, StrictIntegerField
from games.api.serializers import RulesField, RulesOutputField
from games.models import Game
from tournaments.models import Tournament


class TournamentInputSerializer(serializers.Serializer):
    name = StrictCharField(max_length=80)
    rules = RulesField(
        required=False,
        default="standard",
        help_text="The tables' rules: a preset or options (turn_seconds above 0).",
    )
    wins_to_match = StrictIntegerField(
        min_value=1, max_value=99, help_text="Rounds a table's match is played to."
    )
    entrants = StrictIntegerField(help_text="3, 9 or 27: one, two or three stages of tables.")
    buy_in = StrictIntegerField(min_value=0, default=0, help_text="Chips into the prize pool.")
    fee = StrictIntegerField(min_value=0, default=0, help_text="Chips to the house.")
    prizes = serializers.ListField(
        child=StrictIntegerField(min_value=1, max_value=100),
        required=False,
        help_text="Percent of the pool for places 1, 2, 3 (default [50, 30, 20]).",
    )
    bots = StrictBooleanField(
        required=False, default=False, help_text="Bots fill the empty seats at the start."
    )
    bot_level = serializers.ChoiceField(
        choices=["easy", "normal", "hard"], required=False, default="normal"
    )
    starts_at = serializers.DateTimeField(
        required=False, allow_null=True, default=None, help_text="Absent: a sit-and-go."
    )
    minimum = StrictIntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        max_value=27,
        help_text="A scheduled event with bots: people needed at starts_at (default 3); "
        "without bots every place must be taken.",
    )


class RegistrationInputSerializer(serializers.Serializer):
    seed = StrictCharField(
        required=False,
        max_length=64,
        help_text="Your own contribution to the draw (any text); a random one when absent.",
    )


class TournamentSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=Tournament.Status.values)
    reason = serializers.CharField(
        allow_null=True, help_text="cancelled: cancelled (staff) or below_minimum."
    )
    format = serializers.ChoiceField(choices=["sit_and_go", "scheduled"])
    rules = RulesOutputField()
    wins_to_match = serializers.IntegerField()
    entrants = serializers.IntegerField()
    minimum = serializers.IntegerField()
    registered = serializers.IntegerField()
    buy_in = serializers.IntegerField()
    fee = serializers.IntegerField()
    prizes = serializers.ListField(child=serializers.IntegerField())
    pool = serializers.IntegerField()
    bots = serializers.BooleanField()
    starts_at = serializers.DateTimeField(allow_null=True)
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    stage = serializers.IntegerField(help_text="The stage playing (0 before the start).")
    stages = serializers.IntegerField()
    seed_commitment = serializers.CharField(help_text="sha256 of the seating seed.")
    registered_me = serializers.BooleanField()


class EntrantSerializer(serializers.Serializer):
    entrant = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=["user", "bot"])
    user_id = serializers.IntegerField(allow_null=True)
    username = serializers.CharField(allow_null=True)
    level = serializers.CharField(allow_null=True)


class TableSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    entrants = serializers.ListField(child=serializers.IntegerField())
    game_id = serializers.UUIDField(allow_null=True)
    game_status = serializers.ChoiceField(choices=Game.Status.values, allow_null=True)
    winner = serializers.IntegerField(allow_null=True)
    ranking = serializers.ListField(child=serializers.IntegerField(), allow_null=True)


class StageSerializer(serializers.Serializer):
    stage = serializers.IntegerField()
    tables = TableSerializer(many=True)


class StandingSerializer(serializers.Serializer):
    entrant = serializers.IntegerField()
    place = serializers.IntegerField()


class PrizeSerializer(serializers.Serializer):
    place = serializers.IntegerField()
    entrant = serializers.IntegerField()
    user_id = serializers.IntegerField(allow_null=True, help_text="null: a bot (to the house).")
    amount = serializers.IntegerField()


class TournamentDetailSerializer(TournamentSerializer):
    entrants_list = EntrantSerializer(many=True)
    stages_list = StageSerializer(many=True)
    standings = StandingSerializer(many=True, allow_null=True)
    prize_entries = PrizeSerializer(many=True, allow_null=True)
    seed = serializers.CharField(allow_null=True, help_text="Revealed once finished.")
    manifest_fixed = serializers.BooleanField()
    escrow = serializers.IntegerField(help_text="Chips in the tournament's escrow now.")


class TournamentListSerializer(serializers.Serializer):
    results = TournamentSerializer(many=True)


class TournamentExportSerializer(serializers.Serializer):
    format = serializers.CharField(help_text='"tongits-tournament/1"')
    tournament = serializers.UUIDField()
    manifest = serializers.DictField()
    seed = serializers.CharField()
    tables = serializers.ListField(child=serializers.DictField())
    standings = StandingSerializer(many=True)
    prizes = PrizeSerializer(many=True)
    seal = serializers.DictField()
    keys = serializers.ListField(child=serializers.DictField())


class WeeklyStandingSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    user_id = serializers.IntegerField()
    username = serializers.CharField(allow_null=True)
    points = serializers.IntegerField(help_text="3 a match won, 1 a round won.")
    matches = serializers.IntegerField()
    wins = serializers.IntegerField()
    rounds_won = serializers.IntegerField()
    chips = serializers.IntegerField(help_text="Net chips over the week's matches.")
    reward = serializers.IntegerField(help_text="Chips the place pays (paid once archived).")


class WeeklyBoardSerializer(serializers.Serializer):
    room = serializers.CharField()
    week = serializers.CharField(help_text="The local date the week starts on.")
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField()
    current = serializers.BooleanField()
    archived = serializers.BooleanField(help_text="Final standings, rewards paid.")
    rewards = serializers.ListField(child=serializers.IntegerField())
    standings = WeeklyStandingSerializer(many=True)
    past_weeks = serializers.ListField(
        child=serializers.CharField(), help_text="Archived weeks of the room, newest first."
    )
