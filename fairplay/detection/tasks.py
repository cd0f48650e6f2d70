"""The scoring task, and what queues it: the settlement task's success, and a periodic sweep.

Scoring runs in the worker after the settlement, never in a request or in the settlement's own
transaction: when ``accounts.tasks.settle_match`` ends with ``settled``, Celery's
``task_postrun`` signal (heard in the worker that ran it) queues ``score_match`` for that game.
A lost message is caught by ``sweep`` (beat, every few minutes): settled matches not yet scored.
``fairplay.detection`` imports neither ``accounts`` nor the settlement: it knows the task's name.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task, signals

from core.tasks import SETTLE_MATCH, TASK_OPTIONS
from fairplay.detection import projections
from fairplay.detection.models import ScoredMatch
from games.models import Game

logger = logging.getLogger(__name__)

SCORE_MATCH = "fairplay.detection.tasks.score_match"
#: Settled matches a sweep queues at most.
SWEEP_BATCH = 500


@shared_task(name=SCORE_MATCH, **TASK_OPTIONS)
def score_match(game_id: str) -> str:
    """Score one settled match into the projections and raise its flags; a second run changes
    nothing (``already_scored``)."""
    return projections.project(game_id)


@shared_task(name="fairplay.detection.tasks.sweep", ignore_result=True)
def sweep() -> int:
    """Queue the scoring of settled matches that were never scored (a lost message)."""
    scored = ScoredMatch.objects.values("game_id")
    missing = list(
        Game.objects.filter(status=Game.Status.FINISHED, settled_at__isnull=False)
        .exclude(pk__in=scored)
        .order_by("settled_at")
        .values_list("pk", flat=True)[:SWEEP_BATCH]
    )
    for game_id in missing:
        score_match.delay(str(game_id))
    return len(missing)


def _settled(task: Any = None, args: Any = None, retval: Any = None, **kwargs: Any) -> None:
    if getattr(task, "name", None) == SETTLE_MATCH and retval == "settled" and args:
        try:
            score_match.delay(str(args[0]))
        except Exception:  # the sweep queues it later: a settlement never fails for this
            logger.warning("could not queue the scoring of %s", args[0], exc_info=True)


def connect() -> None:
    signals.task_postrun.connect(_settled, dispatch_uid="detection.settled", weak=False)
