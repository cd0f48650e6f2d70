"""Celery: one delivery per task, a push or a webhook; thin calls of the delivery services.

Tasks are queued by the notifier (``notifications.runner``) for each delivery that is due. They
are ``acks_late`` with ``reject_on_worker_lost``, and each delivery is claimed with a lease in the
database before it is sent, so a worker killed in the middle of one leaves it due again: it is
delivered at least once (a webhook with the same ``webhook-id``, for the receiver to deduplicate).
A task that finds its delivery done, or claimed by another, does nothing.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.db import InterfaceError, OperationalError

from notifications import push, webhooks

DELIVER_PUSH = "notifications.tasks.deliver_push"
DELIVER_WEBHOOK = "notifications.tasks.deliver_webhook"

DELIVERY_TASK_OPTIONS: dict[str, Any] = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "ignore_result": True,
    # A database that is briefly away: try again shortly (the lease re-queues it anyway).
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": 1,
    "retry_backoff_max": 30,
    "max_retries": 5,
}


@shared_task(name=DELIVER_PUSH, **DELIVERY_TASK_OPTIONS)
def deliver_push(delivery_id: int) -> str:
    """Send one push (or skip it: a stream is open, a newer turn replaced it)."""
    return push.deliver(delivery_id)


@shared_task(name=DELIVER_WEBHOOK, **DELIVERY_TASK_OPTIONS)
def deliver_webhook(delivery_id: int) -> str:
    """Post one signed webhook; a failure is tried again on the schedule."""
    return webhooks.deliver(delivery_id)
