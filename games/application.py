"""The one write door of every game: a human's command, a bot's turn, a time-out, a deal, a start.

``execute`` gives every write the same path, in two round trips and no lock held in Python:

1. read the head (``store.read``: version, last hash, snapshot, a stored idempotent reply);
2. resolve the sender to a seat and an actor (``user:<id>``, ``bot:<level>``, ``system``);
3. check the expected version, then ask the rules core (the ``step``: ``decide``, ``time_out``,
   ``deal``, ``new_game``) for the events, and fold them onto the snapshot;
4. add what the server owes at once (``games.rules.moves_at_once``): the next deal where the
   table deals without waiting (after ``game_started`` without a seed window; after a round
   with ``TONGITS_DEAL_INLINE``), then a resigned seat's moves;
5. compute the head's projection (``games.projection``: status, phase, awaiting, turn
   deadline, ``due_at``, when the server owes the table work) and, if the caller handed in a
   presenter, the answer's body;
6. ``store.write``: the events, the head and the idempotent reply in one conditional statement.

Follow-ups are not queued here: ``due_at`` on the head is the schedule, which
``games.scheduling`` polls (no broker message per move). Bot and time-out writes pass no
presenter, so they build no response body.
"""

from __future__ import annotations

import hashlib
import logging
import random
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import orjson
from django.conf import settings
from django.db import IntegrityError
from django.utils import timezone
from django.utils.translation import gettext as _

from games import projection, seal, store
from games.errors import (
    IdempotencyKeyReused,
    NotAPlayer,
    NotStarted,
    NotYourSeat,
    StaleVersion,
)
from games.rules import (
    Event,
    GameState,
    deal,
    event_to_dict,
    evolve,
    hidden_from_some,
    moves_at_once,
    state_to_dict,
)
from metrics import instruments

SYSTEM_ACTOR = "system"
logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- who is writing


@dataclass(frozen=True)
class Sender:
    """Who asks for a write: a person (``user_id``, optionally the seat they claim), a bot
    driver (``seat`` of a bot seat), or the server itself (``system``)."""

    user_id: int | None = None
    seat: int | None = None
    system: bool = False

    @classmethod
    def user(cls, user: Any, seat: int | None = None) -> Sender:
        return cls(user_id=user.pk, seat=seat)

    @classmethod
    def bot(cls, seat: int) -> Sender:
        return cls(seat=seat)

    @classmethod
    def server(cls) -> Sender:
        return cls(system=True)


@dataclass(frozen=True)
class Actor:
    """A resolved sender: its seat in the game (None for the server) and the ``actor`` label
    its events are recorded with."""

    seat: int | None
    label: str


def seat_of_user(state: GameState, user_id: int | None) -> int | None:
    """The seat a user plays at this game, from ``game_started`` (the truth, not the rows)."""
    if user_id is None:
        return None
    for index, seat in enumerate(state.seats):
        if seat.get("kind") == "user" and seat.get("user_id") == user_id:
            return index
    return None


def resolve(state: GameState | None, sender: Sender) -> Actor:
    """The sender's seat and actor label, or ``NotAPlayer`` / ``NotYourSeat``."""
    if sender.system:
        return Actor(None, SYSTEM_ACTOR)
    if sender.user_id is not None:
        if state is None:
            return Actor(None, f"user:{sender.user_id}")  # a start: the table checked the seat
        mine = seat_of_user(state, sender.user_id)
        if mine is None:
            raise NotAPlayer()
        if sender.seat is not None and sender.seat != mine:
            raise NotYourSeat(
                _("You play seat %(mine)s, not seat %(seat)s.")
                % {"mine": mine, "seat": sender.seat}
            )
        return Actor(mine, f"user:{sender.user_id}")
    seat = sender.seat
    if state is None or seat is None or not 0 <= seat <= 2:
        raise NotYourSeat(_("Only a bot seat is played without a user."))
    spec = state.seats[seat]
    if spec.get("kind") != "bot":
        raise NotYourSeat(_("Only a bot seat is played without a user."))
    return Actor(seat, f"bot:{spec.get('level', 'normal')}")


# ---------------------------------------------------------------- what the head shows


def timing() -> projection.Timing:
    """The server's pace, from settings (``games.projection`` decides with it)."""
    return projection.Timing(
        bot_delay=settings.TONGITS_BOT_DELAY_SECONDS,
        next_round_delay=settings.TONGITS_NEXT_ROUND_DELAY_SECONDS,
        seed_window=settings.TONGITS_SEED_WINDOW_SECONDS,
        deal_inline=settings.TONGITS_DEAL_INLINE,
    )


# ---------------------------------------------------------------- the door


@dataclass(frozen=True)
class Idempotency:
    """A person's ``Idempotency-Key`` and the fingerprint of the request it was sent with."""

    user_id: int
    key: str
    fingerprint: str


def fingerprint(request: dict[str, Any]) -> str:
    return hashlib.sha256(store.canonical_json(request).encode()).hexdigest()


@dataclass(frozen=True)
class Written:
    """What a write did: the new version, its events, the state after them, the head's new
    columns, the writer's seat, and the presenter's body (``replayed``: a stored first answer)."""

    game_id: uuid.UUID
    version: int
    events: list[store.StoredEvent]
    state: GameState | None
    columns: dict[str, Any]
    seat: int | None
    body: dict[str, Any] | None = None
    replayed: bool = False


Step = Callable[[GameState | None, Actor], list[Event]]
Presenter = Callable[[Written], dict[str, Any]]


def _replayed(head: store.Head, game_id: uuid.UUID, idem: Idempotency) -> Written:
    reply = head.reply
    assert reply is not None
    if reply.fingerprint != idem.fingerprint or reply.game_id != str(game_id):
        raise IdempotencyKeyReused()
    body = orjson.loads(reply.body)
    return Written(game_id, body.get("version", head.version), [], None, {}, None, body, True)


def with_server_secrets(data: dict[str, Any]) -> dict[str, Any]:
    """An event's data with the server's fresh secrets, which no rules step can give:

    - a random ``nonce`` (16 bytes, hex) when its content is hidden from some reader, so its
      hash (the reader's receipt) reveals nothing by brute force;
    - in ``game_started`` and ``round_ended``, the seed of the next deal (32 random bytes,
      hex) and the commitment to it (sha256 of that text), published before anyone can choose
      a client seed; the seed stays redacted until the match is over.
    """
    if hidden_from_some(data):
        data["nonce"] = secrets.token_hex(16)
    if data.get("type") in ("game_started", "round_ended"):
        seed = secrets.token_hex(32)
        data["next_server_seed"] = seed
        data["next_server_seed_hash"] = hashlib.sha256(seed.encode("ascii")).hexdigest()
    return data


def execute(
    game_id: uuid.UUID | str,
    *,
    sender: Sender,
    step: Step,
    expected_version: int | None = None,
    present: Presenter | None = None,
    idempotency: Idempotency | None = None,
    rng: random.Random | None = None,
    starts: bool = False,
    head: store.Head | None = None,
) -> Written:
    """Write the events ``step`` decides for ``sender`` if the game is at ``expected_version``
    (``None``: at whatever version the read saw, still checked at the write). Only a write
    that ``starts`` the game may find it at version 0. A caller that has just read the head
    (a bot, to choose its move) hands it in: the write is conditional on its version anyway.

    Refusals, in order: no game (``GameNotFound``), a stored reply for this key (returned, or
    ``IdempotencyKeyReused``), not started, not a player / not your seat, stale version, then
    whatever the step raises (the rules' ``IllegalMove``, translated by the caller).
    """
    reply_for = (idempotency.user_id, idempotency.key) if idempotency else None
    if head is None and idempotency is None and expected_version is not None:
        head = store.heads.get(store.parse_id(game_id), expected_version)
    if head is None or idempotency is not None:
        head = store.read(game_id, reply_for=reply_for)
    if idempotency is not None and head.reply is not None:
        return _replayed(head, head.game_id, idempotency)
    before = head.state()
    if before is None and not starts:
        raise NotStarted()
    actor = resolve(before, sender)
    if expected_version is not None and head.version != expected_version:
        raise StaleVersion(expected_version, head.version)

    now = timezone.now()
    batches: list[tuple[str, list[dict[str, Any]]]] = []
    state = before
    events = [with_server_secrets(event_to_dict(e)) for e in step(before, actor)]
    for data in events:
        state = evolve(state, data)
    batches.append((actor.label, events))
    assert state is not None, "a step must return at least one event"
    pace = timing()
    dealer = None
    if projection.deals_now(state, pace):
        dealer = partial(deal, rng=rng or random.SystemRandom(), game_id=str(head.game_id))
    # The next deal where the table deals at once, then a resigned seat's moves (the rules').
    owed = [with_server_secrets(event_to_dict(e)) for e in moves_at_once(state, dealer)]
    for data in owed:
        state = evolve(state, data)
    if owed:
        batches.append((SYSTEM_ACTOR, owed))

    rows = store.chain(head, batches, now)
    facts = projection.Before(
        head.settled_at, head.turn_deadline, head.started_at, head.finished_at
    )
    columns = projection.project(facts, before, state, now, pace)
    written = Written(head.game_id, state.version, rows, state, columns, actor.seat)
    body = present(written) if present is not None else None
    reply = None
    if idempotency is not None and body is not None:
        text = orjson.dumps(body).decode()
        reply = store.Reply(
            idempotency.user_id, idempotency.key, idempotency.fingerprint, 200, text
        )
    try:
        store.write(
            head,
            rows,
            snapshot=state_to_dict(state),
            columns=columns,
            now=now,
            reply=reply,
            state=state,
        )
    except IntegrityError:
        if idempotency is None:
            raise
        raise IdempotencyKeyReused() from None  # the same key, at the same moment, elsewhere
    except StaleVersion:
        if idempotency is not None:  # a twin request with this key may have just won
            again = store.read(game_id, reply_for=reply_for)
            if again.reply is not None:
                return _replayed(again, again.game_id, idempotency)
        raise
    instruments.commands.inc()
    instruments.events.inc(len(rows))
    if state.phase == "match_over" and (before is None or before.phase != "match_over"):
        try:
            seal.seal_match(head.game_id, state.version, rows[-1].hash)
        except Exception:  # the events are committed; settlement seals it later
            logger.exception("could not seal match %s", head.game_id)
    return Written(head.game_id, state.version, rows, state, columns, actor.seat, body)
