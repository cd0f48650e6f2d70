"""The push services' HTTP/2 client (``notifications.http2``) against a real HTTP/2 server on
127.0.0.1 (the stand-ins' ``H2Server``, h2 on asyncio): a burst as streams of one connection
within the server's own limit, a stream nobody answers, a connection the server drops.

The server is h2's own state machine, which refuses a client that opens more streams at once
than its ``MAX_CONCURRENT_STREAMS`` by ending the connection: a burst that all comes back 200
on one connection kept to the limit.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator

import pytest

from notifications import http2
from tests.notifications.standins import Answer, H2Server


class Recorder:
    """Answers 200 with the request's path, or never (paths in ``silent``)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.paths: list[str] = []
        self.silent: set[str] = set()

    def __call__(self, at: float, headers: dict[str, str], body: bytes) -> Answer | None:
        with self.lock:
            self.paths.append(headers[":path"])
        if headers[":path"] in self.silent:
            return None
        return Answer(200, {"path": headers[":path"], "body": json.loads(body)})


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def server(recorder) -> Iterator[H2Server]:
    server = H2Server(recorder, max_streams=2)
    yield server
    server.close()


def run(coroutine):
    return asyncio.run(coroutine)


def test_a_burst_is_streams_of_one_connection_within_the_servers_limit(server, recorder):
    async def burst() -> tuple[list[http2.Response], int]:
        client = http2.Client(f"http://127.0.0.1:{server.port}", timeout=5, streams=100)
        answers = await asyncio.gather(
            *(client.post(f"/push/{i}", [("x-n", str(i))], b'{"n": %d}' % i) for i in range(40))
        )
        await client.aclose()
        return list(answers), client.connections

    answers, connections = run(burst())
    assert [a.status for a in answers] == [200] * 40
    assert [json.loads(a.body) for a in answers] == [
        {"path": f"/push/{i}", "body": {"n": i}} for i in range(40)
    ]
    assert connections == 1 and server.connections == 1
    assert sorted(recorder.paths) == sorted(f"/push/{i}" for i in range(40))


def test_a_stream_not_answered_times_out_and_the_others_are_answered(server, recorder):
    recorder.silent.add("/push/1")

    async def burst() -> list[object]:
        client = http2.Client(f"http://127.0.0.1:{server.port}", timeout=0.5)
        answers = await asyncio.gather(
            *(client.post(f"/push/{i}", [], b"{}") for i in range(4)), return_exceptions=True
        )
        await client.aclose()
        return answers

    started = time.monotonic()
    answers = run(burst())
    assert isinstance(answers[1], TimeoutError)
    assert [a.status for i, a in enumerate(answers) if i != 1] == [200, 200, 200]
    assert 0.5 <= time.monotonic() - started < 3


def test_a_dropped_connection_fails_its_streams_and_the_next_request_opens_another(
    server, recorder
):
    recorder.silent.add("/push/waits")

    async def scenario() -> tuple[object, int, int]:
        client = http2.Client(f"http://127.0.0.1:{server.port}", timeout=5)
        assert (await client.post("/push/first", [], b"{}")).status == 200
        waiting = asyncio.ensure_future(client.post("/push/waits", [], b"{}"))
        while "/push/waits" not in recorder.paths:
            await asyncio.sleep(0.01)
        server.drop()
        try:
            await waiting
            lost: object = None
        except http2.Error as exc:
            lost = exc
        again = await client.post("/push/again", [], b"{}")
        await client.aclose()
        return lost, again.status, client.connections

    lost, status, connections = run(scenario())
    assert isinstance(lost, http2.Error) and "connection lost" in str(lost)
    assert status == 200
    assert connections == 2 and server.connections == 2


def test_nothing_listening_is_an_error_not_a_hang():
    async def refused() -> None:
        client = http2.Client("http://127.0.0.1:9", timeout=2)
        await client.post("/", [], b"")

    with pytest.raises(http2.Error, match="cannot connect"):
        run(refused())
