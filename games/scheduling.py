"""The server's own work on tables: one scheduler loop, and the sweeper as its safety net.

Every write sets the game's ``due_at`` (``games.projection.project``): when the server owes the
table work, that is its bot move, its next deal, its settlement, or the turn deadline, whichever
comes first. Nothing is published per move. The scheduler asks one indexed question,

    which games are due now?   (partial index on due_at)

claims them with ``FOR UPDATE SKIP LOCKED`` (pushing ``due_at`` a lease ahead, so two schedulers
never queue the same work and a lost task is queued again when the lease runs out), and queues
one Celery task per game, by name:

    turn_deadline passed   expire_turn(game, version)
    awaiting "bot"         play_bot_turns([(game, version), ...])
    awaiting "deal"        deal_next_round(game, version)
    awaiting "settle"      settle_match(game, version)

Bot moves due together travel together: a claim's bot moves are split into tasks of at most
``BOT_BATCH`` moves (and at least two tasks when there are two moves or more, so a worker's two
processes share them), each playing its moves one after another. A busy node has many bot moves
due every claim, and a Celery message (the broker's round trips, the pool's hand-off, the
acknowledgement) costs more than an easy bot's whole move; one message for several keeps the
bots' worker's CPU on the moves themselves. A move waits at most for its batch's earlier moves.

It wakes on an append's ``NOTIFY game_events`` (at most every ``MIN_CLAIM_GAP_SECONDS``, 50 ms:
a burst of moves costs one claim) and at least every ``TONGITS_SCHEDULER_POLL_SECONDS``, so
work due at once is queued within about 50 ms. Every task
checks the version it was queued for, so work queued twice, late, or after a move is harmless.
``sweep`` (a beat task) still queues the work of tables left behind, from the projection alone.

A bot's move is queued once per pending move while it waits: with a Redis broker, queuing it
sets a mark beside the queue (``SET NX`` with a time to live), and the lease's and the sweeper's
copies of the same ``(game, version)`` are not sent while the mark stands. A starved bots' queue
(a busy node, its worker at a lower priority) would otherwise gain a copy of every waiting move
each lease and each sweep, and fall further behind running them. The task clears its mark as it
starts, and a worker that starts clears them all (a dead worker's tasks in hand are queued again
by the lease); a broker that loses its queue loses the marks with it, so the sweeper queues the
work again; ``TONGITS_BOT_QUEUED_SECONDS`` bounds the wait of a move lost otherwise.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

import redis
from celery import current_app
from django.conf import settings
from django.db import connection
from django.utils import timezone

from core import listening
from core import tasks as tasks_core
from games.application import timing
from games.models import Game
from games.projection import SERVER_WORK, server_delay
from metrics import instruments
from ops.models import Heartbeat

logger = logging.getLogger(__name__)

PLAY_BOT_TURN = "games.tasks.play_bot_turn"
#: Several bot moves in one task (the scheduler's claims); ``PLAY_BOT_TURN`` is one (the sweeper's).
PLAY_BOT_TURNS = "games.tasks.play_bot_turns"
EXPIRE_TURN = "games.tasks.expire_turn"
DEAL_NEXT_ROUND = "games.tasks.deal_next_round"
SETTLE_MATCH = tasks_core.SETTLE_MATCH  # defined by accounts, heard by metrics and fair play
ABORT_IDLE = "games.tasks.abort_idle"
#: The heartbeat the sweeper writes on every run; /healthz reads it (ops.health).
SWEEPER = "sweeper"

#: Tables handled per kind of work and run (scheduler claim or sweep); the next run takes the rest.
BATCH = 500
#: Bot moves a task plays at most, one after another (see the module's doc).
BOT_BATCH = 8
#: The scheduler claims at most this often, however many appends notify it.
MIN_CLAIM_GAP_SECONDS = 0.05

#: Loops that run beside the scheduler's in ``manage.py run_scheduler``, each in a thread of its
#: own until the stop event is set: apps above ``games`` register theirs at start-up (the
#: matchmaker's matcher).
COMPANIONS: list[Callable[[threading.Event], None]] = []

_BY_AWAITING = {
    Game.Awaiting.BOT: PLAY_BOT_TURN,
    Game.Awaiting.DEAL: DEAL_NEXT_ROUND,
    Game.Awaiting.SETTLE: SETTLE_MATCH,
}


_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
_mark_clients: dict[str, redis.Redis] = {}


def _mark_client() -> redis.Redis | None:
    """A client of the broker's Redis (one pool per URL), or None with another broker."""
    url = str(current_app.conf.broker_url or "")
    if not url.startswith(_REDIS_SCHEMES):
        return None
    client = _mark_clients.get(url)
    if client is None:
        client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        _mark_clients[url] = client
    return client


_MARK_PREFIX = "tongits:bot-queued:"


def _mark_key(game_id: uuid.UUID | str, version: int) -> str:
    return f"{_MARK_PREFIX}{game_id}:{version}"


def _mark_many(moves: list[tuple[Any, int]]) -> list[tuple[Any, int]]:
    """The moves not already waiting in the queue, now marked (one round trip for them all).

    Without a Redis broker, or with the broker unreachable, every move is sent: a copy is
    harmless (the task checks its version), only wasted work."""
    client = _mark_client()
    if client is None or not moves:
        return list(moves)
    ttl = max(1, round(settings.TONGITS_BOT_QUEUED_SECONDS))
    try:
        with client.pipeline(transaction=False) as pipe:
            for game_id, version in moves:
                pipe.set(_mark_key(game_id, version), b"1", nx=True, ex=ttl)
            fresh = pipe.execute()
    except redis.RedisError:
        return list(moves)
    return [move for move, marked in zip(moves, fresh, strict=True) if marked]


def _mark(game_id: uuid.UUID | str, version: int) -> bool:
    """Mark this bot move queued; False if it already is (its task waits in the queue)."""
    return bool(_mark_many([(game_id, version)]))


def unmark_many(moves: Iterable[tuple[Any, int] | list[Any]]) -> None:
    """The bot moves' task has started: later copies may be queued (if one of them fails)."""
    client = _mark_client()
    keys = [_mark_key(game_id, version) for game_id, version in moves]
    if client is None or not keys:
        return
    try:
        client.delete(*keys)
    except redis.RedisError:
        logger.warning("could not clear the queued marks of %d bot moves", len(keys))


def unmark(game_id: uuid.UUID | str, version: int) -> None:
    """The bot move's task has started: a later copy may be queued (if this one fails)."""
    unmark_many([(game_id, version)])


def clear_marks() -> int:
    """Clear every bot move's queued mark (a worker starting: what a dead worker held in hand
    may be queued again at once); the number cleared."""
    client = _mark_client()
    if client is None:
        return 0
    cleared = 0
    try:
        batch = []
        for key in client.scan_iter(match=f"{_MARK_PREFIX}*", count=500):
            batch.append(key)
            if len(batch) == 500:
                cleared += client.delete(*batch)
                batch = []
        if batch:
            cleared += client.delete(*batch)
    except redis.RedisError:
        logger.warning("could not clear the bots' queued marks")
    return cleared


def _bot_queue() -> dict[str, Any]:
    """The send options of a bot move's task: ``TONGITS_BOT_QUEUE`` when it is set, where a
    worker of its own at a lower CPU priority serves it, so bots wait for a busy node's cores
    before requests do."""
    return {"queue": settings.TONGITS_BOT_QUEUE} if settings.TONGITS_BOT_QUEUE else {}


def enqueue(name: str, game_id: uuid.UUID | str, version: int) -> bool:
    """Send one game task by name; False if it was not sent: the broker refused (logged; it is
    queued again) or it is a bot move already waiting in the queue (see the module's doc);
    a bot's move goes to the bots' queue (``_bot_queue``)."""
    bot = name == PLAY_BOT_TURN
    if bot and not _mark(game_id, version):
        return False
    options = _bot_queue() if bot else {}
    try:
        current_app.send_task(name, args=(str(game_id), version), **options)
    except Exception:  # the broker is down or refuses: the lease or the sweeper retries
        logger.exception("could not queue %s(%s, %s)", name, game_id, version)
        if bot:
            unmark(game_id, version)
        return False
    return True


def batches(moves: list[Any], size: int = BOT_BATCH) -> list[list[Any]]:
    """``moves`` split in order into as few nearly equal parts of at most ``size`` as may be,
    and into two at least when there are two or more (a worker runs two processes)."""
    if not moves:
        return []
    parts = max(-(-len(moves) // size), min(2, len(moves)))
    step, extra = divmod(len(moves), parts)
    out, start = [], 0
    for i in range(parts):
        end = start + step + (1 if i < extra else 0)
        out.append(moves[start:end])
        start = end
    return out


def enqueue_bot_moves(moves: list[tuple[Any, int]]) -> int:
    """Send bot moves in batches (``PLAY_BOT_TURNS``); the number of moves sent. Moves already
    waiting in the queue are left out, as ``enqueue`` leaves out a single one."""
    options = _bot_queue()
    sent = 0
    for batch in batches(_mark_many(moves)):
        args = [[str(game_id), version] for game_id, version in batch]
        try:
            current_app.send_task(PLAY_BOT_TURNS, args=(args,), **options)
        except Exception:  # the broker is down or refuses: the lease or the sweeper retries
            logger.exception("could not queue %d bot moves", len(batch))
            unmark_many(batch)
            continue
        sent += len(batch)
    return sent


def work_for(awaiting: str, turn_deadline: datetime | None, now: datetime) -> str | None:
    """The task a due game needs: its time-out once the deadline passed, else its server work."""
    if turn_deadline is not None and turn_deadline <= now:
        return EXPIRE_TURN
    return _BY_AWAITING.get(awaiting)


_CLAIM = """
WITH due AS (
    SELECT id FROM games_game
    WHERE due_at IS NOT NULL AND due_at <= %(now)s
    ORDER BY due_at
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE games_game g SET due_at = %(lease)s
FROM due WHERE g.id = due.id
RETURNING g.id, g.version, g.awaiting, g.turn_deadline
"""


def claim_due(*, now: datetime | None = None, limit: int = BATCH) -> list[tuple[str, Any, int]]:
    """Claim the games due by ``now`` and return ``(task, game_id, version)`` for each.

    One statement (its own transaction in autocommit): rows another scheduler is claiming are
    skipped, and each claimed row's ``due_at`` moves a lease ahead, so it is claimed again only
    if its task never wrote anything.
    """
    now = now or timezone.now()
    lease = now + timedelta(seconds=settings.TONGITS_SCHEDULER_LEASE_SECONDS)
    with connection.cursor() as cursor:
        cursor.execute(_CLAIM, {"now": now, "limit": limit, "lease": lease})
        rows = cursor.fetchall()
    out = []
    for game_id, version, awaiting, deadline in rows:
        name = work_for(awaiting, deadline, now)
        if name is not None:
            out.append((name, game_id, version))
    return out


def run_due(*, now: datetime | None = None) -> int:
    """Claim what is due and queue it: bot moves in batches, other work a task each; the number
    of games whose work was queued."""
    bots: list[tuple[Any, int]] = []
    sent = 0
    for name, game_id, version in claim_due(now=now):
        if name == PLAY_BOT_TURN:
            bots.append((game_id, version))
        else:
            sent += enqueue(name, game_id, version)
    return sent + enqueue_bot_moves(bots)


def run_scheduler(stop: threading.Event, *, poll: float | None = None) -> None:
    """The scheduler loop: queue due work, then wait for an append or the poll interval.

    Runs until ``stop`` is set (``manage.py run_scheduler`` runs it until SIGTERM). A database
    error is logged and retried after the interval: the loop never dies of one.
    """
    interval = settings.TONGITS_SCHEDULER_POLL_SECONDS if poll is None else poll
    gap = min(interval, MIN_CLAIM_GAP_SECONDS)
    listener = listening.listen("scheduler")
    try:
        while not stop.is_set():
            claimed_at = time.monotonic()
            try:
                run_due()
                instruments.loop_beat.labels("scheduler").set(time.time())
            except Exception:
                logger.exception("scheduler: claim failed; retrying")
                connection.close()
            # Busy tables notify on every move: claim at most every `gap`, so a burst of
            # appends costs one claim, not one each (work due at once waits at most `gap`).
            stop.wait(max(0.0, gap - (time.monotonic() - claimed_at)))
            if listener is None:
                stop.wait(interval)
                listener = listening.listen("scheduler") if not stop.is_set() else None
            elif not listening.wait(listener, interval, "scheduler"):
                listener = None
    finally:
        if listener is not None:
            listener.close()
        connection.close()


# ---------------------------------------------------------------- the safety net


# ---------------------------------------------------------------- the sweeper's questions


def overdue_turns(*, before: datetime, limit: int) -> list[tuple[uuid.UUID, int]]:
    """(id, version) of active games whose turn deadline passed before ``before``, oldest first.

    Uses the partial index on ``turn_deadline`` of active games.
    """
    qs = Game.objects.filter(status=Game.Status.ACTIVE, turn_deadline__lt=before)
    return list(qs.order_by("turn_deadline").values_list("id", "version")[:limit])


def idle_untimed(*, before: datetime, limit: int) -> list[tuple[uuid.UUID, int]]:
    """(id, version) of started games without turn limits (``turn_seconds`` 0) where nobody
    has moved since before ``before``: the ones the sweeper aborts."""
    qs = Game.objects.filter(
        status=Game.Status.ACTIVE, rules__turn_seconds=0, updated_at__lt=before
    ).exclude(awaiting__in=SERVER_WORK)
    return list(qs.order_by("updated_at").values_list("id", "version")[:limit])


def tables_awaiting(awaiting: str, *, before: datetime, limit: int) -> list[tuple[uuid.UUID, int]]:
    """(id, version) of games waiting on the server's ``awaiting`` work since before ``before``.

    Uses the partial index on (awaiting, updated_at) of games that owe server work.
    """
    qs = Game.objects.filter(awaiting=awaiting, updated_at__lt=before)
    return list(qs.order_by("updated_at").values_list("id", "version")[:limit])


def sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Queue the work of every table left behind: the safety net if the scheduler is down.

    A table is left behind when its turn is past its deadline, or when it has waited on a bot,
    a deal or a settlement longer than that work's delay plus ``TONGITS_SWEEP_GRACE_SECONDS``.
    Both questions are indexed queries on ``games_game``. Queuing a task that is merely late is
    harmless: the second of two copies finds the game moved on. It also queues the abort of
    started tables without turn limits idle past ``TONGITS_ABORT_IDLE_SECONDS``, and records
    its heartbeat (``/healthz``). Returns counts per task.
    """
    now = now or timezone.now()
    grace = timedelta(seconds=settings.TONGITS_SWEEP_GRACE_SECONDS)
    counts: dict[str, int] = {}

    def queue(name: str, found: Iterable[tuple[uuid.UUID, int]]) -> None:
        counts[name] = sum(enqueue(name, game_id, version) for game_id, version in found)

    queue(EXPIRE_TURN, overdue_turns(before=now - grace, limit=BATCH))
    for awaiting in SERVER_WORK:
        before = now - grace - timedelta(seconds=server_delay(awaiting, timing()))
        found = tables_awaiting(awaiting, before=before, limit=BATCH)
        queue(_BY_AWAITING[awaiting], found)
    idle = now - timedelta(seconds=settings.TONGITS_ABORT_IDLE_SECONDS)
    queue(ABORT_IDLE, idle_untimed(before=idle, limit=BATCH))
    if any(counts.values()):
        logger.info("sweep queued %s", {k.rsplit(".", 1)[-1]: v for k, v in counts.items() if v})
    heartbeat(SWEEPER, now)
    return counts


def heartbeat(name: str, now: datetime | None = None) -> None:
    """Record that ``name`` ran now (one upsert): ``/healthz`` turns 503 when it is late."""
    Heartbeat.objects.update_or_create(name=name, defaults={"beat_at": now or timezone.now()})
