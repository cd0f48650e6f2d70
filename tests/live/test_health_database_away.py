"""``/healthz`` when the real database goes away and comes back, on a real server.

The server (uvicorn, as the live tests start it) reaches the test database through a TCP relay
on a port of its own; taking the database away is closing that port and cutting every
connection through it, as a database host that stopped or a network that dropped does. Nothing
in the server is replaced: its pool's connections break in its hands and its new ones are
refused.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from django.conf import settings

from tests.live.conftest import start_live_server


class Relay:
    """TCP from 127.0.0.1:<port> to PostgreSQL; ``cut()`` closes the port and every connection
    through it, ``restore()`` opens the same port again."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.port = 0
        self.listener: socket.socket | None = None
        self.open: set[socket.socket] = set()
        self.lock = threading.Lock()

    def restore(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        if self.listener is not None:
            with contextlib.suppress(OSError):
                self.listener.shutdown(socket.SHUT_RDWR)
            self.listener.close()
            self.listener = None
        with self.lock:
            sockets, self.open = self.open, set()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self.lock:
                self.open |= {client, server}
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def relay(transactional_db) -> Iterator[Relay]:
    db = settings.DATABASES["default"]
    relay = Relay((db.get("HOST") or "127.0.0.1", int(db.get("PORT") or 5432)))
    relay.restore()
    try:
        yield relay
    finally:
        relay.cut()


def _health(url: str, path: str) -> tuple[int, dict]:
    answer = httpx.get(f"{url}{path}", timeout=20)
    return answer.status_code, answer.json()


def _until(url: str, path: str, status: int, timeout: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        code, body = _health(url, path)
        if code == status:
            return body
        assert time.monotonic() < deadline, (path, code, body)
        time.sleep(0.1)


def test_healthz_says_the_database_is_unreachable_while_it_is_and_recovers(relay) -> None:
    db = settings.DATABASES["default"]
    env = {"DATABASE_URL": f"postgres://{db['USER']}@127.0.0.1:{relay.port}/{db['NAME']}"}
    with start_live_server(env) as url:
        assert _health(url, "/healthz?scope=node") == (200, {"status": "ok"})
        relay.cut()
        # The pool's connection breaks at its next use; the probes after it find the pool empty
        # and unable to grow, and answer within 2 s, not after the pool's 10 s wait.
        for path in ("/healthz?scope=node", "/healthz") * 3:
            started = time.monotonic()
            answer = _health(url, path)
            took = time.monotonic() - started
            assert answer == (503, {"status": "unavailable", "database": "unreachable"}), path
            assert took <= 2.0, (path, took)
        relay.restore()
        assert _until(url, "/healthz?scope=node", 200) == {"status": "ok"}
