"""The tournaments' loop, beside the scheduler (``games.scheduling.COMPANIONS``): it asks one
question (``services.due``) and queues ``advance`` for each tournament with work; first it
opens the next tournament of each active series that has none registering
(``services.replenish``).

It wakes on its channel's ``NOTIFY`` (a tournament created, a sit-and-go filled) and at least
every ``TONGITS_TOURNAMENT_POLL_SECONDS``. A tournament queued is not queued again for
``REQUEUE_SECONDS`` unless its task ran: ``advance`` is idempotent, so a copy is harmless, only
wasted. The sweeper (``tournaments.tasks.sweep``, a beat task) is the safety net.
"""

from __future__ import annotations

import logging
import threading
import time

from celery import current_app
from django.conf import settings
from django.db import connection

from core import listening
from tournaments import services

logger = logging.getLogger(__name__)

ADVANCE = "tournaments.tasks.advance"
SWEEP = "tournaments.tasks.sweep"
REQUEUE_SECONDS = 2.0


def queue(tournament_id: object) -> bool:
    """Send ``advance`` for one tournament; False (logged) if the broker refused."""
    try:
        current_app.send_task(ADVANCE, args=(str(tournament_id),))
    except Exception:  # the broker is down: the next pass or the sweeper queues it again
        logger.exception("could not queue advance(%s)", tournament_id)
        return False
    return True


def run_once(queued: dict[str, float]) -> int:
    """One pass: queue what is due and was not queued in the last ``REQUEUE_SECONDS``."""
    now = time.monotonic()
    sent = 0
    services.replenish()
    for tournament_id in services.due():
        key = str(tournament_id)
        if now - queued.get(key, -REQUEUE_SECONDS) < REQUEUE_SECONDS:
            continue
        if queue(key):
            queued[key] = now
            sent += 1
    for key in [k for k, at in queued.items() if now - at > 10 * REQUEUE_SECONDS]:
        del queued[key]
    return sent


def run_tournaments(stop: threading.Event, *, poll: float | None = None) -> None:
    """The loop, until ``stop``; a database error is logged and retried, never fatal."""
    interval = settings.TONGITS_TOURNAMENT_POLL_SECONDS if poll is None else poll
    listener = listening.listen("tournaments", services.CHANNEL)
    queued: dict[str, float] = {}
    try:
        while not stop.is_set():
            try:
                run_once(queued)
            except Exception:
                logger.exception("tournaments: pass failed; retrying")
                connection.close()
            if listener is None:
                stop.wait(interval)
                listener = listening.listen("tournaments", services.CHANNEL)
            elif not listening.wait(listener, interval, "tournaments"):
                listener = None
    finally:
        if listener is not None:
            listener.close()
        connection.close()
