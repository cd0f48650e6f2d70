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

import psycopg
from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

#: Heartbeats /healthz checks (name -> what runs it), each due every sweep interval.
PARTS = {"sweeper": "celery beat's sweep task, run by a worker"}
STARTED = time.time()
#: How long /healthz waits for a connection of its process's pool before it tries one of its
#: own (the pool's own wait, 10 s, is for requests that must be served, not for a probe).
POOL_WAIT_SECONDS = 1.0
#: psycopg's shortest connect timeout (it raises anything less to 2 s, as libpq does).
CONNECT_SECONDS = 2
BEATS_SQL = "SELECT name, EXTRACT(EPOCH FROM beat_at) FROM ops_heartbeat WHERE name = ANY(%s)"


class Unreachable(Exception):
    """The database did not answer the probe."""


def _beats_on(conn: psycopg.Connection) -> dict[str, float]:
    with conn.cursor() as cursor:
        cursor.execute(BEATS_SQL, [list(PARTS)])
        return {name: float(epoch) for name, epoch in cursor.fetchall()}


def read_beats() -> dict[str, float]:
    """The heartbeats (epoch seconds), answered within about ``POOL_WAIT_SECONDS`` when the
    database is gone: with a pool, a connection is asked of it for that long only, and then one
    of the probe's own is opened (refused at once by a database that is gone; a pool that is
    merely busy does not make the node look dead). Raises ``Unreachable``."""
    pool = getattr(connection, "pool", None)
    if pool is None or connection.connection is not None:
        try:
            with connection.cursor() as cursor:
                cursor.execute(BEATS_SQL, [list(PARTS)])
                return {name: float(epoch) for name, epoch in cursor.fetchall()}
        except DatabaseError as error:
            raise Unreachable from error
    from psycopg_pool import PoolTimeout

    pool.open()
    try:
        with pool.connection(timeout=POOL_WAIT_SECONDS) as conn:
            return _beats_on(conn)
    except PoolTimeout:
        pass
    except psycopg.Error as error:  # a pooled connection broke in our hands
        raise Unreachable from error
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    try:
        with psycopg.connect(**params, autocommit=True, connect_timeout=CONNECT_SECONDS) as conn:
            return _beats_on(conn)
    except psycopg.Error as error:
        raise Unreachable from error


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
        beats = read_beats()
    except Unreachable:
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
