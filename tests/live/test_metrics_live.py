"""/metrics of a real server in prometheus-client's multiprocess mode (as ``make run`` and the
cluster start it): the request histogram counts every request once, by route and status, moves
answered without Django's handler too, and the stream gauge is the streams open now."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.live.conftest import start_live_server
from tests.live.support import Live


def _samples(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    body = httpx.get(f"{url}/metrics", timeout=10).text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(body)
        for s in family.samples
    }


def _count(samples: dict, route: str, status: str = "200", method: str = "GET") -> float:
    key = (
        "tongits_http_request_duration_seconds_count",
        (("method", method), ("route", route), ("status", status)),
    )
    return samples.get(key, 0.0)


def _in_progress(samples: dict, route: str) -> float:
    return samples.get(("tongits_http_requests_in_progress", (("route", route),)), 0.0)


def _open(samples: dict, kind: str) -> float:
    return samples.get(("tongits_streams_open", (("kind", kind),)), 0.0)


@pytest.fixture
def metered(tmp_path: Path, transactional_db, user_factory) -> Iterator[Live]:
    env = {"PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    with start_live_server(env) as url, Live(url, user_factory) as helper:
        yield helper


def test_requests_are_counted_once_by_route_and_streams_while_open(metered: Live) -> None:
    url = metered.url
    players = [metered.player() for _ in range(3)]
    before = _samples(url)
    for _ in range(7):
        assert players[0].http.get("/api/v1/me").status_code == 200
    assert players[1].http.get("/api/v1/games/not-a-game").status_code == 404
    game_id = metered.table(players)
    moves = 0
    while moves < 3 and metered.play_one(players, game_id) is not None:
        moves += 1
    readers = [metered.stream("/api/v1/me/stream", p) for p in players[:2]]
    watching = metered.stream(f"/api/v1/games/{game_id}/stream", players[2])
    for reader in [*readers, watching]:
        reader.next()  # the stream is open and has answered
    after = _samples(url)

    assert _count(after, "me") - _count(before, "me") == 7
    assert (
        _count(after, "game-commands", "200", "POST")
        - _count(before, "game-commands", "200", "POST")
        == moves
    )
    assert _open(after, "me") == 2 and _open(after, "game") == 1
    # Open streams are requests in progress: arrived, not yet in the histogram.
    assert _in_progress(after, "me-stream") == 2 and _in_progress(after, "game-stream") == 1
    assert _in_progress(after, "me") == 0
    for reader in [*readers, watching]:
        reader.close()
    deadline = time.monotonic() + 10
    while True:  # the server sees each client leave and ends its stream
        closed = _samples(url)
        streaming = _in_progress(closed, "me-stream") + _in_progress(closed, "game-stream")
        if streaming == 0:
            break
        assert time.monotonic() < deadline, streaming
        time.sleep(0.05)
    assert _open(closed, "me") == 0 and _open(closed, "game") == 0
    # The streams count as requests once they end, by their route and status.
    assert _count(closed, "me-stream") - _count(after, "me-stream") == 2


def _fanout(samples: dict) -> tuple[float, float]:
    count = samples.get(("tongits_stream_fanout_lag_seconds_count", ()), 0.0)
    return count, samples.get(("tongits_stream_fanout_lag_seconds_sum", ()), 0.0)


def test_fanout_lag_counts_each_live_event_once_per_following_stream(metered: Live) -> None:
    url = metered.url
    players = [metered.player() for _ in range(3)]
    game_id = metered.table(players)
    readers = [metered.stream(f"/api/v1/games/{game_id}/stream", p) for p in players[:2]]
    version = metered.view(players[0], game_id)["version"]
    for reader in readers:
        reader.until_view(version)  # the catch-up, which is no fan-out
    before = _samples(url)
    assert _fanout(before) == (0.0, 0.0)
    result = metered.play_one(players, game_id)
    assert result is not None
    appended = result["version"] - version
    assert appended >= 1
    for reader in readers:
        reader.until_view(result["version"])
    count, total = _fanout(_samples(url))
    # Each stream handed each new event once; each within the seconds a loaded machine takes.
    assert count == 2 * appended
    assert 0.0 <= total < 2 * appended * 5.0
