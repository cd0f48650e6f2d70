"""The stream slots (``ops.stream_slots``) on both of their stores: the machine's shared table
(no CACHE_URL) and Redis (the tests' throttle cache, TEST_CACHE_URL). Leases run out for real
(a second or two), since Redis keeps its own clock.

The last test asks the API in process for a stream while the account's slots are all taken:
the 429 before any byte, recorded by the session's error recorder (tests/error_codes.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator

import pytest

from ops import stream_slots
from ops.tally import tally

DB_CACHE = {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "tongits_cache"}


@pytest.fixture(params=["machine", "redis"])
def store(request, settings, tmp_path, monkeypatch) -> str:
    """Slots in the machine's table (a file of this test's own) or in Redis; a cap of 2. The
    apps' watchers (presence) are left out: these accounts are numbers, not users."""
    monkeypatch.setattr(stream_slots, "WATCHERS", [])
    if request.param == "machine":
        settings.CACHES = {**settings.CACHES, "throttle": DB_CACHE}
        settings.TONGITS_STREAM_SLOTS_FILE = tmp_path / "stream-slots"
    settings.TONGITS_MAX_STREAMS_PER_USER = 2
    return request.param


def test_the_cap_refuses_one_more_and_a_release_frees_a_place(store) -> None:
    first, second = stream_slots.take(1), stream_slots.take(1)
    assert first is not None and second is not None and first.index != second.index
    assert stream_slots.take(1) is None
    assert stream_slots.held(1) == 2
    assert stream_slots.take(2) is not None  # another account has its own places
    stream_slots.release(first)
    stream_slots.release(first)  # twice: nothing more is freed
    assert stream_slots.held(1) == 1
    again = stream_slots.take(1)
    assert again is not None and stream_slots.take(1) is None
    stream_slots.release(again)
    stream_slots.release(second)
    assert stream_slots.held(1) == 0


def test_a_slot_not_renewed_is_free_again_after_its_lease(store) -> None:
    """A process killed with its streams open renews nothing: its places free themselves."""
    assert stream_slots.take(1, lease=1) is not None
    assert stream_slots.take(1, lease=1) is not None
    assert stream_slots.take(1) is None
    time.sleep(1.3)
    assert stream_slots.held(1) == 0
    assert stream_slots.take(1) is not None


def test_a_renewed_slot_outlives_its_first_lease(store) -> None:
    slot = stream_slots.take(1, lease=1)
    other = stream_slots.take(1, lease=1)
    time.sleep(0.6)
    assert stream_slots.renew(slot, lease=2)
    time.sleep(0.8)  # past the first lease: the renewed slot is held, the other is not
    assert stream_slots.held(1) == 1
    assert stream_slots.renew(other)  # it lapsed, but a place is free: it holds one again
    assert stream_slots.take(1) is None
    stream_slots.release(slot)
    assert not stream_slots.renew(slot)  # released: a late renewal takes nothing back
    assert stream_slots.held(1) == 1


def test_a_slot_whose_place_was_taken_holds_another_or_none(store) -> None:
    lapsed = stream_slots.take(1, lease=1)
    time.sleep(1.3)
    newcomer = stream_slots.take(1)  # the first free place: the lapsed slot's own
    assert newcomer.index == lapsed.index
    assert stream_slots.renew(lapsed) and lapsed.index != newcomer.index
    assert stream_slots.take(1) is None
    stream_slots.release(lapsed)  # frees its new place, never the newcomer's
    assert stream_slots.held(1) == 1


def test_no_cap_counts_nothing(store, settings) -> None:
    settings.TONGITS_MAX_STREAMS_PER_USER = 0
    slots = [stream_slots.take(1) for _ in range(50)]
    assert all(slot is not None and not slot.capped for slot in slots)
    assert stream_slots.held(1) == 0


def test_the_machine_table_keeps_one_owner_per_lease(tmp_path) -> None:
    table = tally(tmp_path / "leases")
    assert table.hold("k", 7, 10, now=100.0)
    assert not table.hold("k", 8, 10, now=105.0)  # another owner, while the lease runs
    assert table.hold("k", 7, 10, now=109.0)  # the owner extends it, to 119
    assert table.holder("k", now=118.0) == 7
    table.drop("k", 8, now=118.0)  # not its lease: nothing happens
    assert table.holder("k", now=118.0) == 7
    assert table.holder("k", now=119.5) is None  # lapsed
    assert table.hold("k", 8, 10, now=120.0)
    table.drop("k", 8, now=121.0)
    assert table.holder("k", now=121.0) is None


def test_a_lapsed_lease_before_a_running_one_hides_nothing(tmp_path) -> None:
    """Leases end in any order: a lapsed slot early in a probe does not hide a running one of
    the same key further on, which would give one place to two streams."""
    table = tally(tmp_path / "leases")
    keys = [f"ss:1:{n}" for n in range(2000)]
    for key in keys:
        assert table.hold(key, 1, 5, now=0.0)
    for key in keys[::2]:
        assert table.hold(key, 1, 100, now=1.0)  # every other one renewed, the rest lapse
    for key in keys[::2]:
        assert not table.hold(key, 2, 10, now=50.0)
        assert table.holder(key, now=50.0) == 1
    for key in keys[1::2]:
        assert table.hold(key, 2, 10, now=50.0)


def test_holders_are_the_accounts_holding_a_place_now(store) -> None:
    first, _ = stream_slots.take(1), stream_slots.take(1)
    stream_slots.take(3)
    assert stream_slots.holders([1, 2, 3, 4]) == {1, 3}
    assert stream_slots.holders([]) == set()
    stream_slots.release(first)
    assert stream_slots.holders([1, 2, 3]) == {1, 3}


def test_watchers_hear_a_stream_take_its_place_and_then_free_it(store) -> None:
    """Each call comes after the place changed, so a watcher reads the truth it is told of."""
    heard: list[tuple[int, bool, set[int]]] = []
    stream_slots.WATCHERS.append(
        lambda uid, opened: heard.append((uid, opened, stream_slots.holders([uid])))
    )

    async def scenario() -> None:
        slot = stream_slots.take(1)
        assert heard == [(1, True, {1})]
        stream = stream_slots.holding(slot, _chunks([]))
        assert await anext(stream) == b"retry: 1000\n\n"
        await stream.aclose()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 5
        while len(heard) < 2:  # on Redis the place is freed, and the watchers told, in a thread
            assert loop.time() < deadline, heard
            await asyncio.sleep(0.01)
        assert heard == [(1, True, {1}), (1, False, set())]

    asyncio.run(scenario())
    stream_slots.take(1), stream_slots.take(1)
    assert stream_slots.take(1) is None  # refused at the cap: nothing opened, nothing told
    assert [opened for _, opened, _ in heard] == [True, False, True, True]


async def _chunks(
    log: list[str], fail: bool = False, wait: float = 0.0
) -> AsyncGenerator[bytes, None]:
    try:
        yield b"retry: 1000\n\n"
        await asyncio.sleep(wait)
        if fail:
            raise RuntimeError("the stream broke")
        yield b": keep-alive\n\n"
        await asyncio.sleep(3600)
        yield b"never"
    finally:
        log.append("stream closed")


async def _until_held(count: int, timeout: float = 5.0) -> None:
    """Until user 1 holds ``count`` places: on Redis a release runs in a thread of its own."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while stream_slots.held(1) != count:
        assert loop.time() < deadline, (stream_slots.held(1), count)
        await asyncio.sleep(0.01)


def test_holding_frees_the_slot_however_the_stream_ends(store) -> None:
    async def scenario() -> None:
        # The consumer closes it (Django's aclosing: the client went, or the response ended).
        log: list[str] = []
        slot = stream_slots.take(1)
        stream = stream_slots.holding(slot, _chunks(log))
        assert await anext(stream) == b"retry: 1000\n\n"
        await stream.aclose()
        assert log == ["stream closed"]
        await _until_held(0)
        # The task is cancelled mid-wait (Django cancels it when the client disconnects).
        slot = stream_slots.take(1)

        async def consume(stream) -> None:
            async for _ in stream:
                pass

        task = asyncio.ensure_future(consume(stream_slots.holding(slot, _chunks(log))))
        await asyncio.sleep(0.1)
        assert stream_slots.held(1) == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await _until_held(0)
        # The stream fails.
        slot = stream_slots.take(1)
        with pytest.raises(RuntimeError):
            await consume(stream_slots.holding(slot, _chunks(log, fail=True)))
        await _until_held(0)
        # The stream ends by itself (the match settled, the server stopping).
        slot = stream_slots.take(1)

        async def short() -> AsyncGenerator[bytes, None]:
            yield b"event: end\ndata: {}\n\n"

        assert [c async for c in stream_slots.holding(slot, short())] == [
            b"event: end\ndata: {}\n\n"
        ]
        await _until_held(0)
        assert log == ["stream closed"] * 3

    asyncio.run(scenario())


def test_an_open_stream_renews_its_slot_on_a_timer(store) -> None:
    """However long the stream stays silent, its lease is renewed while it is open."""

    async def scenario() -> None:
        log: list[str] = []
        slot = stream_slots.take(1, lease=1)
        stream = stream_slots.holding(slot, _chunks(log, wait=3600), every=0.3)
        first = asyncio.ensure_future(anext(stream))
        assert await first == b"retry: 1000\n\n"
        second = asyncio.ensure_future(anext(stream))  # silent: waits inside the stream
        await asyncio.sleep(1.6)  # past the first lease
        assert stream_slots.held(1) == 1
        second.cancel()
        with pytest.raises(asyncio.CancelledError):
            await second
        await _until_held(0)

    asyncio.run(scenario())


@pytest.mark.django_db(transaction=True)  # the live views read in a pool of their own
def test_the_api_answers_429_too_many_streams_before_any_byte(auth_client, settings) -> None:
    settings.TONGITS_MAX_STREAMS_PER_USER = 1
    slot = stream_slots.take(auth_client.user.pk)  # a stream of this account, open elsewhere
    assert slot is not None
    response = auth_client.get("/api/v1/me/stream", HTTP_ACCEPT="text/event-stream")
    assert response.status_code == 429 and not response.streaming
    body = response.json()
    assert body["code"] == "too_many_streams" and "1 live stream open" in body["detail"]
    assert response["Retry-After"] == str(body["retry_after"]) and body["retry_after"] >= 1
    stream_slots.release(slot)
