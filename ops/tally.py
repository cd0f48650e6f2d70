"""Throttle counts kept in memory the machine's web processes share: no database round trip, no
commit, exact across the processes of one machine.

Without Redis (``CACHE_URL`` unset: ``make run``'s embedded default), a throttle's fixed-window
counter is a slot of a small file-backed table that every web process maps
(``TONGITS_THROTTLE_COUNTS_FILE``, in the var directory). A count is a few memory reads and
writes under two locks of its stripe of the table: a thread lock for the process's threads, a
``lockf`` record lock on the file for the other processes. Keys of different stripes never wait
on each other, so a process descheduled while it holds one stripe holds up only that stripe.
So the limits hold across the web processes of the machine, and a request costs the database
nothing. Several machines share limits through Redis instead (``CACHE_URL``, as compose sets
it). The counts are not durable: a restart of every web process starts them again.

The table is 128 stripes of 64 open-addressed slots; a key lives in the stripe its hash names.
Each slot holds a key's 64-bit hash, when its window ends and its count. A slot whose window has
passed is free again; when the probe finds neither the key nor a free slot in its stripe, the
slot nearest its end is taken over (a count lost early, never one of another key added up).

The same table holds leases instead of counts for ``ops.stream_slots`` (in a file of its own,
so that leases and throttle windows never push each other out): ``hold`` gives a key to one
owner (a random token kept where the count is) until its lease ends, extends it for that owner,
refuses it to any other; ``drop`` frees it. Leases end in any order, so their look-up scans
the whole stripe (64 slots) rather than stopping at the first lapsed one.
"""

from __future__ import annotations

import fcntl
import hashlib
import mmap
import os
import struct
import threading
import time
from pathlib import Path

STRIPES = 128
STRIPE_SLOTS = 64
SLOTS = STRIPES * STRIPE_SLOTS
_SLOT = struct.Struct("<Qdq")  # key hash, window end (epoch seconds), count
SIZE = SLOTS * _SLOT.size


def _hash(key: str) -> int:
    value = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")
    return value or 1  # 0 marks an empty slot


class Tally:
    """The shared table of one file; one per process (``tally()``)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if os.fstat(fd).st_size < SIZE:
                os.ftruncate(fd, SIZE)
            self._map = mmap.mmap(fd, SIZE)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        self._threads = [threading.Lock() for _ in range(STRIPES)]
        self.path = path

    def _locked(self, stripe: int) -> _Stripe:
        return _Stripe(self._threads[stripe], self._fd, stripe)

    def _find(self, digest: int, now: float) -> tuple[int, bool]:
        """The slot of ``digest`` (True) or the one to take for it (False), in its stripe."""
        stripe, home = divmod(digest % SLOTS, STRIPE_SLOTS)
        first = stripe * STRIPE_SLOTS
        victim, victim_end = first + home, float("inf")
        for step in range(STRIPE_SLOTS):
            slot = first + (home + step) % STRIPE_SLOTS
            held, ends, _ = _SLOT.unpack_from(self._map, slot * _SLOT.size)
            if held == digest and ends > now:
                return slot, True
            if held == 0 or ends <= now:
                return slot, False
            if ends < victim_end:
                victim, victim_end = slot, ends
        return victim, False

    def add(self, key: str, ttl: float, now: float | None = None, amount: int = 1) -> int:
        """Count ``amount`` (one) more for ``key`` (its window lasting ``ttl`` seconds from its
        first count); the count, this one included."""
        now = time.time() if now is None else now
        digest = _hash(key)
        with self._locked(digest % SLOTS // STRIPE_SLOTS):
            slot, found = self._find(digest, now)
            offset = slot * _SLOT.size
            if found:
                _, ends, count = _SLOT.unpack_from(self._map, offset)
                count += amount
            else:
                ends, count = now + ttl, amount
            _SLOT.pack_into(self._map, offset, digest, ends, count)
            return count

    def count(self, key: str, now: float | None = None) -> int:
        """``key``'s count in its running window (0 when it has none)."""
        now = time.time() if now is None else now
        digest = _hash(key)
        with self._locked(digest % SLOTS // STRIPE_SLOTS):
            slot, found = self._find(digest, now)
            return _SLOT.unpack_from(self._map, slot * _SLOT.size)[2] if found else 0

    def _find_lease(self, digest: int, now: float) -> tuple[int, int | None]:
        """The slot of ``digest``'s running lease and its owner, or the slot to take for it and
        None: the first free or lapsed one of its stripe, else the one whose lease ends first."""
        stripe, home = divmod(digest % SLOTS, STRIPE_SLOTS)
        first = stripe * STRIPE_SLOTS
        free = None
        victim, victim_end = first + home, float("inf")
        for step in range(STRIPE_SLOTS):
            slot = first + (home + step) % STRIPE_SLOTS
            held, ends, owner = _SLOT.unpack_from(self._map, slot * _SLOT.size)
            if held == digest and ends > now:
                return slot, owner
            if held == 0 or ends <= now:
                if free is None:
                    free = slot
            elif ends < victim_end:
                victim, victim_end = slot, ends
        return (victim if free is None else free), None

    def hold(self, key: str, owner: int, ttl: float, now: float | None = None) -> bool:
        """Lease ``key`` to ``owner`` (a non-zero signed 64-bit token) for ``ttl`` seconds from
        now: True if it was free or lapsed, or already ``owner``'s (the lease is extended);
        False, and nothing changed, while another owner's lease runs."""
        now = time.time() if now is None else now
        digest = _hash(key)
        with self._locked(digest % SLOTS // STRIPE_SLOTS):
            slot, holder = self._find_lease(digest, now)
            if holder is not None and holder != owner:
                return False
            _SLOT.pack_into(self._map, slot * _SLOT.size, digest, now + ttl, owner)
            return True

    def holder(self, key: str, now: float | None = None) -> int | None:
        """The owner whose lease on ``key`` runs, or None."""
        now = time.time() if now is None else now
        digest = _hash(key)
        with self._locked(digest % SLOTS // STRIPE_SLOTS):
            return self._find_lease(digest, now)[1]

    def drop(self, key: str, owner: int, now: float | None = None) -> None:
        """End ``owner``'s lease on ``key`` (nothing if another owner holds it, or nobody)."""
        now = time.time() if now is None else now
        digest = _hash(key)
        with self._locked(digest % SLOTS // STRIPE_SLOTS):
            slot, holder = self._find_lease(digest, now)
            if holder == owner:
                _SLOT.pack_into(self._map, slot * _SLOT.size, 0, 0.0, 0)

    def forget(self, keys: list[str], now: float | None = None) -> None:
        """Drop these keys' counts."""
        now = time.time() if now is None else now
        for key in keys:
            digest = _hash(key)
            with self._locked(digest % SLOTS // STRIPE_SLOTS):
                slot, found = self._find(digest, now)
                if found:
                    _SLOT.pack_into(self._map, slot * _SLOT.size, 0, 0.0, 0)


class _Stripe:
    """A stripe's thread lock, then its record lock (one byte of the file per stripe)."""

    def __init__(self, threads: threading.Lock, fd: int, stripe: int) -> None:
        self._threads, self._fd, self._stripe = threads, fd, stripe

    def __enter__(self) -> None:
        self._threads.acquire()
        try:
            fcntl.lockf(self._fd, fcntl.LOCK_EX, 1, self._stripe)
        except BaseException:
            self._threads.release()
            raise

    def __exit__(self, *exc: object) -> None:
        try:
            fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, self._stripe)
        finally:
            self._threads.release()


_tallies: dict[tuple[int, Path], Tally] = {}
_opening = threading.Lock()


def tally(path: Path) -> Tally:
    """This process's mapping of the table at ``path`` (opened on first use, and again in a
    forked child, whose record locks are its own)."""
    key = (os.getpid(), path)
    found = _tallies.get(key)
    if found is None:
        with _opening:
            found = _tallies.get(key) or Tally(path)
            _tallies[key] = found
    return found
