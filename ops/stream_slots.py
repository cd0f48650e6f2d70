"""The cap on the live streams one account holds open at once (``TONGITS_MAX_STREAMS_PER_USER``).

Why: nothing else bounds how many streams one token keeps open. Each costs the server a socket,
about 100 KiB and a share of every wake-up of its game, and a client that reconnects without
closing its old stream, or a page opened in many tabs, or a hostile script, could hold hundreds.
The cap counts every open stream of the account, a game's and ``/me/stream`` alike, across every
web process of the machine and, with Redis, every machine, where the throttles count
(``ops.throttling``); long-polls are not streams and are not counted.

How: an account has ``cap`` numbered places (keys ``ss:<user>:<n>``); an open stream holds one
under a lease, a random owner token that only that stream's renewals extend. ``take`` holds the
first free place, or finds none (the API edge answers 429 ``too_many_streams``). ``holding``
passes the stream's chunks through, renews the lease every ``RENEW_SECONDS`` while the stream is
open (one timer per event loop renews every open stream's, whatever the streams send) and
frees the place when the stream ends, however it ends: the client gone, the match over, the
server stopping, an error. A process that dies without freeing its places (``kill -9``) leaves
them taken for at most ``LEASE_SECONDS``.

Where: with Redis (``CACHE_URL``), in the ``throttle`` cache: ``SET NX`` with an expiry to take a
place, its owner compared before an extension or a delete. Without, in the machine's shared table
(``ops.tally``, the file ``TONGITS_STREAM_SLOTS_FILE``), where each of those is one step under the
table's locks. Every error errs on letting a stream through, never on refusing one that fits: a
stream whose renewals stalled past its lease may lose its place to another and then holds the
next free one, if any, at its next renewal; on Redis, a lease that runs out between the owner's
check and the extension or the delete (a millisecond) may be extended or freed for another
stream.

No HTTP here: ``take`` answers None when every place is taken, and the API edge (the live views)
turns that into the 429.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field

from django.conf import settings
from django.core.cache import BaseCache

from ops import counts
from ops.tally import tally

logger = logging.getLogger(__name__)

#: How long a place stays taken without a renewal (a process killed with its streams open).
LEASE_SECONDS = 30
#: How often an open stream renews its lease: two renewals may fail before it runs out.
RENEW_SECONDS = 10.0


#: Apps above ops that follow whether accounts have a stream open (friends' presence) register
#: ``watcher(user_id, opened)`` here at start-up: called once a stream has taken its place
#: (``opened`` True) and once it has freed it (False). A watcher must return at once (it may be
#: called in the event loop) and read ``holders`` for the truth, since the calls of several
#: processes interleave.
WATCHERS: list[Callable[[int, bool], None]] = []


def _tell(user_id: int, opened: bool) -> None:
    """Each watcher hears of the stream; one that fails is logged, the stream goes on."""
    for watcher in list(WATCHERS):
        try:
            watcher(user_id, opened)
        except Exception:
            logger.warning("stream watcher %r failed", watcher, exc_info=True)


def limit() -> int:
    """The streams one account may hold open at once; 0: no cap."""
    return max(0, int(getattr(settings, "TONGITS_MAX_STREAMS_PER_USER", 0) or 0))


def _key(user_id: int, index: int) -> str:
    return f"ss:{user_id}:{index}"


class _Machine:
    """Places in the machine's shared table (no Redis): exact across its web processes."""

    shared = False

    def hold(self, key: str, owner: int, lease: float) -> bool:
        return tally(settings.TONGITS_STREAM_SLOTS_FILE).hold(key, owner, lease)

    def drop(self, key: str, owner: int) -> None:
        tally(settings.TONGITS_STREAM_SLOTS_FILE).drop(key, owner)

    def taken(self, keys: list[str]) -> set[str]:
        table = tally(settings.TONGITS_STREAM_SLOTS_FILE)
        return {key for key in keys if table.holder(key) is not None}


class _Shared:
    """Places in the throttles' cache (Redis): shared by every machine that uses it."""

    shared = True

    @staticmethod
    def _store() -> BaseCache:
        return counts.cache()

    def hold(self, key: str, owner: int, lease: float) -> bool:
        store = self._store()
        seconds = max(1, int(lease))
        if store.add(key, owner, seconds):
            return True
        if store.get(key) != owner:
            return False
        return store.touch(key, seconds) or store.add(key, owner, seconds)

    def drop(self, key: str, owner: int) -> None:
        store = self._store()
        if store.get(key) == owner:
            store.delete(key)

    def taken(self, keys: list[str]) -> set[str]:
        return set(self._store().get_many(keys))


def _places() -> _Machine | _Shared:
    """Where the places are: the machine's table without Redis (the throttles' rule)."""
    return _Machine() if counts.shared() is None else _Shared()


@dataclass(eq=False)
class Slot:
    """One open stream's place in its account's count. ``index`` None: counted nowhere (no cap
    when it was taken, or its place was lost and no other was free at its last renewal)."""

    user_id: int
    owner: int
    index: int | None
    places: _Machine | _Shared | None  # None: no cap, nothing to renew or free
    closed: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def capped(self) -> bool:
        return self.places is not None


def _first_free(
    places: _Machine | _Shared, user_id: int, owner: int, cap: int, lease: float
) -> int | None:
    keys = [_key(user_id, index) for index in range(cap)]
    taken = places.taken(keys) if places.shared else set()  # one round trip spares up to cap
    for index, key in enumerate(keys):
        if key not in taken and places.hold(key, owner, lease):
            return index
    return None


def take(user_id: int, *, lease: float = LEASE_SECONDS) -> Slot | None:
    """A place for one more open stream of ``user_id``, held for ``lease`` seconds; None when
    the account already holds ``limit()`` streams open. Without a cap, an uncounted slot."""
    cap = limit()
    owner = secrets.randbits(62) + 1
    if not cap:
        slot = Slot(user_id, owner, None, None)
    else:
        places = _places()
        index = _first_free(places, user_id, owner, cap, lease)
        if index is None:
            return None
        slot = Slot(user_id, owner, index, places)
    _tell(user_id, True)
    return slot


def renew(slot: Slot, *, lease: float = LEASE_SECONDS) -> bool:
    """Extend the slot's lease by ``lease`` seconds from now; a slot whose place was lost holds
    the first free one again. Whether the stream is counted now."""
    if slot.places is None:
        return False
    with slot.lock:
        if slot.closed:
            return False
        if slot.index is not None and slot.places.hold(
            _key(slot.user_id, slot.index), slot.owner, lease
        ):
            return True
        cap = limit()
        slot.index = _first_free(slot.places, slot.user_id, slot.owner, cap, lease) if cap else None
        return slot.index is not None


def release(slot: Slot) -> None:
    """Free the slot's place (once; later renewals do nothing)."""
    if slot.places is None:
        return
    with slot.lock:
        slot.closed = True
        if slot.index is not None:
            slot.places.drop(_key(slot.user_id, slot.index), slot.owner)
            slot.index = None


def held(user_id: int) -> int:
    """How many places of ``user_id``'s are taken now (their leases running)."""
    cap = limit()
    if not cap:
        return 0
    return len(_places().taken([_key(user_id, index) for index in range(cap)]))


def holders(user_ids: Iterable[int]) -> set[int]:
    """Which of these accounts hold a place now (a stream open, its lease running): one round
    trip to Redis, or one look at the machine's table, however many accounts. Empty without a
    cap, since no places are held then."""
    cap = limit()
    wanted = {int(user_id) for user_id in user_ids}
    if not cap or not wanted:
        return set()
    keys = {_key(user_id, index): user_id for user_id in wanted for index in range(cap)}
    return {keys[key] for key in _places().taken(list(keys))}


def _quietly(fn: Callable[[Slot], object], slot: Slot) -> None:
    """``fn(slot)``; a failure (Redis unreachable) is logged: the stream goes on regardless."""
    try:
        fn(slot)
    except Exception:
        logger.warning(
            "stream slot of user %s: %s failed", slot.user_id, fn.__name__, exc_info=True
        )


#: Renewals made in one go before the renewer lets the event loop serve others.
RENEW_BATCH = 100


def _renew_each(slots: list[Slot]) -> None:
    for slot in slots:
        _quietly(renew, slot)


class _Renewer:
    """The open streams' renewals of one event loop: one timer for all of them (a timer of
    each stream's own cost a task and a wake-up per stream), each due slot renewed at the
    first tick after its period, in batches so that no tick holds the loop long. A network
    call (Redis) runs in a thread, the machine's table (a few memory writes) in the loop."""

    def __init__(self) -> None:
        self.slots: dict[Slot, tuple[float, float]] = {}  # slot -> (renew at, every)
        self.task: asyncio.Task | None = None

    def add(self, slot: Slot, every: float) -> None:
        loop = asyncio.get_running_loop()
        self.slots[slot] = (loop.time() + every, every)
        if self.task is None or self.task.done():
            self.task = loop.create_task(self._run())

    def discard(self, slot: Slot) -> None:
        self.slots.pop(slot, None)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while self.slots:
            await asyncio.sleep(min(every for _, every in self.slots.values()) / 2)
            now = loop.time()
            due = [slot for slot, (at, _) in self.slots.items() if at <= now]
            for start in range(0, len(due), RENEW_BATCH):
                batch = [slot for slot in due[start : start + RENEW_BATCH] if slot in self.slots]
                for slot in batch:
                    self.slots[slot] = (now + self.slots[slot][1], self.slots[slot][1])
                shared = [slot for slot in batch if slot.places and slot.places.shared]
                _renew_each([slot for slot in batch if not (slot.places and slot.places.shared)])
                if shared:
                    await loop.run_in_executor(None, _renew_each, shared)
                else:
                    await asyncio.sleep(0)


_renewers: dict[asyncio.AbstractEventLoop, _Renewer] = {}


def _renewer() -> _Renewer:
    loop = asyncio.get_running_loop()
    found = _renewers.get(loop)
    if found is None:
        for old in [old for old in _renewers if old.is_closed()]:
            del _renewers[old]
        found = _renewers[loop] = _Renewer()
    return found


def _free(slot: Slot) -> None:
    """Free the slot's place, then tell the watchers (who then find it free)."""
    _quietly(release, slot)
    _tell(slot.user_id, False)


def _release_soon(slot: Slot) -> None:
    """Free the slot without waiting in the event loop: in a thread for Redis (the stream's
    task may be cancelled meanwhile: the thread goes on), at once for the machine's table."""
    if slot.places is not None and slot.places.shared:
        with contextlib.suppress(RuntimeError):  # the loop is closing: free it here instead
            asyncio.get_running_loop().run_in_executor(None, _free, slot)
            return
    _free(slot)


async def holding(
    slot: Slot, content: AsyncGenerator[bytes, None], *, every: float = RENEW_SECONDS
) -> AsyncIterator[bytes]:
    """``content``'s chunks as they come, while ``slot`` is held: its lease renewed every
    ``every`` seconds, and its place freed once the stream ends, however it ends. A stream
    that is never started (its client gone before the first byte) is freed by its lease."""
    renewer = _renewer() if slot.capped else None
    if renewer is not None:
        renewer.add(slot, every)
    try:
        async with contextlib.aclosing(content) as chunks:
            async for chunk in chunks:
                yield chunk
    finally:
        if renewer is not None:
            renewer.discard(slot)
        _release_soon(slot)
