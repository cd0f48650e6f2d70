"""Players per node: tables of three people who follow their streams and think before they move
(`make bench-players`).

    .venv/bin/python scripts/bench_players.py                       (steps 250 to 1,000 tables)
    .venv/bin/python scripts/bench_players.py --steps 100,200 --seconds 30 --runs 3

It starts the stack as `make run` does (``python -m ops.stack``: web processes, worker,
scheduler, beat; the defaults, throttles as shipped) on a scratch database
``tongits_bench_players`` of the local PostgreSQL, with Redis database 12 as the broker, on a
free port, and stops it at the end. The load generator's address is in
``TONGITS_THROTTLE_EXEMPT``: every request is counted by the throttles, none refused (thousands
of players come from one address here).

Users and tables come through the services, not the API (the fast path: registering thousands
of users over HTTP would spend minutes hashing passwords): ``create_user`` with a fast password
hasher, ``accounts.services.session_create`` for each token, ``games.lobby`` to create, accept
and start each table (untimed, first to 99 wins, so no table ends during the run).

Each player is two connections of its own, kept open: its game's stream (SSE), and one for its
commands. A player acts only when a ``view`` frame (or its last command's answer) gives it legal
commands: it thinks 1.5 to 4.5 s, then POSTs the greedy bot's choice with the version it saw.
Nobody polls. The players run in ``--procs`` processes (whole tables in each), on the same
cores as the server.

For each step (tables added to those already playing), after a warm-up, over ``--seconds`` it
prints: moves per second (commands answered 200), POST p50/p95/p99, stream p50/p95/p99 (from
the moment a player's POST answer arrived to the moment each other seat's stream delivered that
move's last event), CPU milliseconds per move of each part (web processes, PostgreSQL, worker,
scheduler and beat, the notifier, Redis, the load generator) and of the whole machine (``all``:
its busy time, whatever ran, per move), the cores busy, resident memory per stream (idle: all
streams open before anyone plays, and, on a line of its own, what each of the second half of
them cost, opened once every process had its first ones: one more stream without a process's
fixed costs; playing: at the end of the step), and errors (5xx, refused,
timed out, unexpected answers) and dropped streams. At the end, the largest step that met both
targets (POST p99 <= 100 ms, stream p95 <= 100 ms, no error, no dropped stream).

It also checks the server's ``/metrics`` against what the players did: at each step, the
open-stream gauge beside the streams the players hold and what a scrape costs the process
that answers it; at the end, the requests the players sent, by kind and by the status they
read, beside the request histogram's counts. The two are equal by construction: once the
players stop they send nothing more (their counts are final), the POSTs in flight get their
answers, every connection closes, and the comparison waits until the server has no request in
progress (``tongits_http_requests_in_progress``: a request leaves it only after it is counted).

A benchmark, not a test: it asserts nothing. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import resource
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import uvloop

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

THINK = (1.5, 4.5)
POST_TARGET_MS = 100.0
STREAM_TARGET_MS = 100.0
DATABASE = "postgres://postgres@127.0.0.1:5432/tongits_bench_players"
BROKER = "redis://127.0.0.1:6379/12"


#: Prometheus's scrape interval of docker/prometheus.yml.
SCRAPE_INTERVAL_SECONDS = 15.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ---------------------------------------------------------------- set-up (services)


def make_tables(database_url: str, count: int, tag: str) -> list[tuple[str, list[str]]]:
    """(game id, the three players' tokens) for ``count`` new started tables."""
    os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "tongits_site.settings"
    os.environ["TONGITS_DEAL_INLINE"] = "1"  # set-up only: the first deal without a worker
    from bench_streams import setup_tables  # the same tables, beside this script

    return setup_tables(count, prefix=f"p{tag}", migrate=False)


# ---------------------------------------------------------------- the players (asyncio)


#: Requests this load process has sent (each stream's opening is one), by kind ("commands",
#: "stream"), and the answers' statuses it read, by kind and status, for the comparison with
#: the server's request histogram at the end (``/metrics``).
SENT: dict[str, int] = {}
ANSWERED: dict[tuple[str, int], int] = {}
#: Set when the players stop: no request is sent after it (``Http.send`` refuses), so the counts
#: above are final however the players' tasks end (a cancelled ``wait_for`` can swallow its
#: cancellation and let a player post again).
STOPPING = [False]
#: Every connection the players opened, closed when they stop.
CONNECTIONS: list[Any] = []
#: Requests sent again after a kept-alive connection failed before any answer (the first one
#: counted in SENT too, though the server may never have read it).
RETRIED = [0]
#: Seconds after which a player's idle connection is closed before its next request: half the
#: server's keep-alive (``WEB_KEEPALIVE``, 90 s as shipped); 0 never (``--client-idle``).
CLIENT_IDLE_SECONDS = [float(os.environ.get("WEB_KEEPALIVE") or 90) / 2]


def kind_of(path: str) -> str:
    return path.rsplit("/", 1)[-1]


class Http:
    """One kept-alive HTTP/1.1 connection (a plain asyncio stream: the load generator shares
    the server's cores, and every microsecond it spends is one the server does not get)."""

    def __init__(self, host: str, port: int, token: str) -> None:
        self.host, self.port = host, port
        self.head = (
            f"Host: {host}:{port}\r\nAuthorization: Token {token}\r\n"
            "Content-Type: application/json\r\n"
        ).encode()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.kind = ""
        self.used = 0.0  # when its last answer was read
        CONNECTIONS.append(self)

    async def connect(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.used = time.monotonic()
        sock = self.writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def send(self, method: str, path: str, body: bytes = b"", extra: bytes = b"") -> None:
        if STOPPING[0]:  # counted requests are final once the players stop
            raise ConnectionAbortedError("the players are stopping")
        if self.writer is None:
            await self.connect()
        assert self.writer is not None
        self.kind = kind_of(path)
        SENT[self.kind] = SENT.get(self.kind, 0) + 1
        self.writer.write(
            b"%s %s HTTP/1.1\r\n%s%sContent-Length: %d\r\n\r\n%s"
            % (method.encode(), path.encode(), self.head, extra, len(body), body)
        )

    async def head_of_answer(self) -> tuple[int, dict[bytes, bytes]]:
        assert self.reader is not None
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw[:-4].split(b"\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip().lower()
        status = int(lines[0].split(b" ", 2)[1])
        ANSWERED[(self.kind, status)] = ANSWERED.get((self.kind, status), 0) + 1
        return status, headers

    async def chunk(self) -> bytes:
        """One chunk of a chunked body (b"" at its end)."""
        assert self.reader is not None
        size = int((await self.reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
        data = await self.reader.readexactly(size + 2)
        return data[:-2]

    async def call(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        """One request. A connection idle for ``CLIENT_IDLE_SECONDS`` is closed first, as an
        app's HTTP client closes its idle ones before the server's keep-alive time-out: a
        request written just as the server closes the connection is lost unread (the server's
        close with unread data resets it). On a kept-alive connection that fails before any
        answer, once more on a new one (counted in ``RETRIED``)."""
        idle = time.monotonic() - self.used
        if self.writer is not None and 0 < CLIENT_IDLE_SECONDS[0] < idle:
            self.close()
        reused = self.writer is not None
        try:
            return await self._call(method, path, body)
        except (OSError, asyncio.IncompleteReadError) as exc:
            self.close()
            if STOPPING[0] or not reused:
                raise  # stopping: nothing was sent, nothing to send again
            if isinstance(exc, asyncio.IncompleteReadError) and exc.partial:
                raise
        RETRIED[0] += 1
        return await self._call(method, path, body)

    async def _call(self, method: str, path: str, body: bytes) -> tuple[int, bytes]:
        await self.send(method, path, body)
        assert self.reader is not None
        status, headers = await self.head_of_answer()
        if b"content-length" in headers:
            data = await self.reader.readexactly(int(headers[b"content-length"]))
        else:
            parts = []
            while part := await self.chunk():
                parts.append(part)
            await self.reader.readuntil(b"\r\n")
            data = b"".join(parts)
        if headers.get(b"connection") == b"close":
            self.close()
        self.used = time.monotonic()
        return status, data


@dataclass
class Window:
    """What one process saw during a measured window."""

    posts: list[float] = field(default_factory=list)  # ms
    streams: list[float] = field(default_factory=list)  # ms
    moves: int = 0
    conflicts: int = 0
    errors: list[str] = field(default_factory=list)
    dropped: int = 0


class Table:
    def __init__(self, game: str, tokens: list[str]) -> None:
        self.game = game
        self.tokens = tokens
        # seq -> when this process saw the POST answer that appended it, and its seat
        self.answered: dict[int, tuple[float, int]] = {}
        # seq -> {seat: when its stream delivered it}
        self.seen: dict[int, dict[int, float]] = {}


class Players:
    """Every player of some tables, in one event loop."""

    def __init__(self, host: str, port: int, seed: int) -> None:
        from games.rules.bots import GreedyBot

        self.host, self.port = host, port
        self.rng = random.Random(seed)
        self.bot = GreedyBot()
        self.window: Window | None = None
        self.hold = True  # nobody acts until released (the idle memory is measured first)
        self.ready = 0
        self.tasks: list[asyncio.Task] = []
        self.tables: list[Table] = []
        self.released = asyncio.Event()
        self.posting = 0  # POSTs sent and not yet answered

    def note_seen(self, table: Table, seat: int, seq: int, now: float) -> None:
        answered = table.answered.get(seq)
        if answered is not None and answered[1] != seat and self.window is not None:
            self.window.streams.append(max(0.0, now - answered[0]) * 1000)
        elif answered is None:
            table.seen.setdefault(seq, {})[seat] = now

    def note_answered(self, table: Table, seat: int, seq: int, now: float) -> None:
        table.answered[seq] = (now, seat)
        early = table.seen.pop(seq, None)
        if early and self.window is not None:
            for other, at in early.items():
                if other != seat:
                    self.window.streams.append(max(0.0, at - now) * 1000)
        if len(table.answered) > 64:  # only recent moves are waited for
            for old in sorted(table.answered)[:-32]:
                del table.answered[old]
        if len(table.seen) > 64:
            for old in sorted(table.seen)[:-32]:
                del table.seen[old]

    def error(self, text: str) -> None:
        if self.window is not None:
            self.window.errors.append(text)

    async def player(self, table: Table, seat: int) -> None:
        """Follow the stream; act after thinking whenever it is this seat's move."""
        token = table.tokens[seat]
        stream = Http(self.host, self.port, token)
        commands = Http(self.host, self.port, token)
        path = f"/api/v1/games/{table.game}/stream"
        last_id = 0
        acting: asyncio.Task | None = None
        latest: dict[str, Any] = {}
        first = True

        async def act() -> None:
            nonlocal latest
            while True:
                await asyncio.sleep(self.rng.uniform(*THINK))
                await self.released.wait()
                view = latest
                if not view.get("legal_commands"):
                    return
                command = self.bot.choose(view["view"], view["legal_commands"], self.rng)
                body = orjson.dumps({"command": command, "expected_version": view["version"]})
                sent = time.perf_counter()
                if STOPPING[0]:
                    return
                self.posting += 1
                try:
                    status, data = await asyncio.wait_for(
                        commands.call("POST", f"/api/v1/games/{table.game}/commands", body), 30
                    )
                except (OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
                    commands.close()
                    self.error(f"POST {type(exc).__name__}")
                    return
                finally:
                    self.posting -= 1
                now = time.perf_counter()
                if status == 200:
                    answer = orjson.loads(data)
                    if self.window is not None:
                        self.window.posts.append((now - sent) * 1000)
                        self.window.moves += 1
                    self.note_answered(table, seat, answer["version"], now)
                    if answer["game"]["version"] >= latest.get("version", 0):
                        latest = answer["game"]
                elif status == 409:  # the table moved on meanwhile: wait for its view
                    if self.window is not None:
                        self.window.conflicts += 1
                    return
                else:
                    self.error(f"POST {status} {data[:120]!r}")
                    return

        while not STOPPING[0]:
            try:
                await stream.send(
                    "GET",
                    path,
                    extra=b"Accept: text/event-stream\r\nLast-Event-ID: %d\r\n" % last_id,
                )
                status, headers = await stream.head_of_answer()
                if status != 200:
                    self.error(f"stream {status}")
                    await asyncio.sleep(1.0)
                    stream.close()
                    continue
                buffer = b""
                while True:
                    part = await stream.chunk()
                    if not part:
                        raise ConnectionResetError("stream ended")
                    now = time.perf_counter()
                    buffer += part
                    *frames, buffer = buffer.split(b"\n\n")
                    for raw in frames:
                        if raw.startswith(b"id: "):
                            seq = int(raw[4 : raw.index(b"\n")])
                            last_id = seq
                            self.note_seen(table, seat, seq, now)
                        elif raw.startswith(b"event: view"):
                            if b'"legal_commands":[]' in raw:  # not this seat's move: no parse
                                at = raw.index(b'"version":') + 10
                                view = {"version": int(raw[at : raw.index(b",", at)])}
                            else:
                                view = orjson.loads(raw[raw.index(b"data: ") + 6 :])
                            if view["version"] >= latest.get("version", 0):
                                latest = view
                            if first:
                                first = False
                                self.ready += 1
                            if latest.get("legal_commands") and (acting is None or acting.done()):
                                acting = asyncio.create_task(act())
                        elif raw.startswith(b"event: end"):
                            self.error("stream ended by the server")
                            return
            except (OSError, asyncio.IncompleteReadError, ConnectionResetError) as exc:
                stream.close()
                if self.window is not None:
                    self.window.dropped += 1
                    self.window.errors.append(f"stream dropped: {type(exc).__name__}")
                await asyncio.sleep(1.0)  # then resume after the last id, as an app would

    def add(self, tables: list[tuple[str, list[str]]]) -> None:
        for game, tokens in tables:
            table = Table(game, tokens)
            self.tables.append(table)
            for seat in range(3):
                self.tasks.append(asyncio.create_task(self.player(table, seat)))


def client_main(host: str, port: int, seed: int, conn: Any) -> None:
    """A load process: obeys the parent's ('add', tables) / ('release',) / ('start',) / ('end',)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    import gc

    gc.freeze()

    async def run() -> None:
        players = Players(host, port, seed)
        loop = asyncio.get_running_loop()
        while True:
            message = await loop.run_in_executor(None, conn.recv)
            if message[0] == "add":
                expected = players.ready + 3 * len(message[1])
                players.add(message[1])
                deadline = time.monotonic() + 180
                while players.ready < expected and time.monotonic() < deadline:
                    await asyncio.sleep(0.1)
                conn.send(("ready", players.ready, expected))
            elif message[0] == "release":
                players.hold = False
                players.released.set()
                conn.send(("released",))
            elif message[0] == "start":
                players.window = Window()
                conn.send(("started",))
            elif message[0] == "end":
                window, players.window = players.window, None
                conn.send(("window", window))
            elif message[0] == "stop":
                # No request after this; the POSTs in flight get their answers (or fail), then
                # every task ends and every connection closes: the counts are final.
                STOPPING[0] = True
                deadline = time.monotonic() + 120
                while players.posting and time.monotonic() < deadline:
                    await asyncio.sleep(0.1)
                pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                for http in CONNECTIONS:
                    http.close()
                await asyncio.sleep(0.5)  # the closes reach the server
                conn.send(("stopped", dict(SENT), dict(ANSWERED), RETRIED[0]))
                return

    uvloop.run(run())  # the server's event loop too: the players cost the shared cores less


# ---------------------------------------------------------------- measuring the machine


PARTS = ("web", "postgres", "worker", "bots", "scheduler", "beat", "notifier", "redis", "load")


@dataclass(frozen=True)
class Servers:
    """The machine's servers the stack uses, so other PostgreSQL and Redis servers (another
    checkout's tests, a cluster) and other databases' sessions are not counted."""

    postmaster: int  # the PostgreSQL server of the database
    database: str
    redis_address: str  # "127.0.0.1:6379", as redis-server names itself


def find_servers(database_url: str, broker: str) -> Servers:
    import psycopg

    url = urllib.parse.urlsplit(database_url)
    with psycopg.connect(
        host=url.hostname,
        port=url.port or 5432,
        user=url.username or "postgres",
        dbname=url.path.lstrip("/"),
        autocommit=True,
    ) as conn:
        data_dir = conn.execute("SHOW data_directory").fetchone()[0]
    postmaster = int((Path(data_dir) / "postmaster.pid").read_text().split("\n", 1)[0])
    redis = urllib.parse.urlsplit(broker)
    return Servers(postmaster, url.path.lstrip("/"), f"{redis.hostname}:{redis.port or 6379}")


def _classify(
    command: str, pid: int, parent: int, load_pids: set[int], servers: Servers
) -> str | None:
    if pid in load_pids:
        return "load"
    if "gunicorn" in command or "uvicorn" in command:
        return "web"
    if pid == servers.postmaster:
        return "postgres"
    if parent == servers.postmaster:
        # A backend names its database ("postgres: user db host(port) state"); the server's own
        # processes (checkpointer, walwriter, ...) serve them all and count too.
        words = command.split()
        backend = len(words) >= 4 and "(" in words[3]
        return "postgres" if not backend or words[2] == servers.database else None
    if "celery" in command and " worker" in command:
        return "bots" if "--queues=bots" in command else "worker"
    if "celery" in command and " beat" in command:
        return "beat"
    if "run_scheduler" in command:
        return "scheduler"
    if "run_notifier" in command:
        return "notifier"
    if "redis-server" in command and servers.redis_address in command:
        return "redis"
    return None


def cpu_by_part(
    load_pids: set[int], stack: int, servers: Servers
) -> tuple[dict[str, float], dict[str, int]]:
    """CPU seconds so far of each part (living processes' own time plus what their reaped
    children used) and the resident memory of the web processes, from /proc. The stack's
    parts are the descendants of its runner (``stack``); PostgreSQL (the server and its
    sessions of the database) and Redis are the machine's servers (``servers``)."""
    ticks = os.sysconf("SC_CLK_TCK")
    page = os.sysconf("SC_PAGE_SIZE")
    cpu = dict.fromkeys(PARTS, 0.0)
    rss = {"web": 0}
    seen: dict[int, tuple[int, str, list[str]]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        seen[int(entry.name)] = (int(fields[1]), command, fields)

    def in_stack(pid: int) -> bool:
        while pid > 1 and pid in seen:
            if pid == stack:
                return True
            pid = seen[pid][0]
        return False

    for pid, (parent, command, fields) in seen.items():
        part = _classify(command, pid, parent, load_pids, servers)
        if part is None or (part not in ("postgres", "redis", "load") and not in_stack(pid)):
            continue
        # Reaped children's time too, but not the PostgreSQL server's: it reaps every session,
        # other databases' as well.
        own = (11, 12) if pid == servers.postmaster else (11, 12, 13, 14)
        cpu[part] += sum(int(fields[i]) for i in own) / ticks
        if part == "web":
            rss["web"] += int(fields[21]) * page
    return cpu, rss


def busy_cores() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine so far."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# ---------------------------------------------------------------- the stack


def start_stack(
    port: int, database_url: str, broker: str, name: str = "bench-players"
) -> subprocess.Popen[bytes]:
    """The stack as `make run` starts it, its runtime files in var/<name> and its log in
    var/<name>.log."""
    env = dict(os.environ)
    env.pop("DJANGO_DEBUG", None)
    env.update(
        DATABASE_URL=database_url,
        CELERY_BROKER_URL=broker,
        PORT=str(port),
        TONGITS_VAR_DIR=str(ROOT / "var" / name),
        LOG_LEVEL="WARNING",
        # Thousands of players from one address: counted by the throttles, never refused.
        TONGITS_THROTTLE_EXEMPT="127.0.0.1,::1",
    )
    log = ROOT / "var" / f"{name}.log"
    log.parent.mkdir(exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "ops.stack"],
        cwd=ROOT,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def wait_healthy(port: int, timeout: float = 90.0, name: str = "bench-players") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
                sock.sendall(
                    b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                )
                if sock.recv(64).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise SystemExit(f"the stack's /healthz did not answer; see var/{name}.log")


def scrape(port: int) -> dict[str, float]:
    """The stack's /metrics (from this machine: no token), summed by metric name and, for the
    request histogram, without the requests of the stack's runner and of this script
    (/healthz, /metrics)."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as answer:
        text = answer.read().decode()
    sums: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.labels.get("route") in ("healthz", "metrics"):
                continue
            sums[sample.name] = sums.get(sample.name, 0.0) + sample.value
    return sums


#: The server's route (the URL pattern's name) of each kind of request the players send.
ROUTES = {"commands": "game-commands", "stream": "game-stream"}


def scrape_requests(port: int) -> tuple[dict[tuple[str, str], float], float]:
    """The request histogram's counts by (route, status), and the requests in progress (arrived,
    not yet counted), without /healthz and /metrics."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as answer:
        text = answer.read().decode()
    counts: dict[tuple[str, str], float] = {}
    in_progress = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            route = sample.labels.get("route")
            if route in ("healthz", "metrics"):
                continue
            if sample.name == "tongits_http_requests_in_progress":
                in_progress += sample.value
            elif sample.name == "tongits_http_request_duration_seconds_count":
                key = (route, sample.labels.get("status", ""))
                counts[key] = counts.get(key, 0.0) + sample.value
    return counts, in_progress


def print_requests(
    run: int,
    sent_by: dict[str, int],
    answered: dict[tuple[str, int], int],
    counted: dict[tuple[str, str], float],
) -> None:
    """Requests sent against counted, in all and by kind and status: the players' side (sent,
    and the statuses they read) beside the server's request histogram."""
    sent, total = sum(sent_by.values()), sum(counted.values())
    print(
        f"run {run}: requests sent by the players {sent}, counted by /metrics {total:.0f}"
        f"{'' if total == sent else '  MISMATCH'}",
        flush=True,
    )
    for kind, route in ROUTES.items():
        read = {str(status): n for (k, status), n in answered.items() if k == kind}
        server = {status: n for (r, status), n in counted.items() if r == route}
        statuses = sorted(set(read) | set(server))
        detail = ", ".join(
            f"{status}: read {read.get(status, 0)} / counted {server.get(status, 0):.0f}"
            for status in statuses
        )
        print(
            f"{'':>6} {kind}: sent {sent_by.get(kind, 0)}, counted "
            f"{sum(server.values()):.0f} ({detail})",
            flush=True,
        )
    other = {key: n for key, n in counted.items() if key[0] not in ROUTES.values()}
    if other:
        print(f"{'':>6} other routes counted: {other}", flush=True)


def scrape_cost(before: dict[str, float], after: dict[str, float]) -> float:
    """CPU seconds a scrape cost the answering web process, between two scrapes."""
    scrapes = after.get("tongits_metrics_scrapes_total", 0) - before.get(
        "tongits_metrics_scrapes_total", 0
    )
    cpu = after.get("tongits_metrics_scrape_cpu_seconds_total", 0) - before.get(
        "tongits_metrics_scrape_cpu_seconds_total", 0
    )
    return cpu / scrapes if scrapes else 0.0


def settle(database_url: str) -> None:
    """After the set-up's inserts: vacuum, analyze and checkpoint now, not during a window."""
    import psycopg

    url = urllib.parse.urlsplit(database_url)
    with psycopg.connect(
        host=url.hostname,
        port=url.port or 5432,
        user=url.username or "postgres",
        dbname=url.path.lstrip("/"),
        autocommit=True,
    ) as conn:
        conn.execute("VACUUM ANALYZE")
        conn.execute("CHECKPOINT")


def reset_database(database_url: str) -> None:
    import psycopg

    url = urllib.parse.urlsplit(database_url)
    name = url.path.lstrip("/")
    with psycopg.connect(
        host=url.hostname,
        port=url.port or 5432,
        user=url.username or "postgres",
        dbname="postgres",
        autocommit=True,
    ) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    env = {**os.environ, "DATABASE_URL": database_url}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)


# ---------------------------------------------------------------- one run


def one_run(args: argparse.Namespace, run: int) -> list[dict[str, Any]]:
    steps = [int(s) for s in args.steps.split(",")]
    reset_database(args.database_url)
    tag = f"{run}x{int(time.time()) % 100000}"
    started = time.monotonic()
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:  # set-up on both cores
        halves = pool.starmap(
            make_tables,
            [
                (args.database_url, steps[-1] // 2, f"{tag}a"),
                (args.database_url, steps[-1] - steps[-1] // 2, f"{tag}b"),
            ],
        )
    tables = [t for pair in zip(*halves, strict=False) for t in pair]
    tables += halves[0][len(halves[1]) :]
    print(
        f"run {run}: {len(tables)} tables of 3 users made in {time.monotonic() - started:.0f} s",
        flush=True,
    )
    settle(args.database_url)

    port = args.port or free_port()
    servers = find_servers(args.database_url, args.broker)
    stack = start_stack(port, args.database_url, args.broker)
    rows: list[dict[str, Any]] = []
    fork = multiprocessing.get_context("fork")
    pipes, procs = [], []
    try:
        wait_healthy(port)
        time.sleep(3.0)  # past the stack's start-up work
        for i in range(args.procs):
            parent, child = fork.Pipe()
            proc = fork.Process(target=client_main, args=("127.0.0.1", port, 1000 * run + i, child))
            proc.start()
            pipes.append(parent)
            procs.append(proc)
        load_pids = {os.getpid(), *(p.pid for p in procs)}

        def ask(messages: list[Any]) -> list[Any]:
            for pipe, message in zip(pipes, messages, strict=True):
                pipe.send(message)
            return [pipe.recv() for pipe in pipes]

        _, rss = cpu_by_part(load_pids, stack.pid, servers)
        rss_empty = rss["web"]
        playing = 0
        for n, step in enumerate(steps):
            new = tables[playing:step]
            # The first step opens its streams in two halves: the second half's memory is what
            # one more idle stream costs, without a process's first-stream costs (its pools).
            halves = [new[: len(new) // 2], new[len(new) // 2 :]] if n == 0 else [new]
            rss_half = 0
            for half in halves:
                shares = [half[i :: args.procs] for i in range(args.procs)]
                answers = ask([("add", share) for share in shares])
                ready = sum(a[1] for a in answers)  # streams ready so far, in all
                time.sleep(2.0)
                _, rss = cpu_by_part(load_pids, stack.pid, servers)
                rss_half = rss_half or rss["web"]
            row: dict[str, Any] = {"tables": step, "streams": 3 * step, "ready": ready}
            if n == 0:
                row["idle_kib"] = (rss["web"] - rss_empty) / max(1, 3 * step) / 1024
                more = 3 * len(halves[1])
                row["idle_more_kib"] = (rss["web"] - rss_half) / max(1, more) / 1024
                ask([("release",)] * args.procs)
            playing = step
            time.sleep(args.warmup)
            ask([("start",)] * args.procs)
            cpu0, _ = cpu_by_part(load_pids, stack.pid, servers)
            busy0, total0 = busy_cores()
            t0 = time.monotonic()
            time.sleep(args.seconds)
            windows = [a[1] for a in ask([("end",)] * args.procs)]
            elapsed = time.monotonic() - t0
            cpu1, rss = cpu_by_part(load_pids, stack.pid, servers)
            busy1, total1 = busy_cores()
            moves = sum(w.moves for w in windows)
            posts = [x for w in windows for x in w.posts]
            streams = [x for w in windows for x in w.streams]
            errors = [e for w in windows for e in w.errors]
            row.update(
                moves_per_s=moves / elapsed,
                post=(pct(posts, 0.5), pct(posts, 0.95), pct(posts, 0.99)),
                stream=(pct(streams, 0.5), pct(streams, 0.95), pct(streams, 0.99)),
                cpu_ms={p: (cpu1[p] - cpu0[p]) * 1000 / max(1, moves) for p in PARTS},
                cores=(busy1 - busy0) / (total1 - total0) * os.cpu_count(),
                playing_kib=(rss["web"] - rss_empty) / (3 * step) / 1024,
                errors=len(errors),
                error_kinds=sorted(set(errors))[:5],
                dropped=sum(w.dropped for w in windows),
                conflicts=sum(w.conflicts for w in windows),
                samples=len(streams),
            )
            # Prometheus's view of the step: 20 scrapes, their CPU as the scrapes count it.
            first = scrape(port)
            for _ in range(19):
                last = scrape(port)
            row["scrape_cpu_s"] = scrape_cost(first, last)
            row["streams_gauge"] = last.get("tongits_streams_open", 0.0)
            rows.append(row)
            print_row(row)
            print(
                f"{'':>6} /metrics: streams open {row['streams_gauge']:.0f} (the players hold "
                f"{row['ready']}{'' if row['streams_gauge'] == row['ready'] else ': MISMATCH'}); "
                f"a scrape {row['scrape_cpu_s'] * 1000:.1f} ms of CPU, "
                f"{row['scrape_cpu_s'] / SCRAPE_INTERVAL_SECONDS * 100:.3f} % of a core at one "
                f"scrape every {SCRAPE_INTERVAL_SECONDS:.0f} s",
                flush=True,
            )
            if "idle_more_kib" in row:
                print(
                    f"{'':>6} idle streams: {row['idle_kib']:.0f} KiB each from the empty stack, "
                    f"{row['idle_more_kib']:.0f} KiB each of the second half opened",
                    flush=True,
                )
        stopped = ask([("stop",)] * args.procs)
        sent_by: dict[str, int] = {}
        answered: dict[tuple[str, int], int] = {}
        retried = sum(answer[3] for answer in stopped)
        for _, by_kind, by_status, _ in stopped:
            for kind, n in by_kind.items():
                sent_by[kind] = sent_by.get(kind, 0) + n
            for key, n in by_status.items():
                answered[key] = answered.get(key, 0) + n
        # The players sent nothing after their counts and closed every connection: once the
        # server has no request in progress, every request it received is in the histogram.
        counted, in_progress = scrape_requests(port)
        drained = time.monotonic()
        deadline = drained + 300
        while in_progress and time.monotonic() < deadline:
            time.sleep(0.5)
            counted, in_progress = scrape_requests(port)
        print(
            f"run {run}: the server finished its last requests {time.monotonic() - drained:.1f} s "
            f"after the players stopped; {in_progress:.0f} still in progress",
            flush=True,
        )
        print_requests(run, sent_by, answered, counted)
        print(
            f"{'':>6} sent again after a kept-alive connection failed before any answer: "
            f"{retried} (the first of each may never have reached the server)",
            flush=True,
        )
    finally:
        for proc in procs:
            proc.join(10)
            if proc.is_alive():
                proc.kill()
        os.killpg(stack.pid, signal.SIGINT)
        stack.wait(60)
    return rows


HEADER = (
    f"{'tables':>6} {'moves/s':>8} {'POST p50/p95/p99 ms':>21} {'stream p50/p95/p99 ms':>23} "
    f"{'web':>6} {'pg':>5} {'wrk':>5} {'sch+bt':>6} {'ntf':>5} {'rds':>5} {'load':>5} "
    f"{'all':>5} {'cores':>5} "
    f"{'KiB/stream':>10} {'err':>4} {'drop':>4} {'409':>4}"
)


def print_row(row: dict[str, Any]) -> None:
    cpu = row["cpu_ms"]
    post, stream = row["post"], row["stream"]
    idle = f"{row['idle_kib']:.0f}i" if "idle_kib" in row else "-"
    memory = f"{idle}/{row['playing_kib']:.0f}p"
    print(
        f"{row['tables']:>6} {row['moves_per_s']:8.1f} "
        f"{post[0]:6.1f}/{post[1]:6.1f}/{post[2]:6.1f}  "
        f"{stream[0]:6.1f}/{stream[1]:6.1f}/{stream[2]:6.1f}  "
        f"{cpu['web']:6.2f} {cpu['postgres']:5.2f} {cpu['worker'] + cpu['bots']:5.2f} "
        f"{cpu['scheduler'] + cpu['beat']:6.2f} {cpu['notifier']:5.2f} {cpu['redis']:5.2f} "
        f"{cpu['load']:5.2f} {row['cores'] * 1000 / max(row['moves_per_s'], 1e-9):5.2f} "
        f"{row['cores']:5.2f} "
        f"{memory:>10} {row['errors']:>4} {row['dropped']:>4} {row['conflicts']:>4}"
        + (f"  {row['error_kinds']}" if row["errors"] else ""),
        flush=True,
    )


def meets(row: dict[str, Any]) -> bool:
    return (
        row["post"][2] <= POST_TARGET_MS
        and row["stream"][1] <= STREAM_TARGET_MS
        and row["errors"] == 0
        and row["dropped"] == 0
        and row["ready"] == row["streams"]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--steps", default="250,300,350,400,500,750,1000", help="tables at each step"
    )
    parser.add_argument("--seconds", type=float, default=30.0, help="the measured window")
    parser.add_argument("--warmup", type=float, default=10.0, help="seconds before each window")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--procs", type=int, default=2, help="load generator processes")
    parser.add_argument("--database-url", default=DATABASE)
    parser.add_argument("--broker", default=BROKER)
    parser.add_argument(
        "--client-idle",
        type=float,
        default=CLIENT_IDLE_SECONDS[0],
        help="seconds after which a player closes an idle connection (0: never)",
    )
    parser.add_argument("--port", type=int, default=0, help="the stack's port (0: a free one)")
    args = parser.parse_args()
    CLIENT_IDLE_SECONDS[0] = args.client_idle  # the load processes are forked: they inherit it
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(
        f"{os.cpu_count()} CPUs; think {THINK[0]}-{THINK[1]} s; {args.warmup:.0f} s warm-up, "
        f"{args.seconds:.0f} s measured per step; CPU in ms per move; memory per stream "
        f"(i: all open, nobody playing; p: playing)",
        flush=True,
    )
    best = []
    for run in range(1, args.runs + 1):
        print(HEADER, flush=True)
        rows = one_run(args, run)
        passing = [r["tables"] for r in rows if meets(r)]
        best.append(max(passing) if passing else 0)
        print(f"run {run}: the largest step within the targets: {best[-1]} tables", flush=True)
    print(f"largest step within the targets, per run: {best}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
