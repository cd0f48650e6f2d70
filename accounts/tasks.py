"""The settlement task: where a finished game meets the players' records; the reset mail.

``games`` does not import ``accounts``; this task is the one place that joins them. In one
transaction it marks the match settled and pays its table stakes out of the escrow
(``games.settlement.settle``), and projects it into the players' history, stats and ratings
(``accounts.projections.project_match``). Both are idempotent, so a redelivered task changes
nothing; an aborted match with chips at stake is settled too (its buy-ins refunded).

``send_password_reset`` mails a reset link: the request queues it for any address, so the
answer and its time are the same whether the address is known or not.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.db import transaction
from django.utils import timezone

from accounts import projections, services
from core import replica
from core.tasks import TASK_OPTIONS
from games import scheduling, settlement
from games.errors import GameNotFound

logger = logging.getLogger(__name__)


def settle_match_now(game_id: str) -> str:
    """Settle and project one match (what the task runs): ``settled``, ``refunded`` (an aborted
    match's buy-ins), ``nothing_to_do``."""
    try:
        with transaction.atomic():
            # The public history reads a standby (core.replica): settled means on it too.
            replica.commit_visible_on_replica()
            settled = settlement.settle(game_id=game_id)
            if settled is None:
                return "nothing_to_do"
            if settled is settlement.Settled.ABORTED:
                return "refunded"
            projections.project_match(game_id)
    except GameNotFound:
        logger.warning("settle_match: no game %s", game_id)
        return "no_game"
    return "settled"


@shared_task(name=scheduling.SETTLE_MATCH, **TASK_OPTIONS)
def settle_match(game_id: str, version: int) -> str:
    """Record a finished match's results; a second run changes nothing.

    ``version`` is kept for the shape every game task has: a finished match never moves on.
    """
    return settle_match_now(game_id)


@shared_task(
    name=services.SEND_PASSWORD_RESET,
    autoretry_for=(OSError,),  # the mail server did not answer: try again shortly
    retry_backoff=True,
    max_retries=5,
)
def send_password_reset(email: str) -> int:
    """Mail the reset link to the accounts with this address (none: nothing is sent)."""
    return services.password_reset_send(email=email)


#: Expired sessions are kept this long (answering 401 token_expired), then purged.
EXPIRED_SESSIONS_KEPT = timedelta(days=30)


@shared_task(name="accounts.tasks.purge_sessions")
def purge_sessions() -> int:
    """Beat, daily: delete sessions that expired more than EXPIRED_SESSIONS_KEPT ago."""
    return services.sessions_purge(expired_before=timezone.now() - EXPIRED_SESSIONS_KEPT)
