"""Writes to games (HackSoft styleguide: services write, selectors read).

Each service is one transaction: lock the game row, check, ask the rules core, append. Nothing
here knows a rule of Tongits; commands go to ``games.rules.decide`` and its ``IllegalMove`` comes
back as HTTP 422 with the same ``code``.

``submit_command`` is the one door for every move: a human's (``user=``) or a bot driver's
(``seat=`` of a bot seat, no user; ``play_bot_turn`` is that driver). What the server plays
itself (a bot's move, a turn's time-out, the next deal, the settlement) is queued by
``games.scheduling`` from ``_after_append``, on commit, and carried out by the services
``play_bot_turn``, ``expire_turn``, ``deal_next_round`` and ``settle`` that ``games.tasks`` calls.
Each takes the version it was queued for and does nothing (``Outcome.MOVED_ON``) if the game has
moved on, so a task run twice, late or out of order changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import uuid
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts import projections
from games import scheduling, selectors, store
from games.models import Event, Game, IdempotencyRecord, MatchResult, Seat
from games.rules import (
    GameState,
    IllegalMove,
    RuleSet,
    deal,
    decide,
    legal_commands,
    new_game,
    player_view,
    redact_event,
    time_out,
)
from games.rules.bots import get_bot
from tongits_site.api_errors import ApiError, Conflict

logger = logging.getLogger(__name__)

BOT_LEVELS = ("easy", "normal", "hard")
SYSTEM_ACTOR = "system"

#: Upper bounds on numeric rule options a client may set (the rules core only wants >= 0).
RULE_LIMITS = {
    "turn_seconds": 24 * 3600,
    "wins_to_match": 99,
    "turn_cap": 1000,
    "base": 1000,
    "tongits": 1000,
    "draw_won_challenged": 1000,
    "per_ace": 1000,
    "per_secret_set": 1000,
    "burned_penalty": 1000,
    "draw_folded": 1000,
    "stake": 1000,
}


# ---------------------------------------------------------------- errors


class InvalidRules(ApiError):
    default_code = "invalid_rules"
    default_detail = "Those rules are not valid."


class InvalidSeats(ApiError):
    default_code = "invalid_seats"
    default_detail = "A table has three seats: user, open or bot."


class UnknownUser(ApiError):
    default_code = "unknown_user"
    default_detail = "No user with that username."


class AlreadyStarted(Conflict):
    default_code = "already_started"
    default_detail = "The game at this table has already started."


class TableClosed(Conflict):
    default_code = "table_closed"
    default_detail = "This table was abandoned."


class TableFull(Conflict):
    default_code = "table_full"
    default_detail = "Every seat at this table is taken."


class SeatTaken(Conflict):
    default_code = "seat_taken"
    default_detail = "That seat is taken."


class AlreadySeated(Conflict):
    default_code = "already_seated"
    default_detail = "You already sit at this table."


class TableNotFull(Conflict):
    default_code = "table_not_full"
    default_detail = "Every seat must be taken (by a user or a bot) before the start."


class NotYourSeat(ApiError):
    status_code = 403
    default_code = "not_your_seat"
    default_detail = "You cannot act for that seat."


class IdempotencyKeyReused(ApiError):
    status_code = 422
    default_code = "idempotency_key_reused"
    default_detail = "This Idempotency-Key was used for a different request."


class MoveRefused(ApiError):
    """The rules refuse the command; ``code`` is the rules core's ``IllegalMove.code``."""

    status_code = 422
    default_code = "illegal_move"


# ---------------------------------------------------------------- tables


def rules_from(spec: str | dict[str, Any] | None) -> RuleSet:
    """A RuleSet from a preset name or options (optionally over ``"preset"``), bounded for play."""
    try:
        rules = RuleSet.from_dict(spec)
    except (ValueError, TypeError) as exc:
        raise InvalidRules(str(exc)) from None
    values = rules.to_dict()
    for name, limit in RULE_LIMITS.items():
        if (values.get(name) or 0) > limit:
            raise InvalidRules(f"{name} must be at most {limit}.")
    return rules


@transaction.atomic
def table_create(
    *,
    user: Any,
    rules: str | dict[str, Any] | None = None,
    seats: list[dict[str, Any]] | None = None,
) -> Game:
    """A table waiting for players. Seats: ``{"kind": "user"}`` (the creator), ``{"kind":
    "user", "username": ...}`` (that user, seated now), ``{"kind": "open"}``, ``{"kind": "bot",
    "level": "easy" | "normal" | "hard"}``. Default: the creator and two open seats."""
    ruleset = rules_from(rules)
    specs = seats if seats is not None else [{"kind": "user"}, {"kind": "open"}, {"kind": "open"}]
    if not isinstance(specs, list) or len(specs) != 3:
        raise InvalidSeats("Give exactly three seats.")
    game = Game.objects.create(rules=ruleset.to_dict(), created_by=user)
    now = timezone.now()
    taken: set[int] = set()
    user_model = get_user_model()
    rows = []
    for index, spec in enumerate(specs):
        kind = spec.get("kind") if isinstance(spec, dict) else None
        row = Seat(game=game, index=index)
        if kind == "user":
            username = spec.get("username")
            if username:
                try:
                    seated = user_model.objects.get(username__iexact=username)
                except user_model.DoesNotExist:
                    raise UnknownUser(f"No user named {username!r}.") from None
            else:
                seated = user
            if seated.pk in taken:
                raise InvalidSeats(f"{seated.username} cannot sit twice.")
            taken.add(seated.pk)
            row.user, row.joined_at = seated, now
        elif kind == "bot":
            level = spec.get("level", "normal")
            if level not in BOT_LEVELS:
                raise InvalidSeats(f"Bot level must be one of {', '.join(BOT_LEVELS)}.")
            row.bot_level = level
        elif kind != "open":
            raise InvalidSeats(f"Seat {index}: kind must be user, open or bot.")
        rows.append(row)
    Seat.objects.bulk_create(rows)
    if _quick_play(rows, user):
        _start(game, rows, user)
    return game


def _quick_play(seats: list[Seat], creator: Any) -> bool:
    """A table nobody else has to agree to (no open seat, no other user) starts at once."""
    return all(s.bot_level or s.user_id == creator.pk for s in seats)


def _lock_table(game_id: uuid.UUID | str) -> Game:
    game = store.get_game(game_id, lock=True)
    if game.status == Game.Status.ABANDONED:
        raise TableClosed()
    if game.status != Game.Status.WAITING:
        raise AlreadyStarted()
    return game


@transaction.atomic
def table_join(*, game_id: uuid.UUID | str, user: Any, seat: int | None = None) -> Game:
    """Take an open seat (the first one, or ``seat``) at a table that has not started."""
    game = _lock_table(game_id)
    seats = list(game.seats.order_by("index"))
    if any(s.user_id == user.pk for s in seats):
        raise AlreadySeated()
    if seat is not None:
        chosen = next((s for s in seats if s.index == seat), None)
        if chosen is None:
            raise InvalidSeats("Seats are 0, 1 and 2.")
        if chosen.kind != "open":
            raise SeatTaken()
    else:
        chosen = next((s for s in seats if s.kind == "open"), None)
        if chosen is None:
            raise TableFull()
    chosen.user, chosen.joined_at = user, timezone.now()
    chosen.save(update_fields=["user", "joined_at"])
    game.save(update_fields=["updated_at"])
    return game


@transaction.atomic
def table_leave(*, game_id: uuid.UUID | str, user: Any) -> Game:
    """Give up one's seat before the start; a table with no user left is abandoned."""
    game = _lock_table(game_id)
    seats = list(game.seats.order_by("index"))
    mine = next((s for s in seats if s.user_id == user.pk), None)
    if mine is None:
        raise selectors.NotAPlayer("You do not sit at this table.")
    mine.user, mine.joined_at = None, None
    mine.save(update_fields=["user", "joined_at"])
    if not any(s.user_id for s in seats if s is not mine):
        game.status = Game.Status.ABANDONED
    game.save(update_fields=["status", "updated_at"])
    return game


@transaction.atomic
def table_start(*, game_id: uuid.UUID | str, user: Any) -> Game:
    """Start the match once every seat is filled: ``game_started`` and the first deal.

    A seated user or the table's creator may start it. Shuffles with ``random.SystemRandom``.
    """
    game = _lock_table(game_id)
    seats = list(game.seats.select_related("user").order_by("index"))
    if user.pk != game.created_by_id and not any(s.user_id == user.pk for s in seats):
        raise selectors.NotAPlayer("You do not sit at this table.")
    if any(s.kind == "open" for s in seats):
        raise TableNotFull()
    return _start(game, seats, user)


def _start(game: Game, seats: list[Seat], user: Any) -> Game:
    """``game_started`` and the first deal on a locked (or just created) full table."""
    seat_dicts: list[dict[str, Any]] = []
    for s in seats:
        if s.bot_level:
            seat_dicts.append({"kind": "bot", "level": s.bot_level})
        else:
            seat_dicts.append({"kind": "user", "user_id": s.user_id, "username": s.user.username})
    rng = random.SystemRandom()
    # first_dealer "creator" (h19): the seat of the table's creator, else seat 0
    creator = next((s.index for s in seats if s.user_id and s.user_id == game.created_by_id), 0)
    started = new_game(RuleSet.from_dict(game.rules), seat_dicts, rng, creator_seat=creator)
    locked = store.Locked(game, None)
    store.append_locked(locked, [started], _user_actor(user))
    store.append_locked(locked, [deal(locked.state, rng)], SYSTEM_ACTOR)
    _after_append(locked)
    return locked.game


# ---------------------------------------------------------------- commands


@dataclass(frozen=True)
class CommandResult:
    """The answer to a command: HTTP status and JSON body (the same on an idempotent retry)."""

    status: int
    body: dict[str, Any]
    replayed: bool = False


def _user_actor(user: Any) -> str:
    return f"user:{user.pk}"


def _fingerprint(game_id: Any, seat: int | None, command: Any, expected_version: int) -> str:
    request = {
        "game": str(game_id),
        "seat": seat,
        "command": command,
        "expected_version": expected_version,
    }
    return hashlib.sha256(store.canonical_json(request).encode()).hexdigest()


def _replay_record(record: IdempotencyRecord, game_id: Any, fingerprint: str) -> CommandResult:
    if record.fingerprint != fingerprint or str(record.game_id) != str(game_id):
        raise IdempotencyKeyReused()
    return CommandResult(record.response_status, json.loads(record.response_body), True)


def _actor_seat(state: Any, user: Any, seat: int | None) -> tuple[int, str]:
    """(seat, actor) of the sender: a seated user, or the bot driver of a bot seat."""
    if user is not None:
        mine = selectors.seat_of(state, user)
        if mine is None:
            raise selectors.NotAPlayer()
        if seat is not None and seat != mine:
            raise NotYourSeat(f"You play seat {mine}, not seat {seat}.")
        return mine, _user_actor(user)
    if seat is None or not 0 <= seat <= 2 or state.seats[seat].get("kind") != "bot":
        raise NotYourSeat("Only a bot seat is played without a user.")
    return seat, f"bot:{state.seats[seat].get('level', 'normal')}"


def submit_command(
    *,
    game_id: uuid.UUID | str,
    command: dict[str, Any],
    expected_version: int,
    user: Any = None,
    seat: int | None = None,
    idempotency_key: str | None = None,
) -> CommandResult:
    """Play one command for a seat if the game is still at ``expected_version``.

    Order of refusals: 404 no game, 409 not started, 403 not a player / not your seat, 409 stale
    version, 422 the rules refuse. A repeated ``idempotency_key`` from the same user returns the
    stored first answer (only successful commands are stored: a refused one changed nothing).
    """
    fingerprint = _fingerprint(game_id, seat, command, expected_version)
    keyed = user is not None and bool(idempotency_key)

    def stored() -> CommandResult | None:
        if not keyed:
            return None
        record = IdempotencyRecord.objects.filter(user=user, key=idempotency_key).first()
        return _replay_record(record, game_id, fingerprint) if record is not None else None

    if (result := stored()) is not None:
        return result

    # Cheap refusals before taking the lock, so a crowd of stale requests does not queue on it.
    game = store.get_game(game_id)
    if game.version == 0:
        raise selectors.NotStarted()
    if game.version != expected_version:
        # A record is committed with the version it produced: look again now that we have
        # seen a newer version, or a twin request that just won would look like a conflict.
        if (result := stored()) is not None:
            return result
        _actor_seat(store.state_of(game), user, seat)
        raise store.StaleVersion(expected_version, game.version)

    with transaction.atomic():
        locked = store.lock(game_id)
        if (result := stored()) is not None:  # a twin committed while we waited for the lock
            return result
        game, state = locked.game, locked.state
        acting_seat, actor = _actor_seat(state, user, seat)
        if game.version != expected_version:
            raise store.StaleVersion(expected_version, game.version)
        try:
            events = decide(state, acting_seat, command)
        except IllegalMove as exc:
            raise MoveRefused(exc.detail, exc.code) from None
        except (ValueError, TypeError, KeyError, AttributeError):
            # decide should turn every malformed command into IllegalMove; log the miss.
            logger.exception("decide raised on command %r", command)
            raise MoveRefused("The command is malformed.", "bad_command") from None
        rows = store.append_locked(locked, events, actor)
        rows += _after_append(locked)
        body = _command_body(locked, rows, acting_seat)
        text = json.dumps(body, separators=(",", ":"))
        if keyed:
            try:
                with transaction.atomic():
                    IdempotencyRecord.objects.create(
                        user=user,
                        key=idempotency_key,
                        game=locked.game,
                        fingerprint=fingerprint,
                        response_status=200,
                        response_body=text,
                    )
            except IntegrityError:  # the same key, used at the same time on another game
                raise IdempotencyKeyReused() from None
    return CommandResult(200, json.loads(text))


def _after_append(locked: store.Locked) -> list[Event]:
    """Follow-ups of an append, in its transaction: queue the server's work on commit.

    The next deal is a task after ``TONGITS_NEXT_ROUND_DELAY_SECONDS``; a negative delay deals
    at once in this transaction instead (the API tests use it: they run without a worker).
    Returns the events appended here (the synchronous deal), if any.
    """
    rows: list[Event] = []
    state = locked.state
    if (
        state is not None
        and state.phase == "round_over"
        and settings.TONGITS_NEXT_ROUND_DELAY_SECONDS < 0
    ):
        rows = store.append_locked(locked, [deal(state, random.SystemRandom())], SYSTEM_ACTOR)
    scheduling.after_append(locked.game)
    return rows


def _command_body(locked: store.Locked, rows: list[Event], seat: int) -> dict[str, Any]:
    """What a command answers: the new events as the seat may see them, and the new view."""
    game, state = locked.game, locked.state
    reveal = game.status == Game.Status.FINISHED
    return {
        "version": game.version,
        "events": [selectors.feed_item(row, seat, reveal) for row in rows],
        "game": selectors.game_payload(game, state, seat),
    }


# ---------------------------------------------------------------- the server's own moves


class Outcome(StrEnum):
    """What a follow-up service did; the tasks return it, so the worker's log tells."""

    DONE = "done"
    MOVED_ON = "moved_on"  # the game is no longer at the version the work was queued for
    NOTHING = "nothing_to_do"  # at that version, there is nothing of this kind to do
    EARLY = "early"  # a time-out before the deadline: queued again for the deadline
    REFUSED = "refused"  # the rules refused a bot's command (a bot bug; the time-out covers it)


def play_bot_turn(*, game_id: uuid.UUID | str, expected_version: int) -> Outcome:
    """One command for the bot seat to act (or to answer a Draw), if the game is at that version.

    The bot sees what a player of its seat sees: ``player_view``, ``legal_commands`` and, if it
    ``uses_history``, its seat's redacted events of this round. It chooses without holding the
    row lock (a strong bot thinks for a while), then submits through ``submit_command`` like a
    human, so a move made meanwhile turns its command into a stale one, never a second move.
    The next command is queued on commit by ``_after_append``.
    """
    game = store.get_game(game_id)
    if game.version != expected_version:
        return Outcome.MOVED_ON
    state = store.state_of(game)
    if state is None or not state.in_round:
        return Outcome.NOTHING
    seat = state.turn
    spec = state.seats[seat]
    if spec.get("kind") != "bot":
        return Outcome.NOTHING
    legal = legal_commands(state, seat)
    if not legal:
        return Outcome.NOTHING
    bot = get_bot(spec.get("level", "normal"))
    rng = random.Random(random.SystemRandom().getrandbits(64))
    view = player_view(state, seat)
    if getattr(bot, "uses_history", False):
        command = bot.choose(view, legal, rng, history=_round_history(game, state, seat))
    else:
        command = bot.choose(view, legal, rng)
    try:
        submit_command(
            game_id=game.pk, seat=seat, command=command, expected_version=expected_version
        )
    except store.StaleVersion:
        return Outcome.MOVED_ON
    except MoveRefused as exc:
        logger.error(
            "bot %s refused at %s v%s: %r (%s)", bot.name, game.pk, game.version, command, exc.code
        )
        return Outcome.REFUSED
    return Outcome.DONE


def _round_history(game: Game, state: GameState, seat: int) -> list[dict[str, Any]]:
    """The seat's events of the current round (from its ``round_started``), redacted for it."""
    start = (
        Event.objects.filter(game_id=game.pk, type="round_started", seq__lte=state.version)
        .order_by("-seq")
        .values_list("seq", flat=True)
        .first()
    ) or 1
    rows = store.load_events(game.pk, after=start - 1, upto=state.version)
    return [redact_event(data, seat) for data in rows.values_list("data", flat=True)]


def expire_turn(*, game_id: uuid.UUID | str, expected_version: int) -> Outcome:
    """Play for the seat whose turn deadline passed (RULES.md "Time"), at that version only.

    Appends the rules core's ``time_out`` events (``turn_timed_out``, then the moves played for
    the seat; a pending Draw answer folds) as ``system``. Under the same row lock as a player's
    command, so a move and a time-out at the same version never both happen. Before the
    deadline (a task run early) it queues itself again for the deadline.
    """
    with transaction.atomic():
        locked = store.lock(game_id)
        game, state = locked.game, locked.state
        if game.version != expected_version:
            return Outcome.MOVED_ON
        if state is None or not state.in_round or game.turn_deadline is None:
            return Outcome.NOTHING
        if timezone.now() < game.turn_deadline:
            scheduling.expire_at_deadline(game)
            return Outcome.EARLY
        store.append_locked(locked, time_out(state), SYSTEM_ACTOR)
        _after_append(locked)
    return Outcome.DONE


def deal_next_round(*, game_id: uuid.UUID | str, expected_version: int) -> Outcome:
    """Deal the next round of a match whose round ended at that version."""
    with transaction.atomic():
        locked = store.lock(game_id)
        if locked.game.version != expected_version:
            return Outcome.MOVED_ON
        state = locked.state
        if state is None or state.phase not in ("dealing", "round_over"):
            return Outcome.NOTHING
        store.append_locked(locked, [deal(state, random.SystemRandom())], SYSTEM_ACTOR)
        _after_append(locked)
    return Outcome.DONE


def placements(round_wins: list[int], chips: list[int]) -> list[int]:
    """1 to 3 per seat: by rounds won, then chips; equal seats share the better place."""
    keys = list(zip(round_wins, chips, strict=True))
    return [1 + sum(other > key for other in keys) for key in keys]


@transaction.atomic
def settle(*, game_id: uuid.UUID | str) -> list[MatchResult]:
    """Record a finished match's result per seat (``MatchResult``), once.

    Idempotent: under the game's row lock, rows that exist are kept as they are (and the
    unique (game, seat) constraint backs that up), so a redelivered task changes nothing.
    A match that has not ended gets no rows (``[]``).
    """
    game = store.get_game(game_id, lock=True)
    state = store.state_of(game)
    if state is None or state.phase != "match_over":
        return []
    settled_at = game.settled_at or timezone.now()
    wins, chips = list(state.round_wins), list(state.chips)
    places = placements(wins, chips)
    seats = {s.index: s for s in game.seats.all()}
    results = []
    for index in range(3):
        row = seats.get(index)
        result, _ = MatchResult.objects.get_or_create(
            game=game,
            seat=index,
            defaults={
                "user_id": row.user_id if row else None,
                "bot_level": row.bot_level if row else "",
                "placement": places[index],
                "rounds_won": wins[index],
                "chips": chips[index],
                "settled_at": settled_at,
            },
        )
        results.append(result)
    projections.project_match(game.pk)  # history, stats, ratings: idempotent like the rows above
    if game.settled_at is None or game.awaiting or game.status != Game.Status.FINISHED:
        game.settled_at = settled_at
        game.status = Game.Status.FINISHED
        game.awaiting = Game.Awaiting.NONE
        game.save(update_fields=["settled_at", "status", "awaiting", "updated_at"])
    return results
