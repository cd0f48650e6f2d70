"""The web processes' sockets: the arbiter holds the address, each worker listens on its own.

The hook is checked alone (bound, never listening, adopted across a re-exec), then gunicorn is
run with the stack's own web command: its start line names the address, every worker listens on
a socket of its own and gets connections, the arbiter listens on none, and it stops without a
socket error.
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from gunicorn.config import Config

from ops import orphans, stack
from runtime.asgi_worker import ReservedTCPSocket, plain, reserve_addresses

ROOT = Path(__file__).resolve().parent.parent
LISTEN, ESTABLISHED = "0A", "01"  # TCP states in /proc/net/tcp


class Log:
    def error(self, *args: Any) -> None:
        raise AssertionError(args)


def arbiter(bind: str, reuse_port: bool = True, master_pid: int = 0) -> Any:
    cfg = Config()
    cfg.set("bind", [bind])
    cfg.set("reuse_port", reuse_port)
    return SimpleNamespace(cfg=cfg, log=Log(), LISTENERS=[], master_pid=master_pid)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def listening_socket(port: int) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)  # what gunicorn gives a worker
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    return sock


def test_the_arbiter_holds_the_address_and_takes_no_connection() -> None:
    port = free_port()
    held = arbiter(f"127.0.0.1:{port}")
    reserve_addresses(held)
    [reserved] = held.LISTENERS
    worker = listening_socket(port)
    clients = []
    try:
        assert str(reserved) == f"http://127.0.0.1:{port}"  # what "Listening at:" prints
        assert not plain(reserved).getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
        with socket.socket() as other, pytest.raises(OSError):
            other.bind(("127.0.0.1", port))  # a socket without SO_REUSEPORT cannot take it
        clients = [socket.create_connection(("127.0.0.1", port), timeout=2) for _ in range(32)]
        worker.settimeout(2)
        for _ in clients:  # every connection waits on the worker's socket, none on the arbiter's
            worker.accept()[0].close()
    finally:
        for client in clients:
            client.close()
        worker.close()
        reserved.close()


def test_a_re_executed_arbiter_adopts_the_addresses_it_is_handed(monkeypatch) -> None:
    port = free_port()
    old = arbiter(f"127.0.0.1:{port}")
    reserve_addresses(old)
    fd = old.LISTENERS[0].fileno()
    monkeypatch.setenv("GUNICORN_FD", str(os.dup(fd)))
    new = arbiter(f"127.0.0.1:{port}", master_pid=os.getpid())
    reserve_addresses(new)
    try:
        assert "GUNICORN_FD" not in os.environ
        assert [str(s) for s in new.LISTENERS] == [f"http://127.0.0.1:{port}"]
        assert not plain(new.LISTENERS[0]).getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
    finally:
        for listener in (*old.LISTENERS, *new.LISTENERS):
            listener.close()


def test_without_reuse_port_gunicorn_keeps_its_own_shared_socket() -> None:
    plain_gunicorn = arbiter(f"127.0.0.1:{free_port()}", reuse_port=False)
    reserve_addresses(plain_gunicorn)
    assert plain_gunicorn.LISTENERS == []


def test_plain_hands_over_the_socket_inside_a_wrapper() -> None:
    held = arbiter(f"127.0.0.1:{free_port()}")
    reserve_addresses(held)
    try:
        assert isinstance(held.LISTENERS[0], ReservedTCPSocket)
        assert type(plain(held.LISTENERS[0])) is socket.socket
        raw = socket.socket()
        assert plain(raw) is raw
        raw.close()
    finally:
        held.LISTENERS[0].close()


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def tcp_inodes(port: int, state: str) -> set[str]:
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == state:
                found.add(fields[9])
    return found


def wait_for(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what} within {timeout:.0f} s")


def start_web(tmp_path: Path, port: int) -> tuple[subprocess.Popen[bytes], Path]:
    """The stack's web command with two workers, its output in ``web.log``."""
    argv = stack.commands(debug=False, port=str(port), var=tmp_path)["web"]
    env = dict(os.environ, WEB_CONCURRENCY="2")
    log_path = tmp_path / "web.log"
    with log_path.open("wb") as out:
        proc = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    return proc, log_path


def booted_workers(log_path: Path) -> list[int]:
    """The two workers' pids once both serve."""

    def booted() -> list[int]:
        text = log_path.read_text()
        pids = [int(p) for p in re.findall(r"Booting worker with pid: (\d+)", text)]
        ready = text.count("Application startup complete")
        return pids if len(pids) == 2 and ready == 2 else []

    return wait_for(booted, 60, "two workers did not start")


@pytest.mark.skipif(sys.platform != "linux", reason="SO_REUSEPORT balancing and /proc: Linux")
def test_the_stack_web_command_names_its_address_and_stops_cleanly(tmp_path: Path) -> None:
    port = free_port()
    proc, log_path = start_web(tmp_path, port)
    clients: list[socket.socket] = []
    try:
        workers = booted_workers(log_path)
        text = log_path.read_text()
        assert f"Listening at: http://0.0.0.0:{port} ({proc.pid})" in text

        listening = tcp_inodes(port, LISTEN)
        assert not socket_inodes(proc.pid) & listening  # the arbiter only holds the address
        own = [socket_inodes(pid) & listening for pid in workers]
        assert all(len(sockets) == 1 for sockets in own)  # one socket each, of its own
        assert own[0] != own[1]

        # The kernel spreads connections over the workers' sockets: each holds some.
        clients = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(64)]

        def spread() -> collections.Counter[int]:
            held = tcp_inodes(port, ESTABLISHED)
            counts = collections.Counter({pid: len(socket_inodes(pid) & held) for pid in workers})
            return counts if sum(counts.values()) == len(clients) else collections.Counter()

        counts = wait_for(spread, 10, "the workers did not accept every connection")
        assert all(counts[pid] > 0 for pid in workers), counts
    finally:
        for client in clients:
            client.close()
        proc.send_signal(signal.SIGTERM)  # what the stack sends its web child
        try:
            proc.wait(30)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    text = log_path.read_text()
    assert proc.returncode == 0, text
    assert text.count("Shutting down") >= 2  # the workers stopped, not killed
    assert "Shutting down: Master" in text
    assert "Bad file descriptor" not in text, text
    assert "Error while closing socket" not in text, text
    assert "Traceback" not in text, text


def test_workers_whose_arbiter_is_killed_close_their_connections_and_exit(tmp_path: Path) -> None:
    port = free_port()
    proc, log_path = start_web(tmp_path, port)
    client = None
    try:
        workers = booted_workers(log_path)
        client = socket.create_connection(("127.0.0.1", port), timeout=5)  # idle, kept alive
        wait_for(lambda: tcp_inodes(port, ESTABLISHED), 5, "the connection was not accepted")
        proc.send_signal(signal.SIGKILL)  # the arbiter alone: nobody is left to stop its workers
        proc.wait()
        killed = time.monotonic()

        def exited() -> bool:
            return not any(orphans.running(pid) for pid in workers)  # zombies until init reaps

        wait_for(exited, 5, "the workers of a killed arbiter did not exit")
        took = time.monotonic() - killed
        assert client.recv(1) == b""  # closed by its worker on the way out, not left hanging
        assert not tcp_inodes(port, LISTEN)
    finally:
        if client is not None:
            client.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the group: workers too, should the test fail
    text = log_path.read_text()
    for pid in workers:  # each stopped as on its arbiter's SIGTERM: uvicorn's graceful shutdown
        assert f"Worker {pid}: its arbiter (pid {proc.pid}) is gone; stopping" in text, text
        assert f"[{pid}] [INFO] Finished server process" in text, text
    assert "did not stop within" not in text, text
    print(f"workers of a killed arbiter gone after {took:.2f} s")
