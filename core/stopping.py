"""A long-running command's stop on SIGTERM or SIGINT, set safely from a signal handler.

A handler runs in the main thread between two bytecodes, possibly while that thread is inside
``stop.wait()`` holding the event's internal lock; calling ``stop.set()`` there would wait for
that same lock forever (the command then ignores every later signal and must be killed). The
handler hands the ``set`` to a thread of its own, which takes the lock once the main thread lets
go of it.
"""

from __future__ import annotations

import signal
import threading


def stop_on_signals(stop: threading.Event) -> None:
    """Set ``stop`` when the process gets SIGTERM or SIGINT (main thread only)."""

    def handler(signum: int, frame: object) -> None:
        threading.Thread(target=stop.set, name="stop", daemon=True).start()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, handler)
