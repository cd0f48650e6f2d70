"""The cap on the streams one account holds open (``TONGITS_MAX_STREAMS_PER_USER``) against real
ASGI servers: two web processes of this module's own, with a cap of 3, sharing their count as
a machine's processes do (the shared table, no CACHE_URL) or as machines do (Redis). Game
streams and /me/stream count together; the one past the cap gets 429 ``too_many_streams`` with
Retry-After, before any byte; a stream that ends, however it ends, frees its place."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from ops import stream_slots
from tests.conftest import TEST_CACHE_URL
from tests.live.support import Live, Player, SseReader

CAP = 3
DB_CACHE = {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "tongits_cache"}


@pytest.fixture(scope="module", params=["machine", "redis"])
def capped(request, live_servers) -> Iterator[tuple[str, dict[str, str], list[str]]]:
    """(store, the servers' env, [url of process A, url of process B]), capped at CAP."""
    env = {"TONGITS_MAX_STREAMS_PER_USER": str(CAP)}
    if request.param == "redis":
        env["CACHE_URL"] = TEST_CACHE_URL
    with live_servers(env) as a, live_servers(env) as b:
        yield request.param, env, [a, b]


@pytest.fixture
def servers(capped, settings) -> list[str]:
    """The capped servers' URLs; this process reads their count where they keep it."""
    store, _, urls = capped
    if store == "machine":  # the servers' table: TONGITS_VAR_DIR/stream-slots (tests/conftest)
        settings.CACHES = {**settings.CACHES, "throttle": DB_CACHE}
    settings.TONGITS_MAX_STREAMS_PER_USER = CAP
    return urls


def open_stream(live: Live, base: str, path: str, player: Player) -> SseReader:
    reader = SseReader(base + path, {"Authorization": f"Token {player.token}"})
    live.readers.append(reader)
    assert reader.status == 200, (base, path, reader.status, reader.error_body)
    assert reader.next(skip_comments=False).raw.startswith(b"retry:")  # its first bytes
    return reader


def refused(base: str, path: str, player: Player) -> None:
    """The stream is refused with 429 too_many_streams, Retry-After and a JSON body."""
    headers = {"Authorization": f"Token {player.token}", "Accept": "text/event-stream"}
    with httpx.Client(timeout=5) as client, client.stream("GET", base + path, headers=headers) as r:
        assert r.status_code == 429, (base, path, r.status_code)
        assert r.headers["content-type"].startswith("application/json")
        body = httpx.Response(200, content=r.read()).json()
    assert body["code"] == "too_many_streams" and f"{CAP} live streams" in body["detail"]
    assert 1 <= int(r.headers["retry-after"]) <= 10 and body["retry_after"] == int(
        r.headers["retry-after"]
    )


def until_held(user_id: int, count: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while stream_slots.held(user_id) != count:
        assert time.monotonic() < deadline, (stream_slots.held(user_id), count)
        time.sleep(0.02)


def test_one_account_holds_at_most_the_cap_across_processes(live: Live, servers) -> None:
    a, b = servers
    players = [live.player() for _ in range(3)]
    me = players[0]
    game = f"/api/v1/games/{live.table(players)}/stream"
    mine = "/api/v1/me/stream"
    open_stream(live, a, game, me)
    second = open_stream(live, b, game, me)
    open_stream(live, a, mine, me)  # /me/stream counts with the game streams
    until_held(me.user.pk, CAP)
    for base, path in ((a, game), (b, game), (a, mine), (b, mine)):
        refused(base, path, me)
    # Another account has its own places; refusals took none.
    open_stream(live, b, game, players[1])
    open_stream(live, a, mine, players[1])
    assert stream_slots.held(me.user.pk) == CAP
    # Once one stream closes, its place is free again, on either process.
    second.close()
    until_held(me.user.pk, CAP - 1)
    open_stream(live, a, game, me)
    refused(b, mine, me)


def test_a_stream_that_ends_frees_its_place(live: Live, servers) -> None:
    """A settled match's stream ends by itself after its last frames (as at the end of a
    match), and frees its place."""
    from accounts.tasks import settle_match_now

    a, _ = servers
    players = [live.player() for _ in range(3)]
    me = players[0]
    game_id = live.table(players)
    while live.play_one(players, game_id) is not None:
        pass
    settle_match_now(str(game_id))
    reader = open_stream(live, a, f"/api/v1/games/{game_id}/stream", me)
    assert reader.ended.wait(10), "the stream of a settled match did not end"
    until_held(me.user.pk, 0)


def test_a_stopping_server_frees_its_streams_places(live: Live, capped, servers, live_servers):
    _, env, _ = capped
    me = live.player()
    with live_servers(env) as c:
        open_stream(live, c, "/api/v1/me/stream", me)
        open_stream(live, c, "/api/v1/me/stream", me)
        until_held(me.user.pk, 2)
    until_held(me.user.pk, 0)  # SIGTERM: the streams end ("shutdown") and free their places
