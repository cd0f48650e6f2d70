"""A web worker whose gunicorn arbiter dies stops, instead of serving on beside its replacement.

An arbiter killed outright (``kill -9``, the OOM killer) cannot stop its workers: they are
adopted by init and go on listening on the node's port with their own ``SO_REUSEPORT`` sockets,
each holding its database pool, next to the workers of the arbiter that replaces it, and
nothing would ever stop them. gunicorn's own worker classes compare ``os.getppid()`` with the
arbiter's pid in their loop; the uvicorn worker hands its loop to uvicorn's server, which only
calls the worker back to refresh its heartbeat file, so no such check ever runs there.

``watch`` waits in a thread on a pidfd of the arbiter, which the kernel makes readable the
moment the arbiter ends (no polling, no wake-up while it lives). Then it stops the worker as
the arbiter's own SIGTERM does: uvicorn's graceful shutdown (the listening sockets close, the
requests in hand are answered, the live streams end and their clients reconnect elsewhere) and
the process exits, closing its pool. Since no arbiter is left to kill a worker that does not
stop, the thread ends the process itself after the graceful timeout.
"""

from __future__ import annotations

import os
import select
import signal
import threading
import time
from typing import Any

# Without pidfds (not Linux 5.3 or later): how often the thread asks for its parent's pid.
POLL_SECONDS = 0.5


def wait_for_parent(parent: int) -> None:
    """Return once ``parent``, this process's parent, has ended."""
    try:
        fd = os.pidfd_open(parent)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):
        while os.getppid() == parent:
            time.sleep(POLL_SECONDS)
        return
    try:
        # Checked after the pidfd is open: a parent that ended before it may have left its pid
        # to another process, which the pidfd would then follow.
        if os.getppid() == parent:
            select.select([fd], [], [])  # readable once it has ended
    finally:
        os.close(fd)


def _stop_when_orphaned(parent: int, grace: float, log: Any) -> None:
    wait_for_parent(parent)
    log.warning("Worker %s: its arbiter (pid %s) is gone; stopping", os.getpid(), parent)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(grace)
    log.error("Worker %s did not stop within %.0f s; exiting", os.getpid(), grace)
    os._exit(1)


def watch(parent: int, grace: float, log: Any) -> threading.Thread:
    """In a worker, once its signal handlers are its own: stop it (SIGTERM to itself) when
    ``parent`` ends, and exit outright ``grace`` seconds later if it is still running."""
    thread = threading.Thread(
        target=_stop_when_orphaned, args=(parent, grace, log), name="parent-watch", daemon=True
    )
    thread.start()
    return thread
