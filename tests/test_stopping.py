"""A long-running command's stop (``core.stopping``): a signal that arrives while the main thread
holds the stop event's lock (inside ``stop.wait()``, as the scheduler's and the notifier's loops
mostly are) still stops the command, where a handler calling ``stop.set()`` itself hung for good
and left a ``run_scheduler`` running after its SIGTERM."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: The main thread takes the event's own lock (CPython's ``Event._cond``, the lock ``wait`` holds
#: between its steps), and the signal arrives right then.
HELD_WHEN_SIGNALLED = textwrap.dedent(
    """
    import signal, threading
    from core.stopping import stop_on_signals

    stop = threading.Event()
    stop_on_signals(stop)
    with stop._cond:
        signal.raise_signal(signal.{sig})
    print("set" if stop.wait(5) else "not set", flush=True)
    """
)


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_signal_while_the_stop_events_lock_is_held_still_stops(sig: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", HELD_WHEN_SIGNALLED.format(sig=sig)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "set"
