"""``GET /healthz``: liveness and readiness for load balancers, the compose health checks and
the runner of ``make run`` (``ops.stack``).

It lives outside ``/api/`` (no authentication, not in the OpenAPI schema). 200 ``{"status":
"ok"}`` only when

- the database answers, and
- the sweeper (the beat task ``sweep``, run by a worker) has run within
  ``TONGITS_HEALTH_LATE_INTERVALS`` (3) sweep intervals: its heartbeat row proves that beat, the
  broker and a worker all still work. A process that started less than that ago gives the stack
  that long before it counts the sweeper late.

Otherwise 503 ``{"status": "unavailable", "late": ["sweeper"], "detail": ...}`` (or
``"database": "unreachable"``), naming the part that is late. Two indexed reads, no lock.

``GET /healthz?scope=node`` asks only whether this web node can serve: its database answers.
It is the load balancer's probe in front of several nodes (``make cluster``'s HAProxy): a late
sweeper is every node's news at once, and taking them all out of the balancer for it would turn
a late bot move into an outage.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

#: Heartbeats /healthz checks (name -> what runs it), each due every sweep interval.
PARTS = {"sweeper": "celery beat's sweep task, run by a worker"}
STARTED = time.time()


def late_parts(beats: dict[str, float], now: float, started: float | None = None) -> list[str]:
    """The parts whose last heartbeat (epoch seconds) is older than the limit, counting from
    ``started`` (this process's start) at the earliest."""
    limit = settings.TONGITS_HEALTH_LATE_INTERVALS * settings.TONGITS_SWEEP_INTERVAL_SECONDS
    since = STARTED if started is None else started
    return [name for name in PARTS if now - max(beats.get(name, 0.0), since) > limit]


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """200 ``{"status": "ok"}``, else 503 naming what is unreachable or late (with
    ``scope=node``: only whether the database answers)."""
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT name, EXTRACT(EPOCH FROM beat_at) FROM ops_heartbeat WHERE name = ANY(%s)",
                [list(PARTS)],
            )
            beats = {name: float(epoch) for name, epoch in cursor.fetchall()}
    except DatabaseError:
        return JsonResponse({"status": "unavailable", "database": "unreachable"}, status=503)
    if request.GET.get("scope") == "node":
        return JsonResponse({"status": "ok"})
    now = time.time()
    late = late_parts(beats, now)
    if late:
        ages = ", ".join(
            f"{name} last ran {now - beats[name]:.0f} s ago"
            if name in beats
            else f"{name} never ran"
            for name in late
        )
        return JsonResponse(
            {"status": "unavailable", "late": late, "detail": f"{ages} ({PARTS[late[0]]})."},
            status=503,
        )
    return JsonResponse({"status": "ok"})
