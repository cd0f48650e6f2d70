"""The one place that queues the server's own work on a table: bot moves, time-outs, deals,
settlements, and the sweeper that re-queues whatever was lost.

``after_append(game)`` runs inside every append's transaction (``services._after_append``) and
registers the follow-ups on commit, so a task never sees a game that was not committed (and a
rolled-back command queues nothing). What a table needs follows from its projection alone:

    awaiting "bot"     play_bot_turn(game, version)      after TONGITS_BOT_DELAY_SECONDS
    awaiting "deal"    deal_next_round(game, version)    after TONGITS_NEXT_ROUND_DELAY_SECONDS
    awaiting "settle"  settle_match(game, version)       at once
    turn_deadline set  expire_turn(game, version)        at the deadline

Every append queues afresh for its new version; the tasks of older versions find the game moved
on and do nothing. Queuing never fails a request: if the broker is down the error is logged and
``sweep`` (a beat task, every TONGITS_SWEEP_INTERVAL_SECONDS) queues the work later, as it does
for tasks lost with a dead worker.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from games import selectors
from games.models import Game

logger = logging.getLogger(__name__)

PLAY_BOT_TURN = "games.tasks.play_bot_turn"
EXPIRE_TURN = "games.tasks.expire_turn"
DEAL_NEXT_ROUND = "games.tasks.deal_next_round"
SETTLE_MATCH = "games.tasks.settle_match"

#: Tables the sweeper handles per kind of work and run; the next run takes the rest.
SWEEP_BATCH = 500


def enqueue(
    name: str,
    game_id: uuid.UUID | str,
    version: int,
    *,
    countdown: float | None = None,
    eta: datetime | None = None,
) -> bool:
    """Send one game task now; False (logged) if the broker refused: the sweeper retries."""
    from games import tasks  # tasks -> services -> this module: import on first use

    task = tasks.GAME_TASKS[name]
    options: dict[str, Any] = {}
    if eta is not None:
        options["eta"] = eta
    elif countdown:
        options["countdown"] = countdown
    try:
        task.apply_async((str(game_id), version), **options)
    except Exception:  # the broker is down or refuses: the move is committed all the same
        logger.exception("could not queue %s(%s, %s); the sweeper will", name, game_id, version)
        return False
    return True


def follow_ups(game: Game) -> list[tuple[str, dict[str, Any]]]:
    """The tasks a game needs at its current version, with their timing (see the module doc)."""
    work: list[tuple[str, dict[str, Any]]] = []
    if game.awaiting == Game.Awaiting.BOT:
        work.append((PLAY_BOT_TURN, {"countdown": max(0.0, settings.TONGITS_BOT_DELAY_SECONDS)}))
    elif game.awaiting == Game.Awaiting.DEAL:
        delay = max(0.0, settings.TONGITS_NEXT_ROUND_DELAY_SECONDS)
        work.append((DEAL_NEXT_ROUND, {"countdown": delay}))
    elif game.awaiting == Game.Awaiting.SETTLE:
        work.append((SETTLE_MATCH, {}))
    if game.turn_deadline is not None:
        work.append((EXPIRE_TURN, {"eta": game.turn_deadline}))
    return work


def after_append(game: Game) -> None:
    """Queue, when the current transaction commits, what the game needs at its new version."""
    for name, options in follow_ups(game):
        transaction.on_commit(partial(enqueue, name, game.pk, game.version, **options))


def expire_at_deadline(game: Game) -> None:
    """Queue the time-out of the game's current turn again, for its deadline (on commit)."""
    if game.turn_deadline is not None:
        transaction.on_commit(
            partial(enqueue, EXPIRE_TURN, game.pk, game.version, eta=game.turn_deadline)
        )


def sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Queue the work of every table left behind; the safety net for lost tasks and workers.

    A table is left behind when its turn is past its deadline, or when it has waited on a bot,
    a deal or a settlement longer than that work's delay plus ``TONGITS_SWEEP_GRACE_SECONDS``.
    Both questions are indexed queries on ``games_game``. Queuing a task that is merely late is
    harmless: the second of two copies finds the game moved on. Returns counts per task.
    """
    now = now or timezone.now()
    grace = timedelta(seconds=settings.TONGITS_SWEEP_GRACE_SECONDS)
    counts: dict[str, int] = {}

    def queue(name: str, found: Iterable[tuple[uuid.UUID, int]]) -> None:
        counts[name] = sum(enqueue(name, game_id, version) for game_id, version in found)

    queue(EXPIRE_TURN, selectors.overdue_turns(before=now - grace, limit=SWEEP_BATCH))
    delays = {
        Game.Awaiting.BOT: (PLAY_BOT_TURN, settings.TONGITS_BOT_DELAY_SECONDS),
        Game.Awaiting.DEAL: (DEAL_NEXT_ROUND, settings.TONGITS_NEXT_ROUND_DELAY_SECONDS),
        Game.Awaiting.SETTLE: (SETTLE_MATCH, 0.0),
    }
    for awaiting, (name, delay) in delays.items():
        before = now - grace - timedelta(seconds=max(0.0, delay))
        queue(name, selectors.tables_awaiting(awaiting, before=before, limit=SWEEP_BATCH))
    if any(counts.values()):
        logger.info("sweep queued %s", {k.rsplit(".", 1)[-1]: v for k, v in counts.items() if v})
    return counts
