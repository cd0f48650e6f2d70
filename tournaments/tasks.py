"""The tournaments' Celery tasks: ``advance`` (queued by the tournaments' loop) and ``sweep``
(beat), both calling the services; ``season_close`` (beat) archives and rewards last week."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from core.tasks import TASK_OPTIONS
from tournaments import loop, seasons, services

logger = logging.getLogger(__name__)


@shared_task(name=loop.ADVANCE, **TASK_OPTIONS)
def advance(tournament_id: str) -> str:
    """Take one tournament a step on (``services.advance``); a copy run twice changes nothing."""
    return services.advance(tournament_id)


@shared_task(name=loop.SWEEP)
def sweep() -> int:
    """Beat: queue ``advance`` for every tournament with work, and for running ones untouched
    for ``TONGITS_TOURNAMENT_STALLED_SECONDS`` (the loop is down, or a task was lost)."""
    found = services.due(stalled_after=settings.TONGITS_TOURNAMENT_STALLED_SECONDS)
    sent = sum(loop.queue(tournament_id) for tournament_id in found)
    if sent:
        logger.info("tournaments sweep queued %s", sent)
    return sent


@shared_task(name="tournaments.tasks.close_seasons")
def close_seasons() -> int:
    """Beat: archive each room's week that just ended and pay its rewards (once)."""
    return seasons.close()
