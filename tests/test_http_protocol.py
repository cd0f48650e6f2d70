"""The web processes' HTTP protocol (``runtime.http_protocol``): an answer's head leaves with its
body in one write, and nothing else changes: interim ``100 Continue``, streams whose first chunk
must arrive before the response ends, pipelined requests and bodiless answers."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn

from runtime.asgi_worker import BalancedUvicornWorker
from runtime.http_protocol import OneWriteHttpToolsProtocol, _Joining


class Recording:
    """The transport's side of the joining: what reached the socket, write by write."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return False


def test_the_head_waits_for_the_first_body_write_and_leaves_with_it() -> None:
    sent = Recording()
    joining = _Joining(sent)  # type: ignore[arg-type]
    joining.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
    assert sent.writes == []
    joining.write(b"{}")
    joining.write(b"more")
    assert sent.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}", b"more"]
    assert joining.is_closing() is False  # everything else is the transport's own


def test_an_interim_continue_is_written_at_once() -> None:
    sent = Recording()
    joining = _Joining(sent)  # type: ignore[arg-type]
    joining.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    assert sent.writes == [b"HTTP/1.1 100 Continue\r\n\r\n"]
    joining.write(b"HTTP/1.1 200 OK\r\n\r\n")
    joining.write(b"")
    assert sent.writes[1:] == [b"HTTP/1.1 200 OK\r\n\r\n"]


def test_the_web_processes_use_it() -> None:
    assert BalancedUvicornWorker.CONFIG_KWARGS["http"] is OneWriteHttpToolsProtocol


async def app(scope, receive, send) -> None:
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    path = scope["path"]
    if path == "/stream":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"first", "more_body": True})
        await asyncio.sleep(1.0)
        await send({"type": "http.response.body", "body": b"second"})
        return
    status = 204 if path == "/empty" else 200
    content = b"" if status == 204 else b"echo:" + body
    headers = [(b"content-length", str(len(content)).encode())] if status != 204 else []
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": content})


@pytest.fixture(scope="module")
def server() -> Iterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, http=OneWriteHttpToolsProtocol, log_level="warning", lifespan="off"
    )
    served = uvicorn.Server(config)
    thread = threading.Thread(target=served.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not served.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    yield port
    served.should_exit = True
    thread.join(10)
    sock.close()


def read_until(conn: socket.socket, marker: bytes, timeout: float = 5.0) -> bytes:
    conn.settimeout(timeout)
    data = b""
    while marker not in data:
        part = conn.recv(65536)
        assert part, f"closed before {marker!r}: {data!r}"
        data += part
    return data


def test_an_answer_arrives_whole(server: int) -> None:
    with socket.create_connection(("127.0.0.1", server)) as conn:
        conn.sendall(b"POST /move HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nhi")
        data = read_until(conn, b"echo:hi")
        assert data.startswith(b"HTTP/1.1 200 OK\r\n")
        assert data.endswith(b"\r\n\r\necho:hi")


def test_a_client_that_expects_100_continue_gets_it_before_sending_its_body(server: int) -> None:
    with socket.create_connection(("127.0.0.1", server)) as conn:
        conn.sendall(
            b"POST /move HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\nexpect: 100-continue\r\n\r\n"
        )
        assert read_until(conn, b"\r\n\r\n").startswith(b"HTTP/1.1 100 Continue")
        conn.sendall(b"ok")
        assert read_until(conn, b"echo:ok").count(b"HTTP/1.1 200") == 1


def test_a_stream_s_first_chunk_arrives_before_it_ends(server: int) -> None:
    with socket.create_connection(("127.0.0.1", server)) as conn:
        conn.sendall(b"GET /stream HTTP/1.1\r\nhost: x\r\n\r\n")
        started = time.monotonic()
        first = read_until(conn, b"first")
        assert time.monotonic() - started < 0.9  # not held until the second chunk, 1 s later
        assert first.startswith(b"HTTP/1.1 200 OK\r\n") and b"second" not in first
        assert b"second" in read_until(conn, b"0\r\n\r\n")


def test_pipelined_requests_and_a_bodiless_answer_each_arrive(server: int) -> None:
    with socket.create_connection(("127.0.0.1", server)) as conn:
        conn.sendall(
            b"GET /empty HTTP/1.1\r\nhost: x\r\n\r\n"
            b"POST /move HTTP/1.1\r\nhost: x\r\ncontent-length: 1\r\n\r\nz"
        )
        data = read_until(conn, b"echo:z")
        assert data.startswith(b"HTTP/1.1 204 No Content\r\n")
        assert data.count(b"HTTP/1.1 ") == 2
