"""Celery tasks that keep tables moving; each one is a thin call of a ``games.play`` service.

Game tasks take ``(game_id, version)``: the version the work was queued for. A task whose game
has moved on does nothing, so running one twice, late, or after the sweeper queued a copy is
harmless. They are ``acks_late`` with ``reject_on_worker_lost``: a task whose worker died is
delivered again rather than lost (and if it is lost anyway, the scheduler's lease runs out and
it is queued again). They are queued by name by ``games.scheduling`` only. The settlement task
lives in ``accounts.tasks``: it also writes the players' history.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from core.tasks import TASK_OPTIONS
from games import archive, play, scheduling
from games.errors import GameNotFound

logger = logging.getLogger(__name__)

#: Games packed by one run of ``compact_events`` (the next run goes on).
COMPACT_BATCH = 2000


def _run(service: Any, game_id: str, version: int) -> str:
    try:
        return str(service(game_id=game_id, expected_version=version))
    except GameNotFound:
        logger.warning("%s: no game %s", service.__name__, game_id)
        return "no_game"


@shared_task(name=scheduling.PLAY_BOT_TURN, **TASK_OPTIONS)
def play_bot_turn(game_id: str, version: int) -> str:
    """One command for the bot seat to act; its write makes the table due again if needed."""
    scheduling.unmark(game_id, version)  # started: no longer waiting in the queue
    return _run(play.play_bot_turn, game_id, version)


@shared_task(name=scheduling.PLAY_BOT_TURNS, **TASK_OPTIONS)
def play_bot_turns(moves: list[list[Any]]) -> list[str]:
    """Bot moves due together, played one after another (``games.scheduling``: one message for
    several moves). One move's unexpected error is logged and does not hold back the others; a
    database error retries the task, whose moves already played then do nothing."""
    scheduling.unmark_many(moves)
    outcomes = []
    for game_id, version in moves:
        try:
            outcomes.append(_run(play.play_bot_turn, game_id, version))
        except TASK_OPTIONS["autoretry_for"]:
            raise
        except Exception:
            logger.exception("bot move of %s at v%s failed", game_id, version)
            outcomes.append("failed")
    return outcomes


@worker_ready.connect
def _clear_bot_marks(**kwargs: Any) -> None:
    """A worker (re)started: the bot moves a dead one had in hand may be queued again at once."""
    scheduling.clear_marks()


@shared_task(name=scheduling.EXPIRE_TURN, **TASK_OPTIONS)
def expire_turn(game_id: str, version: int) -> str:
    """Play for a seat whose turn deadline passed, if the game is still at ``version``."""
    return _run(play.expire_turn, game_id, version)


@shared_task(name=scheduling.DEAL_NEXT_ROUND, **TASK_OPTIONS)
def deal_next_round(game_id: str, version: int) -> str:
    """Deal the next round after a round that did not end the match."""
    return _run(play.deal_next_round, game_id, version)


@shared_task(name=scheduling.ABORT_IDLE, **TASK_OPTIONS)
def abort_idle(game_id: str, version: int) -> str:
    """Abort a started table without turn limits left idle too long (no result, no rating)."""
    return _run(play.abort_idle, game_id, version)


@shared_task(name="games.tasks.sweep", ignore_result=True)
def sweep() -> dict[str, int]:
    """Periodic (beat): queue the work of tables left behind by lost tasks or dead workers."""
    return scheduling.sweep()


@shared_task(name="games.tasks.compact_events", ignore_result=True)
def compact_events() -> dict[str, int]:
    """Periodic (beat): pack the events of matches settled ``TONGITS_COMPACT_AFTER_SECONDS``
    ago into their archives (``games.archive``), a bounded batch a run."""
    return archive.compact(timedelta(seconds=settings.TONGITS_COMPACT_AFTER_SECONDS), COMPACT_BATCH)
