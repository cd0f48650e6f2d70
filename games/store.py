"""The event store: append with an expected version, load from the snapshot, verify the chain.

Every game is an append-only stream of ``games_event`` rows. Appending is one transaction: lock
the game row, check the expected version, insert the events with consecutive ``seq`` and update
the ``games_game`` projection (version, snapshot, phase, turn, deadline, awaiting). Two writers
with the same expected version cannot both succeed: the second waits for the lock, then sees a
newer version and gets ``StaleVersion`` (HTTP 409), never a lost or doubled move.

Each event's ``hash`` is ``sha256(prev_hash + canonical JSON)`` of the envelope
``{"game", "seq", "actor", "recorded_at", "data"}`` (keys sorted, compact separators), with
``prev_hash`` of the first event ``"0" * 64``. Editing any stored field of any event therefore
breaks the chain at that event, which ``verify_chain`` reports.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from games.models import Event, Game
from games.rules import Event as RulesEvent
from games.rules import (
    GameState,
    event_to_dict,
    evolve,
    fold,
    state_from_dict,
    state_to_dict,
)
from tongits_site.api_errors import ApiError, Conflict

GENESIS_HASH = "0" * 64
IN_ROUND = ("start", "play", "draw_call")


class StaleVersion(Conflict):
    """The caller's ``expected_version`` is not the game's version: the game moved on."""

    default_code = "stale_version"
    default_detail = "The game has moved on since that version; reload it and try again."

    def __init__(self, expected: int, actual: int) -> None:
        super().__init__(
            f"Expected version {expected}, but the game is at version {actual}.",
            extra={"version": actual},
        )
        self.expected = expected
        self.actual = actual


class GameNotFound(ApiError):
    status_code = 404
    default_code = "not_found"
    default_detail = "No such game."


# ---------------------------------------------------------------- hashing


def canonical_json(value: Any) -> str:
    """The one text form that is hashed: sorted keys, no spaces, ASCII only."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def event_hash(
    prev_hash: str,
    *,
    game_id: uuid.UUID | str,
    seq: int,
    actor: str,
    recorded_at: datetime,
    data: dict[str, Any],
) -> str:
    """The chain link of one event: binds its content, position, author and time to the past."""
    envelope = {
        "game": str(game_id),
        "seq": seq,
        "actor": actor,
        "recorded_at": recorded_at.isoformat(),
        "data": data,
    }
    return hashlib.sha256((prev_hash + canonical_json(envelope)).encode("ascii")).hexdigest()


# ---------------------------------------------------------------- load


def get_game(game_id: uuid.UUID | str, *, lock: bool = False) -> Game:
    """The game row (``lock``: ``SELECT ... FOR UPDATE``, inside a transaction)."""
    qs = Game.objects.select_for_update() if lock else Game.objects.all()
    try:
        return qs.get(pk=game_id)
    except (Game.DoesNotExist, ValueError, ValidationError):  # no such game, or not a UUID
        raise GameNotFound() from None


def state_of(game: Game) -> GameState | None:
    """The rules state at ``game.version``: the snapshot, or a fold when it is missing or stale.

    ``None`` before the first event (a table still waiting for players).
    """
    if game.version == 0:
        return None
    snap = game.snapshot
    if isinstance(snap, dict) and snap.get("version") == game.version:
        return state_from_dict(snap)
    return fold_from_zero(game.pk, upto=game.version)


def load(game_id: uuid.UUID | str) -> GameState | None:
    """The current state of a game from its row's snapshot (no re-fold of the stream)."""
    return state_of(get_game(game_id))


def load_events(
    game_id: uuid.UUID | str, *, after: int = 0, upto: int | None = None
) -> QuerySet[Event]:
    """Event rows with ``after < seq <= upto``, in order."""
    qs = Event.objects.filter(game_id=game_id, seq__gt=after).order_by("seq")
    if upto is not None:
        qs = qs.filter(seq__lte=upto)
    return qs


def fold_from_zero(game_id: uuid.UUID | str, *, upto: int | None = None) -> GameState:
    """The state after the first ``upto`` events (all by default), folded from the stream.

    The truth the snapshot must agree with; replay uses it for earlier steps.
    """
    rows = load_events(game_id, upto=upto).values_list("data", flat=True)
    return fold(rows.iterator(chunk_size=500))


# ---------------------------------------------------------------- append


@dataclass
class Locked:
    """A game row locked for this transaction, with its state at ``game.version``."""

    game: Game
    state: GameState | None


def lock(game_id: uuid.UUID | str, expected_version: int | None = None) -> Locked:
    """Lock the game row for the rest of the transaction; ``StaleVersion`` on a version mismatch."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("games.store.lock needs a transaction (transaction.atomic)")
    game = get_game(game_id, lock=True)
    if expected_version is not None and expected_version != game.version:
        raise StaleVersion(expected_version, game.version)
    return Locked(game, state_of(game))


def append_locked(
    locked: Locked, events: Iterable[RulesEvent | dict[str, Any]], actor: str
) -> list[Event]:
    """Append events to a game locked by ``lock`` and update its projection and snapshot.

    ``locked.state`` and ``locked.game`` are advanced in place, so a caller can append again
    (a follow-up deal) in the same transaction without reloading.
    """
    game, before = locked.game, locked.state
    now = timezone.now()
    prev_hash = GENESIS_HASH
    if game.version:
        prev_hash = (
            Event.objects.filter(game_id=game.pk, seq=game.version)
            .values_list("hash", flat=True)
            .get()
        )
    state = before
    rows: list[Event] = []
    for event in events:
        data = event_to_dict(event)
        state = evolve(state, data)
        seq = game.version + len(rows) + 1
        if state.version != seq:
            raise RuntimeError(f"snapshot of {game.pk} is out of step: {state.version} != {seq}")
        digest = event_hash(
            prev_hash, game_id=game.pk, seq=seq, actor=actor, recorded_at=now, data=data
        )
        rows.append(
            Event(
                game_id=game.pk,
                seq=seq,
                type=data["type"],
                data=data,
                actor=actor,
                recorded_at=now,
                prev_hash=prev_hash,
                hash=digest,
            )
        )
        prev_hash = digest
    if not rows:
        return []
    Event.objects.bulk_create(rows)
    _project(game, before, state, now)
    game.save()
    # Wakes the live streams (games.live.listener); PostgreSQL delivers it only on commit.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_notify('game_events', %s)", [f"{game.pk}:{game.version}"])
    locked.state = state
    return rows


def append(
    game_id: uuid.UUID | str,
    expected_version: int,
    events: Iterable[RulesEvent | dict[str, Any]],
    actor: str,
) -> list[Event]:
    """Append events in one transaction if the game is still at ``expected_version``."""
    with transaction.atomic():
        return append_locked(lock(game_id, expected_version), events, actor)


def _turn_key(state: GameState | None) -> tuple | None:
    """Changes exactly when a new turn (or a new Draw answer) starts: the deadline restarts."""
    if state is None or state.phase not in IN_ROUND:
        return None
    return (state.round, state.turns, state.turn, state.phase == "draw_call", len(state.answers))


def _awaiting(game: Game, state: GameState) -> str:
    """What the table waits for next: the sweeper's index looks for the server's share."""
    if state.phase in IN_ROUND:
        seat = state.seats[state.turn] if 0 <= state.turn < len(state.seats) else {}
        return Game.Awaiting.BOT if seat.get("kind") == "bot" else Game.Awaiting.USER
    if state.phase in ("dealing", "round_over"):
        return Game.Awaiting.DEAL
    if state.phase == "match_over" and game.settled_at is None:
        return Game.Awaiting.SETTLE
    return Game.Awaiting.NONE


def _project(game: Game, before: GameState | None, after: GameState, now: datetime) -> None:
    """Derive the projection columns of ``games_game`` from the state after an append."""
    game.version = after.version
    game.snapshot = state_to_dict(after)
    game.phase = after.phase
    game.round = after.round
    game.current_seat = after.turn if after.turn >= 0 else None
    game.awaiting = _awaiting(game, after)
    if after.phase == "match_over":
        game.status = Game.Status.FINISHED
        game.finished_at = game.finished_at or now
        game.winner_seat = after.match_winner
    else:
        if game.status == Game.Status.WAITING:
            game.started_at = game.started_at or now
        game.status = Game.Status.ACTIVE
    key = _turn_key(after)
    seconds = after.rules.turn_seconds
    if key is None or not seconds:
        game.turn_deadline = None
    elif key != _turn_key(before) or game.turn_deadline is None:
        game.turn_deadline = now + timedelta(seconds=seconds)


# ---------------------------------------------------------------- verification


def verify_chain(game_id: uuid.UUID | str) -> int | None:
    """The first seq whose link is broken (edited, missing or out of place), or None if sound.

    Also checks the stream's length against the game row's version, so a deleted tail shows.
    """
    version = Game.objects.filter(pk=game_id).values_list("version", flat=True).first() or 0
    expected_seq = 1
    prev = GENESIS_HASH
    for row in _rows(game_id):
        if row.seq != expected_seq or row.prev_hash != prev:
            return expected_seq if row.seq > expected_seq else row.seq
        digest = event_hash(
            prev,
            game_id=row.game_id,
            seq=row.seq,
            actor=row.actor,
            recorded_at=row.recorded_at,
            data=row.data,
        )
        data_type = row.data.get("type") if isinstance(row.data, dict) else None
        if digest != row.hash or row.type != data_type:
            return row.seq
        prev = row.hash
        expected_seq += 1
    if expected_seq <= version:
        return expected_seq
    return None


def _rows(game_id: uuid.UUID | str) -> Iterator[Event]:
    return load_events(game_id).iterator(chunk_size=500)
