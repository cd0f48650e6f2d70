"""What the project's Celery tasks share, below every app that defines or hears one.

Every task that changes state is acknowledged once done (``acks_late``, redelivered when its
worker dies) and retried while the database is briefly away (failover, restart): each task is
idempotent by its arguments, so a second run is harmless. The settlement task's name is here
because four apps meet at it: accounts defines it, games queues it, metrics and fair play hear
it end, and none of the last three may import accounts.
"""

from __future__ import annotations

from typing import Any

from django.db import InterfaceError, OperationalError

TASK_OPTIONS: dict[str, Any] = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "ignore_result": True,
    "autoretry_for": (OperationalError, InterfaceError),
    "retry_backoff": 1,
    "retry_backoff_max": 30,
    "max_retries": 5,
}

#: The settlement task (``accounts.tasks.settle_match``).
SETTLE_MATCH = "accounts.tasks.settle_match"
