"""Where the live package touches the database: a small pool of threads, shared by all streams.

The event loop never runs the ORM. Each of these threads keeps its own Django connection for as
long as the process lives, so a process holds at most ``THREADS`` connections for its streams
and long-polls, however many are open (plus the listener's one), instead of one per stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

from django.db import InterfaceError, OperationalError, connections

THREADS = 4
T = TypeVar("T")

_executor = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="live-db")


# Set by tongits_site.asgi (an ASGI server, long-lived): the pool's threads keep their
# connections. Elsewhere (in-process test clients, scripts) each call closes its own, so nothing
# is left open on a database that is about to be dropped.
keep_connections = False


def _call(fn: Callable[..., T], args: tuple, kwargs: dict) -> T:
    try:
        try:
            return fn(*args, **kwargs)
        except (OperationalError, InterfaceError):
            # A connection the server dropped (restart, idle time-out): reconnect once and
            # retry; these reads change nothing, so running one twice is harmless.
            connections.close_all()
            return fn(*args, **kwargs)
    finally:
        if not keep_connections:
            connections.close_all()


async def run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in the pool; the caller's coroutine waits without a thread."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_executor, partial(_call, fn, args, kwargs))
