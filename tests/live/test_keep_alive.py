"""Keep-alives without a timer per stream: the listener ticks the hubs nobody woke for a while,
and a waiting stream sends its comment once it has been quiet long enough."""

from __future__ import annotations

import asyncio
import time

import pytest

from games.live import listener, streams

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_quiet_stream_is_ticked_to_its_keep_alive_and_news_ends_the_wait(monkeypatch):
    monkeypatch.setattr(listener, "KEEP_ALIVE_SECONDS", 0.6)
    monkeypatch.setattr(listener, "TICK_SECONDS", 0.1)

    async def scenario() -> None:
        live = listener.Listener(asyncio.get_running_loop())
        hub = live.users[1] = listener.Hub(1)
        busy = live.users[2] = listener.Hub(2)
        try:
            await live.wait_connected()  # which wakes every hub once
            await asyncio.sleep(0.05)
            started = time.monotonic()
            # Nothing happens: the ticks end the wait once a keep-alive is due.
            assert (
                await streams._quiet(live, hub, hub.changed, hub.gen, listener.Holding((0, None)))
                is False
            )
            assert 0.45 <= time.monotonic() - started < 1.5
            # A wake (news) ends the wait at once.
            changed, gen = hub.changed, hub.gen
            asyncio.get_running_loop().call_later(0.05, hub.wake)
            started = time.monotonic()
            assert (
                await streams._quiet(live, hub, changed, gen, listener.Holding((0, None))) is True
            )
            assert time.monotonic() - started < 0.3
            # A hub woken for news all along is never ticked.
            calls = []
            original = busy.tick

            def counted() -> None:
                calls.append(busy.gen)
                original()

            busy.tick = counted  # type: ignore[method-assign]
            for _ in range(10):
                busy.wake()
                await asyncio.sleep(0.1)
            assert len(calls) == 10  # its wakes' own, no tick of the listener's
            # A stopping server: the wait ends, whatever the hub.
            live.close_streams()
            assert (
                await streams._quiet(live, hub, hub.changed, hub.gen, listener.Holding((0, None)))
                is True
            )
        finally:
            live._ticker.cancel()
            live._task.cancel()
            await asyncio.gather(live._task, return_exceptions=True)

    asyncio.run(scenario())
