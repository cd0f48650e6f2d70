"""The request metrics, taken where every request passes: around the ASGI application, so the
REST API, the streams and the moves answered without Django's handler (``runtime.shortcuts``)
all count, each once, when its last byte is sent (or the client left).

The route is the URL pattern's name (``django.urls.resolve``, remembered per path), never the
raw path: game ids would make a label per game.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from typing import Any

from django.db import connections
from django.urls import Resolver404, resolve

from metrics import instruments

App = Callable[[dict[str, Any], Any, Any], Awaitable[None]]
#: How often (s) a process reports its database pool's state.
POOL_REPORT_SECONDS = 1.0
_pool_reported = 0.0


@functools.lru_cache(maxsize=4096)
def route(path: str) -> str:
    """The URL pattern's name of ``path`` (``unmatched`` for a 404 of the resolver)."""
    try:
        match = resolve(path)
    except Resolver404:
        return "unmatched"
    return match.url_name or match.view_name or "unnamed"


def _report_pool() -> None:
    global _pool_reported
    now = time.monotonic()
    if now - _pool_reported < POOL_REPORT_SECONDS:
        return
    _pool_reported = now
    pool = getattr(connections["default"], "pool", None)
    if pool is None:
        return
    stats = pool.get_stats()
    instruments.pool.labels("size").set(stats.get("pool_size", 0))
    instruments.pool.labels("idle").set(stats.get("pool_available", 0))
    instruments.pool.labels("waiting").set(stats.get("requests_waiting", 0))


def counted(app: App) -> App:
    """``app`` with each HTTP request observed in ``instruments.requests`` and, while it is
    being served, counted in ``instruments.in_progress``."""

    async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [0]
        name = route(scope.get("path", ""))
        arrived = instruments.in_progress.labels(name)
        arrived.inc()

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await app(scope, receive, sending)
        finally:
            instruments.requests.labels(
                name, scope.get("method", ""), str(status[0] or 499)
            ).observe(time.perf_counter() - started)
            arrived.dec()  # after the count: at 0 every request received is counted
            _report_pool()

    return application
