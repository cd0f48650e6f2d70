"""Celery: thin calls of the store's services.

- ``consume_purchase``, queued when a Google Play purchase is credited: consumed until Google
  takes it (retried with a growing delay, up to an hour apart, for as long as it takes: Google
  refunds a purchase left unacknowledged for three days).
- ``poll_voided_purchases``, daily (Celery beat, ``CELERY_BEAT_SCHEDULE``): Google Play's
  voided purchases of the last days, each one's chips taken back once; and purchases whose
  consume task was lost are queued again.
"""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task

from store import services
from store.errors import StoreNotConfigured, StoreUnavailable


@shared_task(
    name=services.CONSUME_TASK,
    bind=True,
    autoretry_for=(StoreUnavailable,),
    retry_backoff=5,
    retry_backoff_max=3600,
    retry_jitter=True,
    max_retries=None,
    acks_late=True,
    reject_on_worker_lost=True,
)
def consume_purchase(self, purchase_id: int) -> bool:
    """Consume one credited Google Play purchase (retried while Google is out of reach)."""
    return services.consume(purchase_id)


@shared_task(name="store.tasks.poll_voided_purchases")
def poll_voided_purchases() -> int:
    """Take back the chips of Google Play purchases voided lately; queue lost consumes."""
    try:
        refunded = services.poll_voided_purchases()
    except StoreNotConfigured:
        return 0
    for purchase_id in services.unconsumed(timedelta(hours=1)):
        consume_purchase.delay(purchase_id)
    return refunded
