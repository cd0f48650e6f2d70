"""Celery: one delivery per task, a push or a webhook; thin calls of the delivery services.

Tasks are queued by the notifier (``notifications.runner``) for the deliveries that are due: a
webhook each, pushes in batches (``deliver_pushes``; ``deliver_push`` sends one). They
are ``acks_late`` with ``reject_on_worker_lost``, and each delivery is claimed with a lease in the
database before it is sent, so a worker killed in the middle of one leaves it due again: it is
delivered at least once (a webhook with the same ``webhook-id``, for the receiver to deduplicate).
A task that finds its delivery done, or claimed by another, does nothing.
"""

from __future__ import annotations

from celery import shared_task

from core.tasks import TASK_OPTIONS
from metrics import instruments
from notifications import push, webhooks

DELIVER_PUSH = "notifications.tasks.deliver_push"
DELIVER_PUSHES = "notifications.tasks.deliver_pushes"
DELIVER_WEBHOOK = "notifications.tasks.deliver_webhook"

#: As the games' tasks: acknowledged late, delivered again when the worker is lost, retried
#: shortly while the database is away.
DELIVERY_TASK_OPTIONS = TASK_OPTIONS


@shared_task(name=DELIVER_PUSH, **DELIVERY_TASK_OPTIONS)
def deliver_push(delivery_id: int) -> str:
    """Send one push (or skip it: a stream is open, a newer turn replaced it)."""
    outcome = push.deliver(delivery_id)
    instruments.deliveries.labels("push", outcome).inc()
    return outcome


@shared_task(name=DELIVER_PUSHES, **DELIVERY_TASK_OPTIONS)
def deliver_pushes(delivery_ids: list[int]) -> dict[str, int]:
    """Send a batch of pushes (the notifier queues due ones ``TONGITS_PUSH_BATCH`` at a time):
    how many came to each outcome."""
    counts: dict[str, int] = {}
    for outcome in push.deliver_many(delivery_ids).values():
        key = outcome.split(":")[0].split(" in ")[0]
        counts[key] = counts.get(key, 0) + 1
    return counts


@shared_task(name=DELIVER_WEBHOOK, **DELIVERY_TASK_OPTIONS)
def deliver_webhook(delivery_id: int) -> str:
    """Post one signed webhook; a failure is tried again on the schedule."""
    outcome = webhooks.deliver(delivery_id)
    instruments.deliveries.labels("webhook", outcome).inc()
    return outcome
