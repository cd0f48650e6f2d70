"""Celery's signals recorded as metrics: each task's wait in its queue and its duration, by
name (and end state), and a settlement's lag from its match's end (read from the game's row
once the task settled it).

The wait is measured from a header the publisher adds (``PUBLISHED``: its clock, Unix time),
or from the task's ``eta`` when it was queued with a countdown, to ``task_prerun`` in the
worker: the clocks of one machine, or of machines kept in step (NTP), as every deployment's."""

from __future__ import annotations

import contextlib
import logging
import time
from datetime import datetime
from typing import Any

from celery import signals
from django.db import DatabaseError, connection

from core.tasks import SETTLE_MATCH
from metrics import instruments

logger = logging.getLogger(__name__)

#: The message header that carries the publishing time.
PUBLISHED = "tongits_published_at"
_started: dict[str, float] = {}


def _publishing(headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
    if headers is not None:
        headers[PUBLISHED] = time.time()


def queued_for(request: Any, now: float) -> float | None:
    """Seconds ``request`` (a task's ``request``) waited to start: from its due time (its
    ``eta``) or else its publishing; None for a task published without the header."""
    published = getattr(request, PUBLISHED, None)
    if published is None:
        return None
    due = float(published)
    eta = getattr(request, "eta", None)
    if eta:
        with contextlib.suppress(ValueError):
            due = max(due, datetime.fromisoformat(str(eta)).timestamp())
    return max(0.0, now - due)


def _prerun(task_id: str | None = None, task: Any = None, **kwargs: Any) -> None:
    if task_id:
        _started[task_id] = time.monotonic()
    waited = queued_for(getattr(task, "request", None), time.time())
    if waited is not None:
        instruments.task_queue.labels(getattr(task, "name", None) or "unknown").observe(waited)


def _postrun(
    task_id: str | None = None,
    task: Any = None,
    args: Any = None,
    retval: Any = None,
    state: str | None = None,
    **kwargs: Any,
) -> None:
    began = _started.pop(task_id or "", None)
    name = getattr(task, "name", None) or "unknown"
    if began is not None:
        instruments.tasks.labels(name, state or "unknown").observe(time.monotonic() - began)
    if name == SETTLE_MATCH and retval == "settled" and args:
        _settled(str(args[0]))


def _settled(game_id: str) -> None:
    """Observe now minus the match's end (``games_game.finished_at``)."""
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT EXTRACT(EPOCH FROM clock_timestamp() - finished_at) FROM games_game "
                "WHERE id = %s AND finished_at IS NOT NULL",
                [game_id],
            )
            row = cursor.fetchone()
    except DatabaseError:
        logger.warning("metrics: could not read game %s's end", game_id, exc_info=True)
        return
    if row is not None and row[0] is not None:
        instruments.settlement_lag.observe(max(0.0, float(row[0])))


def connect() -> None:
    signals.before_task_publish.connect(
        _publishing, dispatch_uid="metrics.before_task_publish", weak=False
    )
    signals.task_prerun.connect(_prerun, dispatch_uid="metrics.task_prerun", weak=False)
    signals.task_postrun.connect(_postrun, dispatch_uid="metrics.task_postrun", weak=False)
