"""Writes to games (HackSoft styleguide: services write, selectors read).

Each service is one transaction: lock the game row, check, ask the rules core, append. Nothing
here knows a rule of Tongits; commands go to ``games.rules.decide`` and its ``IllegalMove`` comes
back as HTTP 422 with the same ``code``.

``submit_command`` is the one door for every move: a human's (``user=``) or a bot driver's
(``seat=`` of a bot seat, no user). Follow-ups that the rules do not make themselves (dealing the
next round) live in ``_after_append`` so a task queue can take them over in one place.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import uuid
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from games import selectors, store
from games.models import Event, Game, IdempotencyRecord, Seat
from games.rules import IllegalMove, RuleSet, deal, decide, new_game
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
        if values.get(name, 0) > limit:
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
    return game


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
    seat_dicts: list[dict[str, Any]] = []
    for s in seats:
        if s.bot_level:
            seat_dicts.append({"kind": "bot", "level": s.bot_level})
        else:
            seat_dicts.append({"kind": "user", "user_id": s.user_id, "username": s.user.username})
    rng = random.SystemRandom()
    locked = store.Locked(game, None)
    store.append_locked(
        locked, [new_game(RuleSet.from_dict(game.rules), seat_dicts, rng)], _user_actor(user)
    )
    store.append_locked(locked, [deal(locked.state, rng)], SYSTEM_ACTOR)
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
    """Follow-ups the server plays itself after a command, in the same transaction for now.

    A round that ended without ending the match is followed by the next deal. (The Celery
    issue moves this to a task scheduled on commit; bot turns and time-outs will start here.)
    """
    state = locked.state
    if state is not None and state.phase == "round_over":
        return store.append_locked(locked, [deal(state, random.SystemRandom())], SYSTEM_ACTOR)
    return []


def _command_body(locked: store.Locked, rows: list[Event], seat: int) -> dict[str, Any]:
    """What a command answers: the new events as the seat may see them, and the new view."""
    game, state = locked.game, locked.state
    reveal = game.status == Game.Status.FINISHED
    return {
        "version": game.version,
        "events": [selectors.feed_item(row, seat, reveal) for row in rows],
        "game": selectors.game_payload(game, state, seat),
    }
