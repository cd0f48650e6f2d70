"""What the push and the webhook outboxes share: how long a claimed delivery is its worker's.

A delivery is claimed in the database before it is sent (``next_attempt_at`` pushed this far
ahead); a worker killed with it leaves it due again once this runs out, and the notifier queues
it again. It must outlast one request (``TONGITS_DELIVERY_TIMEOUT_SECONDS``), so it is that plus
a margin (``TONGITS_DELIVERY_LEASE_MARGIN_SECONDS``).
"""

from __future__ import annotations

from django.conf import settings


def lease_seconds() -> float:
    """Seconds a claimed delivery stays with its worker."""
    return float(settings.TONGITS_DELIVERY_TIMEOUT_SECONDS) + float(
        settings.TONGITS_DELIVERY_LEASE_MARGIN_SECONDS
    )
