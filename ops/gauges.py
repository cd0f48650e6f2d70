"""How many of something are open now across the machine's web processes (with Redis, across
machines): a game's spectator streams. Counted, not exact to the millisecond, and cheap.

How: time is cut into windows of ``WINDOW_SECONDS``; each window of a gauge has a shared count
(key ``g:<name>:<window>``) where the throttles count (``ops.throttling``: Redis when CACHE_URL
names one, else the machine's shared table ``ops.tally``). Each event loop (one per web
process) keeps its own open counts and, once at the start of each window (one timer for all of
its gauges), adds each of them to that window's count; an opening or a closing after the loop
reported into the window adds +1 or -1 to it at once. So a window's count is the number open,
summed over the processes, as soon as every process has reported into it (a few milliseconds
past its start): ``read`` takes the current window's, or the previous one's during the first
``GRACE_SECONDS`` of a window. A process killed outright (``kill -9``) stops reporting: its
streams drop out of the count at the next window.

Every failure (Redis away) is logged and costs the count only, never a stream.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from collections.abc import Iterator

from django.conf import settings

from ops import counts
from ops.tally import tally

logger = logging.getLogger(__name__)

WINDOW_SECONDS = 5.0
GRACE_SECONDS = 0.5
#: How long a window's count outlives it (read during the next window's grace).
TTL_SECONDS = 3 * WINDOW_SECONDS


def _window(now: float) -> int:
    return int(now // WINDOW_SECONDS)


def _key(name: str, window: int) -> str:
    return f"g:{name}:{window}"


def _add(changes: dict[str, int], window: int) -> None:
    """Add each name's change to its count of ``window``."""
    try:
        store = counts.shared()
        if store is None:
            table = tally(settings.TONGITS_THROTTLE_COUNTS_FILE)
            for name, amount in changes.items():
                table.add(_key(name, window), TTL_SECONDS, amount=amount)
            return
        for name, amount in changes.items():
            key = _key(name, window)
            store.add(key, 0, int(TTL_SECONDS))
            store.incr(key, amount)
    except Exception:
        logger.warning("gauges: could not count %s", sorted(changes), exc_info=True)


def read(names: list[str], now: float | None = None) -> dict[str, int]:
    """Each gauge's count now (0 when nothing is open, or the count cannot be read)."""
    if not names:
        return {}
    now = time.time() if now is None else now
    window = _window(now)
    if now - window * WINDOW_SECONDS < GRACE_SECONDS:
        window -= 1  # some processes may not have reported into this window yet
    keys = {name: _key(name, window) for name in names}
    try:
        store = counts.shared()
        if store is None:
            table = tally(settings.TONGITS_THROTTLE_COUNTS_FILE)
            found = {name: table.count(key, now) for name, key in keys.items()}
        else:
            got = store.get_many(list(keys.values()))
            found = {name: int(got.get(key) or 0) for name, key in keys.items()}
    except Exception:
        logger.warning("gauges: could not read %d counts", len(names), exc_info=True)
        return dict.fromkeys(names, 0)
    return {name: max(0, count) for name, count in found.items()}


class _Loop:
    """One event loop's open counts, and the timer that reports them once a window."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.open: collections.Counter[str] = collections.Counter()
        self.reported = -1  # the window this loop last reported into
        self.task: asyncio.Task | None = None

    def change(self, name: str, amount: int) -> None:
        self.open[name] += amount
        if self.open[name] <= 0:
            del self.open[name]
        if self.reported == _window(time.time()):
            self._send({name: amount}, self.reported)
        if self.open and (self.task is None or self.task.done()):
            self.task = self.loop.create_task(self._run(), name="gauges")

    def _send(self, changes: dict[str, int], window: int) -> None:
        if counts.shared() is None:
            _add(changes, window)  # a few memory writes: here
        else:
            self.loop.run_in_executor(None, _add, changes, window)

    async def _run(self) -> None:
        while self.open:
            now = time.time()
            window = _window(now)
            if self.reported != window:
                self.reported = window
                self._send(dict(self.open), window)
            await asyncio.sleep((window + 1) * WINDOW_SECONDS - time.time() + 0.001)


_loops: dict[asyncio.AbstractEventLoop, _Loop] = {}


def _here() -> _Loop:
    loop = asyncio.get_running_loop()
    found = _loops.get(loop)
    if found is None:
        for old in [old for old in _loops if old.is_closed()]:
            del _loops[old]
        found = _loops[loop] = _Loop(loop)
    return found


@contextlib.contextmanager
def held(name: str) -> Iterator[None]:
    """Count one more of ``name`` while inside (in a running event loop)."""
    here = _here()
    here.change(name, 1)
    try:
        yield
    finally:
        here.change(name, -1)
