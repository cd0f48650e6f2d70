"""What the push and the webhook outboxes share: the claim of a delivery's next try, and how long
a claimed delivery is its worker's.

A delivery is claimed in the database before it is sent (``next_attempt_at`` pushed this far
ahead); a worker killed with it leaves it due again once this runs out, and the notifier queues
it again. It must outlast one request (``TONGITS_DELIVERY_TIMEOUT_SECONDS``), so it is that plus
a margin (``TONGITS_DELIVERY_LEASE_MARGIN_SECONDS``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction

from notifications.models import Delivery, Status


def lease_seconds() -> float:
    """Seconds a claimed delivery stays with its worker."""
    return float(settings.TONGITS_DELIVERY_TIMEOUT_SECONDS) + float(
        settings.TONGITS_DELIVERY_LEASE_MARGIN_SECONDS
    )


#: Why a delivery was not claimed: another worker holds it (or it is not due yet), or it is over.
BUSY, DONE = "busy", "done"


def claim(
    model: type[Delivery],
    delivery_id: int,
    now: datetime,
    *,
    related: tuple[str, ...] = (),
    refuse: Callable[[Any, datetime], str | None] | None = None,
) -> tuple[Any, str]:
    """Take the next try of a delivery, committed before anything is sent: ``(delivery, "")``,
    its ``attempts`` counting this try and its ``next_attempt_at`` a lease ahead, or ``(None,
    why)``: ``BUSY``, ``DONE``, or what ``refuse(delivery, now)`` answered (it may finish the
    delivery itself, in this transaction).

    ``skip_locked``: a delivery another worker is claiming or finishing this instant is theirs,
    never waited for; ``of=("self",)``: only the delivery's row is locked, not the rows it
    shares with other deliveries (its notification, message or endpoint)."""
    with transaction.atomic():
        delivery = (
            model.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related(*related)
            .filter(pk=delivery_id)
            .first()
        )
        if delivery is None:  # locked by another worker this instant, or gone
            return None, BUSY if model.objects.filter(pk=delivery_id).exists() else DONE
        if delivery.status != Status.PENDING:
            return None, DONE
        if delivery.next_attempt_at is not None and delivery.next_attempt_at > now:
            return None, BUSY  # not due yet, or another worker's try holds its lease
        why = refuse(delivery, now) if refuse is not None else None
        if why:
            return None, why
        delivery.attempts += 1
        delivery.next_attempt_at = now + timedelta(seconds=lease_seconds())
        delivery.save(update_fields=["attempts", "next_attempt_at"])
        return delivery, ""
