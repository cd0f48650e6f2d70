"""Play: the moves of a started game, a person's or the server's, each one write of the door
(``games.application.execute``).

- ``submit_command``: a person's command (or a bot driver's, ``seat=`` of a bot seat).
- ``resign``: a player leaves a started match (``resigned``); the server plays the seat from
  then on (``games.application.execute`` plays a resigned seat at once whenever it is to act).
- ``play_bot_turn``, ``expire_turn``, ``deal_next_round``, ``abort_idle``: the server's own
  moves, run by the Celery tasks the scheduler queues (``abort_idle`` by the sweeper). Each
  takes the version it was queued for and does nothing (``Outcome.MOVED_ON``) if the game has
  moved on, so a task run twice, late or out of order changes nothing.
"""

from __future__ import annotations

import logging
import random
import uuid
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.utils import timezone

from games import store
from games.application import (
    Actor,
    Idempotency,
    Presenter,
    Sender,
    Written,
    execute,
    fingerprint,
)
from games.errors import (
    AlreadyResigned,
    MoveRefused,
    NotActive,
    NotStarted,
    StaleVersion,
    move_refused,
)
from games.models import Event, Game
from games.rules import (
    GameState,
    IllegalMove,
    deal,
    decide,
    legal_commands,
    player_view,
    redact_event,
    set_client_seed,
    time_out,
)
from games.rules import abort as abort_match
from games.rules import resign as resign_seat
from games.rules.bots import get_bot

logger = logging.getLogger(__name__)


def _decide(command: dict[str, Any], client_seed: str | None = None):
    """The rules step of a command: ``decide``, after the seat's ``client_seed`` if one came."""

    def step(state: GameState | None, actor: Actor) -> list:
        assert state is not None and actor.seat is not None
        try:
            seed = [] if client_seed is None else [set_client_seed(state, actor.seat, client_seed)]
            return seed + decide(state, actor.seat, command)
        except IllegalMove as exc:
            raise move_refused(exc.code, exc.detail) from None
        except (ValueError, TypeError, KeyError, AttributeError):
            # decide should turn every malformed command into IllegalMove; log the miss.
            logger.exception("decide raised on command %r", command)
            raise move_refused("bad_command") from None

    return step


def submit_command(
    *,
    game_id: uuid.UUID | str,
    command: dict[str, Any],
    expected_version: int,
    user: Any = None,
    seat: int | None = None,
    idempotency_key: str | None = None,
    present: Presenter | None = None,
    client_seed: str | None = None,
) -> Written:
    """Play one command for a seat if the game is still at ``expected_version`` (with the
    seat's ``client_seed`` for the next deal recorded first, when given).

    Refusals, in order: no game, not started, not a player / not your seat, stale version, the
    rules refuse (``MoveRefused`` with the rules' code). A repeated ``idempotency_key`` from the
    same user returns the first answer (``Written.replayed``); only an appended command has one.
    ``present`` builds the answer's body (the API hands it in; a body is needed to store a key).
    """
    sender = Sender.user(user, seat) if user is not None else Sender.bot(seat)  # type: ignore[arg-type]
    idempotency = None
    if user is not None and idempotency_key:
        request = {
            "game": str(game_id),
            "seat": seat,
            "command": command,
            "expected_version": expected_version,
        }
        if client_seed is not None:  # absent otherwise: earlier requests keep their fingerprint
            request["client_seed"] = client_seed
        idempotency = Idempotency(user.pk, idempotency_key, fingerprint(request))
    return execute(
        game_id,
        sender=sender,
        step=_decide(command, client_seed),
        expected_version=expected_version,
        present=present,
        idempotency=idempotency,
    )


def resign(game_id: uuid.UUID | str, user_id: int, *, present: Presenter | None = None) -> Written:
    """The user resigns their seat of a started match: ``resigned``, then the moves the server
    plays for the seat at once if it is to act. From then on the seat is played by the time-out
    rule whenever its turn comes, with no deadline waited for; the resigner is placed last.

    Also what deleting an account calls for each of its running matches. Refusals:
    ``GameNotFound``, ``NotStarted``, ``NotActive`` (over or aborted), ``NotAPlayer``,
    ``AlreadyResigned``. Retries by itself when a move lands at the same moment.
    """

    def step(state: GameState | None, actor: Actor) -> list:
        assert state is not None and actor.seat is not None
        try:
            return resign_seat(state, actor.seat)
        except IllegalMove as exc:
            if exc.code == "already_resigned":
                raise AlreadyResigned() from None
            raise NotActive() from None

    for _ in range(RESIGN_ATTEMPTS):
        head = store.read(game_id)
        if head.state() is None:
            raise NotStarted()
        if head.status != Game.Status.ACTIVE:
            raise NotActive()
        try:
            return execute(
                head.game_id,
                sender=Sender(user_id=user_id),
                step=step,
                expected_version=head.version,
                present=present,
                head=head,
            )
        except StaleVersion:
            continue  # somebody moved meanwhile: resign at the new version
    raise StaleVersion(head.version, head.version + 1)


RESIGN_ATTEMPTS = 5


def submit_seed(
    *,
    game_id: uuid.UUID | str,
    user: Any,
    client_seed: str,
    expected_version: int | None = None,
    present: Presenter | None = None,
) -> Written:
    """Record the user's seed for the next deal's shuffle (``client_seed_set``); the latest a
    seat sends before a deal counts. Send it after the commitment to that deal's server seed
    (``game_started`` / ``round_ended``) for the deal to be provably out of the server's hands.
    """

    def step(state: GameState | None, actor: Actor) -> list:
        assert state is not None and actor.seat is not None
        try:
            return [set_client_seed(state, actor.seat, client_seed)]
        except IllegalMove as exc:
            raise move_refused(exc.code, exc.detail) from None

    return execute(
        game_id,
        sender=Sender.user(user),
        step=step,
        expected_version=expected_version,
        present=present,
    )


# ---------------------------------------------------------------- the server's own moves


class Outcome(StrEnum):
    """What a server move did; the tasks return it, so the worker's log tells."""

    DONE = "done"
    MOVED_ON = "moved_on"  # the game is no longer at the version the work was queued for
    NOTHING = "nothing_to_do"  # at that version, there is nothing of this kind to do
    EARLY = "early"  # a time-out before the deadline: left for the scheduler
    REFUSED = "refused"  # the rules refused a bot's command (a bot bug; the time-out covers it)


def _write_from(head: store.Head, sender: Sender, step: Any) -> Outcome:
    """A server move from the head it read: ``DONE``, or ``MOVED_ON`` if the game moved since."""
    try:
        execute(head.game_id, sender=sender, step=step, expected_version=head.version, head=head)
    except StaleVersion:
        return Outcome.MOVED_ON
    return Outcome.DONE


def play_bot_turn(*, game_id: uuid.UUID | str, expected_version: int) -> Outcome:
    """One command for the bot seat to act (or to answer a Draw), if the game is at that version.

    The bot sees what a player of its seat sees: ``player_view``, ``legal_commands`` and, if it
    ``uses_history``, its seat's redacted events of this round. It chooses holding no lock (a
    strong bot thinks for a while); the write is conditional on the version it saw, so a move
    made meanwhile turns its command into a stale one, never a second move.
    """
    head = store.read(game_id)
    if head.version != expected_version:
        return Outcome.MOVED_ON
    state = head.state()
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
    if hasattr(bot, "wall_limit"):  # a starved worker (busy node) bounds the table's wait
        bot.wall_limit = settings.TONGITS_BOT_THINK_SECONDS or None
    rng = random.Random(random.SystemRandom().getrandbits(64))
    view = player_view(state, seat)
    if getattr(bot, "uses_history", False):
        command = bot.choose(view, legal, rng, history=round_history(head.game_id, state, seat))
    else:
        command = bot.choose(view, legal, rng)
    # A bot sends its seed for the next deal with its first move after a deal.
    seed = f"{rng.getrandbits(128):032x}" if not state.client_seeds[seat] else None
    try:
        return _write_from(head, Sender.bot(seat), _decide(command, seed))
    except MoveRefused as exc:
        logger.error(
            "bot %s refused at %s v%s: %r (%s)", bot.name, game_id, head.version, command, exc.code
        )
        return Outcome.REFUSED


def round_history(game_id: uuid.UUID, state: GameState, seat: int) -> list[dict[str, Any]]:
    """The seat's events of the current round (from its ``round_started``), redacted for it."""
    start = (
        Event.objects.filter(game_id=game_id, type="round_started", seq__lte=state.version)
        .order_by("-seq")
        .values_list("seq", flat=True)
        .first()
    ) or 1
    rows = store.event_data(game_id, after=start - 1, upto=state.version)
    return [redact_event(data, seat) for data in rows]


def expire_turn(*, game_id: uuid.UUID | str, expected_version: int) -> Outcome:
    """Play for the seat whose turn deadline passed (docs/rules.md "Time"), at that version only.

    Appends the rules core's ``time_out`` events (``turn_timed_out``, then the moves played for
    the seat; a pending Draw answer folds) as ``system``. The write is conditional on the
    version, so a move and a time-out at the same version never both happen. Before the
    deadline (a clock ahead of ours) it puts the deadline back as the table's due time.
    """
    head = store.read(game_id)
    if head.version != expected_version:
        return Outcome.MOVED_ON
    state = head.state()
    if state is None or not state.in_round or head.turn_deadline is None:
        return Outcome.NOTHING
    if timezone.now() < head.turn_deadline:
        Game.objects.filter(pk=head.game_id, version=head.version).update(due_at=head.turn_deadline)
        return Outcome.EARLY
    return _write_from(head, Sender.server(), lambda s, _actor: time_out(s))


def deal_next_round(*, game_id: uuid.UUID | str, expected_version: int) -> Outcome:
    """Deal the next round of a match whose round ended at that version."""
    head = store.read(game_id)
    if head.version != expected_version:
        return Outcome.MOVED_ON
    state = head.state()
    if state is None or state.phase not in ("dealing", "round_over"):
        return Outcome.NOTHING
    return _write_from(
        head,
        Sender.server(),
        lambda s, _actor: [deal(s, random.SystemRandom(), str(head.game_id))],
    )


def abort_idle(*, game_id: uuid.UUID | str, expected_version: int) -> Outcome:
    """Abort a started match without turn limits that has sat idle past
    ``TONGITS_ABORT_IDLE_SECONDS``, at that version only: an ``aborted`` event, no result."""
    head = store.read(game_id)
    if head.version != expected_version:
        return Outcome.MOVED_ON
    state = head.state()
    if state is None or head.status != Game.Status.ACTIVE or state.rules.turn_seconds:
        return Outcome.NOTHING
    return _write_from(head, Sender.server(), lambda s, _actor: abort_match(s, "idle"))
