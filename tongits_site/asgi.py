"""ASGI entry point: what gunicorn's uvicorn workers (and uvicorn) serve.

Two doors into one Django project, chosen by path:

- the long-poll (``/games/{id}/events`` with ``wait=``) goes to Django's ASGI handler: it waits
  in the event loop as an async view and holds no thread;
- every other request goes to Django's WSGI handler in one hop into a thread pool
  (``runtime.wsgi_bridge``), because Django's ASGI handler runs a sync view's middleware,
  signals and view in a dozen and more separate thread hops, which cost a REST request far
  more than one hop does (docs/scaling.md, "The web process's choices"). The streams
  (``/games/{id}/stream``, ``/me/stream``) too: checked in that hop, then fed by the loop, with
  no thread of their own while they stay open. A move that Django would play unchanged is
  answered in that hop without the handler (``runtime.shortcuts``, ``games.api.shortcuts``).
"""

import os
import re
import sys
from typing import Any

from django.conf import settings
from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application

from metrics.asgi import counted
from runtime import heap
from runtime.wsgi_bridge import OneHopWSGI

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tongits_site.settings")

# Threads per process for the REST API: 4, because more threads in one process only queue for
# its GIL and raise the tail latency, and fewer gained nothing (docs/scaling.md, "The web
# process's choices"). A request that blocks (a password hash) holds one thread.
WEB_THREADS_DEFAULT = 4

# The interpreter lock's switch interval in milliseconds: 1, not Python's 5, so a move's thread
# waits less behind the event loop's stream work each time it needs the lock back (docs/scaling.md).
WEB_GIL_SWITCH_MS_DEFAULT = 1.0

sys.setswitchinterval(
    float(os.environ.get("WEB_GIL_SWITCH_MS") or WEB_GIL_SWITCH_MS_DEFAULT) / 1000
)

live = get_asgi_application()

from games.api.shortcuts import SHORTCUTS  # noqa: E402 (after Django is set up)

rest = OneHopWSGI(
    get_wsgi_application(),
    workers=int(os.environ.get("WEB_THREADS") or WEB_THREADS_DEFAULT),
    max_body=settings.TONGITS_MAX_BODY_BYTES,
    # A move skips Django's handler when Django would play it unchanged (runtime.shortcuts).
    shortcuts=SHORTCUTS if settings.TONGITS_SHORTCUTS else (),
)

# A long-lived server process: the live pool's threads keep their database connections.
from games.live import db as live_db  # noqa: E402 (after Django is set up)

live_db.keep_connections = True
heap.settle()

EVENTS_PATH = re.compile(r"^/api/v1/games/[^/]+/events/?$")


_hearing_started = False


def _start_hearing() -> None:
    """Start this process's live listener (``games.live.listener``) with its first request, not
    only with its first stream: while it is connected the process hears revocations, so a
    token's look-up is remembered ``TONGITS_TOKEN_CACHE_HEARING_SECONDS`` instead of 1 s
    (``accounts.token_cache``). Without it, every web process looked each token up once a
    second, and a read-only client committed a transaction a second per process
    (docs/scaling.md, "A read commits nothing")."""
    global _hearing_started
    _hearing_started = True
    from games.live import listener

    listener.get()


def is_live(scope: dict[str, Any]) -> bool:
    """Requests that wait in the event loop as a view: the event feed's long-poll. (A stream
    is checked in the pool and then fed by the loop: ``runtime.wsgi_bridge``.)"""
    if scope["type"] != "http":
        return True  # lifespan: Django's own handler answers it
    path = scope.get("path", "")
    return bool(EVENTS_PATH.match(path)) and b"wait=" in scope.get("query_string", b"")


async def served(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if not _hearing_started and scope["type"] == "http":
        _start_hearing()
    if is_live(scope):
        await live(scope, receive, send)
    else:
        await rest(scope, receive, send)


# Every request observed in the request metrics (metrics.asgi), whichever door it takes.
application = counted(served)
