"""Input and output serializers of the games API (no writes here: see ``games.play``).

Input serializers check the *shape* of a request (400 ``invalid``); whether a command is legal
is the rules core's question (422). The output serializers of game payloads document bodies that
``games.selectors`` builds as plain JSON (so an idempotent retry can return the same bytes).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.fields import SkipField

from chips.api.serializers import SettlementSerializer
from core.api_fields import (
    QuerySerializer,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictIntegerField,
    StrictRegexField,
)
from games.api.commands import MAX_VERSION, CommandField, CommandListField, InputSerializer
from games.api.event_schemas import (
    EVENT_SERIALIZERS,
    MELD_KINDS,
    EventDataField,
    EventTypeField,
    cards_field,
    rules_serializer,
)
from games.lobby import BOT_LEVELS
from games.models import MAX_SPECTATOR_DELAY, Game
from games.rules import PHASES, RuleSet
from games.rules.ruleset import DRAW_CALL_TIMINGS, FIRST_DEALERS, STOCK_OUT_TIES

# ---------------------------------------------------------------- rules and seats


class RuleOptionsSerializer(serializers.Serializer):
    """Every option of a variant (docs/rules.md "Variants"); on input, any subset over a preset."""

    preset = serializers.ChoiceField(
        choices=RuleSet.PRESETS, required=False, help_text="Start from this preset."
    )
    ace_high_runs = StrictBooleanField(required=False)
    take_discard_to_lay_off = StrictBooleanField(required=False)
    draw_call = StrictBooleanField(required=False)
    secret_sets = StrictBooleanField(required=False)
    burning = StrictBooleanField(required=False)
    stock_out_tie = serializers.ChoiceField(choices=STOCK_OUT_TIES, required=False)
    draw_call_timing = serializers.ChoiceField(choices=DRAW_CALL_TIMINGS, required=False)
    first_dealer = serializers.ChoiceField(choices=FIRST_DEALERS, required=False)
    wins_to_match = StrictIntegerField(min_value=1, max_value=99, required=False)
    turn_seconds = StrictIntegerField(
        min_value=0, max_value=86400, required=False, help_text="0 turns time limits off."
    )
    turn_cap = StrictIntegerField(min_value=1, max_value=1000, required=False)
    base = StrictIntegerField(min_value=0, max_value=1000, required=False)
    tongits = StrictIntegerField(min_value=0, max_value=1000, required=False)
    draw_won_challenged = StrictIntegerField(min_value=0, max_value=1000, required=False)
    per_ace = StrictIntegerField(min_value=0, max_value=1000, required=False)
    per_secret_set = StrictIntegerField(min_value=0, max_value=1000, required=False)
    burned_penalty = StrictIntegerField(min_value=0, max_value=1000, required=False)
    draw_folded = StrictIntegerField(
        min_value=0,
        max_value=1000,
        required=False,
        allow_null=True,
        help_text="What a folder pays the winner of a challenged Draw; null: as the challengers.",
    )
    stake = StrictIntegerField(
        min_value=1, max_value=1000, required=False, help_text="Multiplies every payout."
    )


class RulesField(serializers.Field):
    """A preset name or an object of options; the service checks the values."""

    default_error_messages = {
        "type": gettext_lazy("Give a preset name or an object of rule options.")
    }

    def to_internal_value(self, data):
        if isinstance(data, str):
            return data
        if isinstance(data, dict):
            options = RuleOptionsSerializer(data=data)
            options.is_valid(raise_exception=True)
            unknown = sorted(set(data) - set(options.fields))
            if unknown:
                raise serializers.ValidationError(
                    _("Unknown rule options: %(names)s.") % {"names": ", ".join(unknown)}
                )
            return dict(options.validated_data)
        self.fail("type")

    def to_representation(self, value):
        return value


class RulesFieldSchema(OpenApiSerializerFieldExtension):
    """``RulesField``: a preset name or a ``RuleOptions`` object (registered as a component)."""

    target_class = "games.api.serializers.RulesField"

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict[str, Any]:
        options = auto_schema.resolve_serializer(RuleOptionsSerializer, direction).ref
        return {
            "oneOf": [{"type": "string", "enum": list(RuleSet.PRESETS)}, options],
            "description": 'A preset name ("standard", "house", "h19") or options over a preset.',
        }


@extend_schema_field(rules_serializer())
class RulesOutputField(serializers.DictField):
    """Every option of the table's RuleSet, as stored (options added later included)."""


class SeatInputSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=["user", "open", "bot"],
        help_text='"user": you (or the user named by username), "open": anyone may join, '
        '"bot": a bot of the given level.',
    )
    username = StrictCharField(
        max_length=150, required=False, help_text='With kind "user": seat this user now.'
    )
    level = serializers.ChoiceField(
        choices=BOT_LEVELS,
        required=False,
        default="normal",
        help_text='With kind "bot": its level; GET tables/options gives each one\'s rating.',
    )


class TableCreateInputSerializer(serializers.Serializer):
    rules = RulesField(required=False, default="standard")
    rated = StrictBooleanField(
        required=False,
        default=True,
        help_text="Rated (default): the match changes ratings, and turn_seconds must be at "
        "least 10 or 0. Casual (false): no rating changes.",
    )
    seats = SeatInputSerializer(
        many=True,
        required=False,
        min_length=3,
        max_length=3,
        help_text="Exactly three; default: you and two open seats.",
    )
    buy_in = StrictIntegerField(
        required=False,
        default=0,
        min_value=0,
        max_value=settings.TONGITS_MAX_BUY_IN,
        help_text="Table stakes: chips each seat puts in escrow at the start (a bot's from the "
        "house), and the most anyone can lose in the match (docs/chips.md). 0 (default): no "
        "chips at stake. 409 `insufficient_chips` (with `seat`) when a wallet cannot cover it. "
        "Quick play's rooms: GET /rooms.",
    )
    visibility = serializers.ChoiceField(
        choices=Game.Visibility.values,
        required=False,
        default=Game.Visibility.PRIVATE,
        help_text="Who may watch: private (default: the players only), unlisted (anyone signed "
        "in who has the link), public (also listed by GET /tables?watch=1).",
    )
    spectator_delay = StrictIntegerField(
        required=False,
        default=0,
        min_value=0,
        max_value=MAX_SPECTATOR_DELAY,
        help_text="Spectators see the running match this many events behind (0: live), so "
        "nobody can relay the table to a player; everything once it is over.",
    )
    spectator_chat = StrictBooleanField(
        required=False,
        default=False,
        help_text="Spectators may read and write the table chat's spectators' channel.",
    )


class BotLevelSerializer(serializers.Serializer):
    level = serializers.ChoiceField(choices=BOT_LEVELS, help_text="A bot seat's level.")
    summary = serializers.CharField(help_text="How the level plays, in a sentence.")
    rating = serializers.FloatField(
        help_text="mu - 3 sigma: the conservative rating players' leaderboard sorts by."
    )
    mu = serializers.FloatField(
        help_text="openskill (Plackett-Luce) skill from the levels' tournament, on the scale "
        "of players' ratings (a new player starts at 25)."
    )
    sigma = serializers.FloatField(help_text="Uncertainty of mu.")


class PresetSerializer(serializers.Serializer):
    name = serializers.CharField(help_text='A preset a table\'s "rules" may name.')
    rules = RulesOutputField(help_text="Every option of the preset.")


class TableOptionsSerializer(serializers.Serializer):
    presets = PresetSerializer(many=True)
    bot_levels = BotLevelSerializer(many=True, help_text="Weakest first.")


class RoomSerializer(serializers.Serializer):
    key = serializers.CharField(help_text='"buy_in:stake": the room a matchmaking ticket names.')
    buy_in = serializers.IntegerField(help_text="Chips each seat escrows: the most one can lose.")
    stake = serializers.IntegerField(help_text="Multiplies every payout (rules.stake).")
    bot_level = serializers.ChoiceField(
        choices=BOT_LEVELS, help_text="The level of the bots the matchmaker seats here."
    )
    bots_after = serializers.FloatField(
        help_text="Seconds a matchmaking ticket waits for people before bots fill the table, "
        "unless it says otherwise."
    )
    fee_percent = serializers.IntegerField(
        help_text="The service fee: this percent of each winner's winnings goes to the house "
        "when a match here is settled (0: none)."
    )
    affordable = serializers.BooleanField(
        help_text="Your wallet covers the buy-in now (and you owe no chips)."
    )


class InvitationInputSerializer(serializers.Serializer):
    answer = serializers.ChoiceField(
        choices=["accept", "decline"],
        help_text="accept: take the seat you were invited to; decline: the seat becomes open.",
    )


class RematchAnswerInputSerializer(serializers.Serializer):
    answer = StrictChoiceField(
        choices=["accept", "decline"],
        help_text="accept: play the match again (409 insufficient_chips if your wallet cannot "
        "cover the buy-in); decline: no rematch.",
    )


class RematchPersonSerializer(serializers.Serializer):
    seat = serializers.IntegerField(help_text="The seat, the same in the next match.")
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    answer = serializers.ChoiceField(choices=["accepted", "declined", "pending"])


class RematchSerializer(serializers.Serializer):
    """A proposal to play a finished match again, and what became of it."""

    game_id = serializers.UUIDField(help_text="The finished match.")
    status = serializers.ChoiceField(
        choices=["open", "started", "declined", "lapsed"],
        help_text="open: waiting for answers; started: everyone accepted (next_game_id); "
        "declined: someone declined; lapsed: not everyone accepted in time.",
    )
    proposed_by = serializers.CharField(allow_null=True)
    answers = RematchPersonSerializer(
        many=True,
        help_text="Each person of the match (bots need no asking); the proposer's is accepted.",
    )
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(help_text="When an open proposal lapses.")
    next_game_id = serializers.UUIDField(
        allow_null=True, help_text="The rematch's game, once started (its rematch_of is this)."
    )


class TableJoinInputSerializer(serializers.Serializer):
    seat = StrictIntegerField(
        min_value=0,
        max_value=2,
        required=False,
        allow_null=True,
        help_text="A particular open seat; default: the first open one.",
    )


class TableListQuerySerializer(QuerySerializer):
    status = serializers.ChoiceField(choices=Game.Status.values, default=Game.Status.WAITING)
    watch = serializers.BooleanField(
        required=False,
        default=False,
        help_text="1: the running public tables to watch (status active, visibility public), "
        "newest first, with their spectator counts, whatever status says.",
    )
    limit = serializers.IntegerField(min_value=1, max_value=200, default=50)
    offset = serializers.IntegerField(min_value=0, max_value=1_000_000, default=0)


class SeatAvatarField(serializers.CharField):
    """A user seat's avatar key, null for a deleted player, absent from other seats (DRF would
    write null for a nullable field the seat lacks)."""

    def get_attribute(self, instance: Any) -> Any:
        if isinstance(instance, dict) and self.source not in instance:
            raise SkipField()
        return super().get_attribute(instance)


class SeatOutputSerializer(serializers.Serializer):
    seat = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=["user", "open", "bot"])
    user_id = serializers.IntegerField(required=False)
    username = serializers.CharField(required=False)
    display_name = serializers.CharField(
        required=False, help_text="User seats: the name the player chose (else the username)."
    )
    avatar = SeatAvatarField(
        required=False,
        allow_null=True,
        help_text="User seats: a key of GET /avatars (null: a deleted player).",
    )
    level = serializers.ChoiceField(choices=BOT_LEVELS, required=False)
    invitation = serializers.ChoiceField(
        choices=["pending", "accepted"],
        required=False,
        help_text="A seat given by name: pending until that user accepts (the table cannot "
        "start before), then accepted.",
    )


class TableOutputSerializer(serializers.Serializer):
    """A table (its id is also the game's id once started)."""

    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=Game.Status.values)
    rules = RulesOutputField()
    seats = SeatOutputSerializer(many=True)
    created_by = serializers.CharField(allow_null=True)
    rated = serializers.BooleanField(help_text="false: a casual table (no rating changes).")
    buy_in = serializers.IntegerField(help_text="Chips each seat escrows at the start; 0: none.")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    version = serializers.IntegerField()
    phase = serializers.ChoiceField(choices=PHASES)
    round = serializers.IntegerField()
    current_seat = serializers.IntegerField(allow_null=True)
    turn_deadline = serializers.DateTimeField(allow_null=True)
    winner_seat = serializers.IntegerField(allow_null=True)
    rematch = RematchSerializer(
        allow_null=True,
        help_text="A finished match's rematch proposal, if any (GET "
        "/games/{id}/rematch): who answered what, and the next game once it started.",
    )
    rematch_of = serializers.UUIDField(
        allow_null=True, help_text="The match this table is the rematch of."
    )
    visibility = serializers.ChoiceField(
        choices=Game.Visibility.values,
        help_text="private: players only; unlisted: anyone with the link may watch; public: "
        "listed too (GET /tables?watch=1).",
    )
    spectator_delay = serializers.IntegerField(
        help_text="Events spectators are held behind the running match (0: live)."
    )
    spectator_chat = serializers.BooleanField(
        help_text="Spectators have the table chat's spectators' channel."
    )
    spectators = serializers.IntegerField(
        help_text="Spectator streams open on the table now (counted every few seconds)."
    )


# ---------------------------------------------------------------- commands


class CommandInputSerializer(InputSerializer):
    command = CommandField()
    expected_version = StrictIntegerField(
        min_value=0,
        max_value=MAX_VERSION,
        help_text="The version your view showed; 409 stale_version if the game moved on.",
    )
    seat = StrictIntegerField(
        min_value=0,
        max_value=2,
        required=False,
        allow_null=True,
        help_text="Optional: the seat you act for (403 not_your_seat if it is not yours).",
    )
    client_seed = StrictRegexField(
        r"^[A-Za-z0-9_-]{1,64}$",
        required=False,
        help_text="Optional: your seed for the next deal's shuffle, recorded (a "
        "`client_seed_set` event) before the command's events. See POST /games/{id}/seed.",
    )


class SeedInputSerializer(serializers.Serializer):
    client_seed = StrictRegexField(
        r"^[A-Za-z0-9_-]{1,64}$",
        help_text="1 to 64 of A-Z a-z 0-9 _ -: mixed into the next deal's shuffle with the "
        "server's committed seed and the other seats' (docs/verifying.md).",
    )
    expected_version = StrictIntegerField(
        min_value=0,
        max_value=MAX_VERSION,
        required=False,
        help_text="Optional: 409 stale_version if the game moved on (e.g. the deal happened).",
    )


class EventsQuerySerializer(QuerySerializer):
    after = serializers.IntegerField(
        min_value=0, max_value=MAX_VERSION, default=0, help_text="Events with seq > after."
    )
    limit = serializers.IntegerField(min_value=1, max_value=1000, default=1000)


class ReplayQuerySerializer(QuerySerializer):
    at = serializers.IntegerField(
        min_value=1,
        max_value=MAX_VERSION,
        required=False,
        help_text="Step (number of events); default: the latest.",
    )


# ---------------------------------------------------------------- game payloads (documentation)


class MeldSerializer(serializers.Serializer):
    meld_id = serializers.IntegerField()
    owner = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=MELD_KINDS)
    cards = cards_field(allow_null=True, help_text="null: another's secret set.")
    hidden = serializers.BooleanField()
    size = serializers.IntegerField()


class DrawCallAnswerSerializer(serializers.Serializer):
    seat = serializers.IntegerField()
    answer = serializers.ChoiceField(choices=["challenge", "fold"])


class DrawCallSerializer(serializers.Serializer):
    caller = serializers.IntegerField()
    answers = DrawCallAnswerSerializer(many=True, help_text="The answers so far, in order.")


class PlayerViewSerializer(serializers.Serializer):
    """The game as one seat sees it (``games.rules.player_view``)."""

    seat = serializers.IntegerField(allow_null=True)
    phase = serializers.ChoiceField(choices=PHASES)
    round = serializers.IntegerField()
    dealer = serializers.IntegerField()
    turn = serializers.IntegerField(allow_null=True, help_text="Seat to act or to answer.")
    hand = cards_field(help_text="Your cards.")
    deadwood = serializers.IntegerField(allow_null=True)
    melds = MeldSerializer(many=True)
    discard_pile = cards_field(help_text="Top last.")
    stock_count = serializers.IntegerField()
    hand_counts = serializers.ListField(child=serializers.IntegerField())
    opened = serializers.ListField(child=serializers.BooleanField())
    blocked = serializers.ListField(child=serializers.IntegerField())
    turns = serializers.IntegerField()
    round_wins = serializers.ListField(child=serializers.IntegerField())
    chips = serializers.ListField(
        child=serializers.IntegerField(), help_text="Per seat: the rounds' payouts so far."
    )
    buy_in = serializers.IntegerField(
        help_text="Table stakes: each seat's chips in escrow, the most it can lose (0: none)."
    )
    last_round = EVENT_SERIALIZERS["round_ended"](
        allow_null=True, help_text="The last round_ended event."
    )
    match_winner = serializers.IntegerField(allow_null=True)
    draw_call = DrawCallSerializer(allow_null=True)
    rules = rules_serializer()()
    hands = serializers.ListField(
        child=cards_field(), required=False, help_text="Every hand, once the round is over."
    )
    stock = cards_field(required=False, help_text="Revealed views only.")
    salt = serializers.CharField(
        required=False, allow_blank=True, help_text="Revealed views only: the deal's salt."
    )


class GamePayloadSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=Game.Status.values)
    settled = serializers.BooleanField(
        help_text="Nothing is left to book: the match's result (stats, ratings, chips) is "
        "written, or it was aborted with no chips at stake. A match that just ended is "
        '"finished" and not yet settled; its stream ends once it is (an aborted table\'s '
        "stream ends at once)."
    )
    version = serializers.IntegerField(help_text="Send it back as expected_version.")
    seat = serializers.IntegerField(allow_null=True, help_text="Your seat (null: not playing).")
    turn_deadline = serializers.DateTimeField(allow_null=True)
    seats = SeatOutputSerializer(many=True)
    view = PlayerViewSerializer()
    legal_commands = CommandListField(help_text="Every command you may send.")
    revealed = PlayerViewSerializer(
        required=False, help_text="After the match: everything (every hand, the stock)."
    )
    server_time = serializers.DateTimeField(
        required=False,
        help_text="The server's clock when it answered (GET /games/{id} and the stream's "
        "view): compare with turn_deadline.",
    )


class EventItemSerializer(serializers.Serializer):
    seq = serializers.IntegerField()
    type = EventTypeField()
    actor = serializers.CharField(help_text="user:<id>, bot:<level> or system.")
    recorded_at = serializers.DateTimeField()
    prev_hash = serializers.CharField(help_text="The previous event's hash (64 zeros for seq 1).")
    hash = serializers.CharField(
        help_text="The receipt: sha256 of prev_hash and the whole event (docs/verifying.md). "
        "Keep it: a later export must hold an event with this seq and hash."
    )
    data = EventDataField(
        help_text="The event, with fields hidden from you removed. A deal, a draw or a secret "
        "set carries a random `nonce` (32 hex digits), shown and hidden with its content."
    )


class CommandResultSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    events = EventItemSerializer(many=True, help_text="The events your command caused.")
    game = GamePayloadSerializer()


class EventFeedSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    seat = serializers.IntegerField(allow_null=True)
    events = EventItemSerializer(many=True)
    more = serializers.BooleanField(help_text="More events follow: ask again after the last seq.")
    game = GamePayloadSerializer(
        required=False,
        help_text="With `wait` (a long-poll): your view at `version`, the same object as the "
        "stream's `view` frame.",
    )


class ReplaySerializer(serializers.Serializer):
    at = serializers.IntegerField()
    version = serializers.IntegerField()
    seat = serializers.IntegerField(allow_null=True)
    revealed = serializers.BooleanField()
    view = PlayerViewSerializer()


class RoundAuditSerializer(serializers.Serializer):
    round = serializers.IntegerField(allow_null=True)
    seq = serializers.IntegerField()
    deck_commitment = serializers.CharField(allow_null=True)
    commitment_ok = serializers.BooleanField()
    salt = serializers.CharField(
        required=False, allow_null=True, help_text="After the match: the deal's salt."
    )
    hands = serializers.ListField(
        child=cards_field(), required=False, allow_null=True, help_text="After the match."
    )
    stock = cards_field(required=False, allow_null=True, help_text="After the match.")


class AuditFailureSerializer(serializers.Serializer):
    seq = serializers.IntegerField(allow_null=True, help_text="The first bad seq (null: the game).")
    check = serializers.ChoiceField(
        choices=["chain", "legality", "commitment", "cards", "seal", "format"]
    )
    reason = serializers.CharField()


class AuditSettlementSerializer(SettlementSerializer):
    problems = serializers.ListField(
        child=serializers.CharField(),
        help_text="How the ledger differs from the events (empty: they agree).",
    )


class AuditSerializer(serializers.Serializer):
    game_id = serializers.UUIDField()
    version = serializers.IntegerField()
    revealed = serializers.BooleanField()
    chain_ok = serializers.BooleanField()
    first_broken_seq = serializers.IntegerField(allow_null=True)
    rounds = RoundAuditSerializer(many=True)
    commitments_ok = serializers.BooleanField()
    snapshot_ok = serializers.BooleanField(allow_null=True)
    legal_ok = serializers.BooleanField(
        allow_null=True,
        help_text="Every event is what the rules give in the state before it, and the 52 cards "
        "are each in one place after every event (null: the chain is broken).",
    )
    seal_ok = serializers.BooleanField(
        allow_null=True, help_text="The match's seal verifies (null: the match is not over)."
    )
    failure = AuditFailureSerializer(allow_null=True)
    settlement = AuditSettlementSerializer(
        allow_null=True, help_text="Table stakes (docs/chips.md); null: no chips at stake."
    )
    settlement_ok = serializers.BooleanField(
        allow_null=True,
        help_text="The ledger's buy-ins and payout are what the events say under the "
        "table-stakes rule (null: no chips at stake).",
    )
    sound = serializers.BooleanField(help_text="Every check holds.")


class ExportEventSerializer(serializers.Serializer):
    seq = serializers.IntegerField()
    type = serializers.CharField()
    actor = serializers.CharField()
    recorded_at = serializers.CharField(help_text="ISO 8601, exactly the text that is hashed.")
    prev_hash = serializers.CharField()
    hash = serializers.CharField()
    nonce = serializers.CharField(
        allow_null=True, help_text="The event's nonce (also in data), when you may see it."
    )
    data = EventDataField(help_text="The whole event after the match; while it runs, as the feed.")


class ExportDealSerializer(serializers.Serializer):
    round = serializers.IntegerField(allow_null=True)
    seq = serializers.IntegerField()
    deck_commitment = serializers.CharField(allow_null=True)
    salt = serializers.CharField(required=False, allow_null=True)


class SealSerializer(serializers.Serializer):
    key_id = serializers.CharField()
    algorithm = serializers.ChoiceField(choices=["ed25519"])
    game = serializers.UUIDField()
    version = serializers.IntegerField()
    hash = serializers.CharField()
    rules_digest = serializers.CharField()
    signature = serializers.CharField(help_text="Ed25519 over the canonical JSON, hex.")
    signed_at = serializers.DateTimeField()


class PublicKeySerializer(serializers.Serializer):
    id = serializers.CharField(help_text="sha256 of the key's hex text, first 16 hex digits.")
    algorithm = serializers.ChoiceField(choices=["ed25519"])
    public_key = serializers.CharField(help_text="The raw 32-byte public key, hex.")
    valid_from = serializers.DateTimeField()
    valid_to = serializers.DateTimeField(allow_null=True)


class PublicKeysSerializer(serializers.Serializer):
    keys = PublicKeySerializer(many=True)


class ExportSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=["tongits-export/1"])
    game = serializers.UUIDField()
    status = serializers.CharField()
    version = serializers.IntegerField()
    revealed = serializers.BooleanField(help_text="The match is over: nothing is redacted.")
    seat = serializers.IntegerField(allow_null=True)
    rules = serializers.DictField()
    rules_digest = serializers.CharField()
    seats = serializers.ListField(child=serializers.DictField())
    events = ExportEventSerializer(many=True)
    deals = ExportDealSerializer(many=True)
    seal = SealSerializer(allow_null=True)
    keys = PublicKeySerializer(many=True)
