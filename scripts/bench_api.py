"""Load benchmark over HTTP: N tables of three people playing at once, against a real stack.

    .venv/bin/python scripts/bench_api.py                   (`make bench-api`)
    .venv/bin/python scripts/bench_api.py --tables 1,10,30 --seconds 20
    .venv/bin/python scripts/bench_api.py --tables 30 --rate 12     (paced: 12 commands/s a table)
    .venv/bin/python scripts/bench_api.py --target http://127.0.0.1:8000   (a stack you run)
        (start that stack with TONGITS_THROTTLE_EXEMPT=127.0.0.1: the load is far faster than
        people play, and the throttles would refuse it)
    .venv/bin/python scripts/bench_api.py --no-throttles    (the rates off, to compare)

Without ``--target`` it starts the stack as `make run` does (``python -m ops.stack``:
web, worker, scheduler, beat) on a scratch database ``tongits_bench_api`` of the local PostgreSQL
and Redis database 11, on a free port, and stops it at the end. Each table is one thread that
plays whoever is to act, as a client would: POST one of the player's legal commands (chosen at
random) with the version its view showed, taking that view from its last command's answer
while the same seat goes on acting (draw, meld, discard), or from a GET when the turn has
passed; one keep-alive connection per player. Between rounds the
worker deals. For N = 1, 10 and 30 tables it prints moves per second (commands answered 200),
POST p50/p95/p99 and GET p50/p99, and, measured in the same run, the p50 of ``GET /api/v1/me``
(an authenticated view that touches no game: the bare-Django baseline). Then it runs
``manage.py bench_moves`` on the same database: the service layer beside a raw psycopg append.

The throttles run as shipped (counted, on the machine's shared table without ``CACHE_URL``);
the load generator's address is in ``TONGITS_THROTTLE_EXEMPT``, so it is counted and never
refused. Before the load it also counts the transactions PostgreSQL commits for 1,000
``GET /api/v1/me`` of one token, beside the idle stack's own over the same time.

A benchmark, not a test: it asserts nothing. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import psycopg

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "bench-passphrase-0192"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Client:
    """One keep-alive HTTP/1.1 connection with a token; reconnects when the server closes it.

    A plain socket and orjson rather than ``http.client`` and ``json``: the load runs on the
    same cores as the server it measures, and ``http.client`` parses every answer's headers
    with the ``email`` package, CPU the server would not get. The server always sends
    ``Content-Length`` (Django's ``CommonMiddleware``); a chunked answer is read too.
    """

    def __init__(self, base: str, token: str | None = None) -> None:
        url = urllib.parse.urlsplit(base)
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 80
        self.token = token
        self.sock: socket.socket | None = None
        self.buffer = b""
        auth = f"Authorization: Token {token}\r\n" if token else ""
        self.headers = f"Host: {self.host}:{self.port}\r\nContent-Type: application/json\r\n{auth}"

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any, float]:
        data = orjson.dumps(body) if body is not None else b""
        request = (
            f"{method} {path} HTTP/1.1\r\n{self.headers}Content-Length: {len(data)}\r\n\r\n"
        ).encode() + data
        for attempt in range(2):
            started = time.perf_counter()
            try:
                if self.sock is None:
                    self.sock = socket.create_connection((self.host, self.port), timeout=30)
                    self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.sock.sendall(request)
                status, raw, keep = self._answer()
            except OSError:  # the server closed a kept-alive connection: once more on a new one
                self.close()
                if attempt:
                    raise
                continue
            took = time.perf_counter() - started
            if not keep:
                self.close()
            return status, orjson.loads(raw) if raw else None, took
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
        self.sock, self.buffer = None, b""

    def _more(self) -> None:
        assert self.sock is not None
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionResetError("the server closed the connection")
        self.buffer += chunk

    def _take(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self._more()
        out, self.buffer = self.buffer[:size], self.buffer[size:]
        return out

    def _line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            self._more()
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def _answer(self) -> tuple[int, bytes, bool]:
        """Status, body and whether the connection stays open."""
        while b"\r\n\r\n" not in self.buffer:
            self._more()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        length, chunked, keep = 0, False, True
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value
            elif name == b"connection":
                keep = b"close" not in value
        if not chunked:
            return status, self._take(length), keep
        body = b""
        while size := int(self._line().split(b";", 1)[0], 16):
            body += self._take(size)
            self._take(2)
        while self._line():  # trailers, then the blank line
            pass
        return status, body, keep


@dataclass
class Stats:
    posts: list[float] = field(default_factory=list)
    gets: list[float] = field(default_factory=list)
    me: list[float] = field(default_factory=list)
    moves: int = 0
    refused: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def register(base: str, name: str) -> str:
    status, body, _ = Client(base).call(
        "POST", "/api/v1/auth/register", {"username": name, "password": PASSWORD}
    )
    if status != 201:
        raise SystemExit(f"register {name}: {status} {body}")
    return body["token"]


def make_table(base: str, tokens: list[str], names: list[str]) -> str:
    owner = Client(base, tokens[0])
    seats = [{"kind": "user"}] + [{"kind": "user", "username": n} for n in names[1:]]
    rules = {"preset": "standard", "turn_seconds": 0, "wins_to_match": 99}
    status, body, _ = owner.call("POST", "/api/v1/tables", {"rules": rules, "seats": seats})
    if status != 201:
        raise SystemExit(f"table: {status} {body}")
    for token in tokens[1:]:  # a seat given by name is an invitation: accept it
        status, answer, _ = Client(base, token).call(
            "POST", f"/api/v1/tables/{body['id']}/invitation", {"answer": "accept"}
        )
        if status != 200:
            raise SystemExit(f"invitation: {status} {answer}")
    status, body, _ = owner.call("POST", f"/api/v1/tables/{body['id']}/start")
    if status != 200:
        raise SystemExit(f"start: {status} {body}")
    return body["id"]


def play_table(
    base: str,
    game_id: str,
    tokens: list[str],
    stats: Stats,
    stop: threading.Event,
    seed: int,
    rate: float = 0.0,
) -> None:
    clients = [Client(base, token) for token in tokens]
    rng = random.Random(seed)
    seat_of: dict[int, Client] = {}
    path = f"/api/v1/games/{game_id}"
    status, view, _ = clients[0].call("GET", path)
    for client in clients:  # who sits where
        status, mine, _ = client.call("GET", path)
        seat_of[mine["seat"]] = client
    turn = view["view"]["turn"]
    mine: dict[str, Any] | None = None  # the mover's view from its last command's answer
    pace = 1.0 / rate if rate > 0 else 0.0
    next_at = time.perf_counter() + rng.random() * pace  # tables out of step, as people are
    while not stop.is_set():
        if pace:  # at most `rate` commands a second at this table (people take their time)
            delay = next_at - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            next_at = max(next_at + pace, time.perf_counter() - pace)
        client = seat_of.get(turn, clients[0])
        if mine is not None and mine["legal_commands"]:
            view = mine  # the same seat goes on (draw, meld, discard): no GET, as a client would
        else:
            status, view, took = client.call("GET", path)
            with stats.lock:
                stats.gets.append(took)
        mine = None
        if not view["legal_commands"]:  # between rounds: the worker deals
            turn = view["view"]["turn"]
            if view["view"]["phase"] in ("round_over", "dealing"):
                time.sleep(0.005)
            continue
        command = rng.choice(view["legal_commands"])
        body = {"command": command, "expected_version": view["version"]}
        status, answer, took = client.call("POST", f"{path}/commands", body)
        with stats.lock:
            stats.posts.append(took)
            if status == 200:
                stats.moves += 1
            else:
                stats.refused += 1
        if status == 200:
            turn = answer["game"]["view"]["turn"]
            mine = answer["game"]


def probe_me(base: str, token: str, stats: Stats, stop: threading.Event) -> None:
    client = Client(base, token)
    while not stop.is_set():
        _, _, took = client.call("GET", "/api/v1/me")
        with stats.lock:
            stats.me.append(took)
        time.sleep(0.01)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e3 if ordered else float("nan")


def drive(
    base: str,
    tables: list[tuple[str, list[str]]],
    me_token: str | None,
    seconds: float,
    rate: float,
    first_seed: int,
) -> tuple[float, int, int, list[float], list[float], list[float]]:
    """One load process: its tables (one thread each) and, in one process, the /me probe.

    Returns (elapsed, moves, refused, POST times, GET times, /me times) of the counted part."""
    stats, stop = Stats(), threading.Event()
    threads = [
        threading.Thread(
            target=play_table,
            args=(base, game, tokens, stats, stop, first_seed + i, rate),
            daemon=True,
        )
        for i, (game, tokens) in enumerate(tables)
    ]
    if me_token:
        threads.append(threading.Thread(target=probe_me, args=(base, me_token, stats, stop)))
    for thread in threads:
        # Players arrive over time, not all in one instant: a burst of new connections would all
        # be accepted by whichever web process's event loop woke first (asyncio accepts up to
        # the backlog per wake-up), and keep-alive would pin them there.
        thread.start()
        time.sleep(0.05)
    time.sleep(min(2.0, seconds / 5))  # warm-up, not counted
    with stats.lock:
        stats.posts.clear(), stats.gets.clear(), stats.me.clear()
        stats.moves = stats.refused = 0
    started = time.perf_counter()
    time.sleep(seconds)
    with stats.lock:
        elapsed = time.perf_counter() - started
        out = (elapsed, stats.moves, stats.refused, list(stats.posts), list(stats.gets))
        me = list(stats.me)
    stop.set()
    for thread in threads:
        thread.join(10)
    return (*out, me)


def stack_cpu(root: int | None) -> float:
    """CPU seconds (user + system) the web processes under ``root`` have used so far: the
    gunicorn workers, found by walking /proc (0 without a stack of our own)."""
    if root is None:
        return 0.0
    children: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    ticks = os.sysconf("SC_CLK_TCK")
    used: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        names[pid] = command
        used[pid] = (int(fields[11]) + int(fields[12])) / ticks
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        if "gunicorn" in names.get(pid, "") or "asgi" in names.get(pid, ""):
            total += used.get(pid, 0.0)
    return total


def run_load(
    base: str,
    n: int,
    seconds: float,
    tag: str,
    rate: float = 0.0,
    procs: int = 2,
    root: int | None = None,
) -> None:
    """N tables played at once from ``procs`` processes (one Python process alone, GIL-bound,
    would be the bottleneck before the server is)."""
    names = [f"b{tag}n{n}t{t}s{s}" for t in range(n) for s in range(3)]
    tokens = [register(base, name) for name in names]
    tables = [
        (
            make_table(base, tokens[3 * t : 3 * t + 3], names[3 * t : 3 * t + 3]),
            tokens[3 * t : 3 * t + 3],
        )
        for t in range(n)
    ]
    procs = max(1, min(procs, n))
    shares = [tables[i::procs] for i in range(procs)]
    context = multiprocessing.get_context("fork")
    cpu_before = stack_cpu(root)
    with context.Pool(procs) as pool:
        results = pool.starmap(
            drive,
            [
                (base, share, tokens[0] if i == 0 else None, seconds, rate, 1000 * i)
                for i, share in enumerate(shares)
            ],
        )
    web_cpu = stack_cpu(root) - cpu_before
    elapsed = max(r[0] for r in results)
    moves = sum(r[1] for r in results)
    refused = sum(r[2] for r in results)
    posts = [t for r in results for t in r[3]]
    gets = [t for r in results for t in r[4]]
    me = [t for r in results for t in r[5]]
    me50 = statistics.median(me) * 1e3 if me else float("nan")
    post50 = pct(posts, 0.5)
    print(
        f"{n:>6} {moves / elapsed:9.1f} {post50:8.2f} {pct(posts, 0.95):8.2f} "
        f"{pct(posts, 0.99):8.2f} {pct(gets, 0.5):8.2f} {pct(gets, 0.99):8.2f} {me50:8.2f} "
        f"{post50 / me50:10.2f} {refused:>8} {web_cpu * 1e3 / max(1, moves):8.2f}",
        flush=True,
    )


def start_stack(
    port: int, workers: str, env_db: str, broker: str, throttles: bool = True
) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.pop("DJANGO_DEBUG", None)
    if workers:
        env["WEB_CONCURRENCY"] = workers
    env.update(
        DATABASE_URL=env_db,
        CELERY_BROKER_URL=broker,
        PORT=str(port),
        TONGITS_BOT_DELAY_SECONDS="0",
        TONGITS_NEXT_ROUND_DELAY_SECONDS="0",
        TONGITS_VAR_DIR=str(ROOT / "var" / "bench-api"),
        LOG_LEVEL="WARNING",
        # The load comes from one address and a few tokens far faster than people play: the
        # throttles count it as shipped, and never refuse the load generator's address.
        TONGITS_THROTTLE_EXEMPT="127.0.0.1,::1",
    )
    if not throttles:  # --no-throttles: the rates off, for the comparison
        env.update(TONGITS_RATE_READS="", TONGITS_RATE_COMMANDS="", TONGITS_RATE_REGISTER="")
    log = (ROOT / "var").joinpath("bench-api.log")
    log.parent.mkdir(exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "ops.stack"],
        cwd=ROOT,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def wait_healthy(base: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            status, _, _ = Client(base).call("GET", "/healthz")
            if status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"{base}/healthz did not answer; see var/bench-api.log")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", default="1,10,30")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--target", help="base URL of a running stack (else one is started)")
    parser.add_argument("--web-workers", default=os.environ.get("WEB_CONCURRENCY", ""))
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/tongits_bench_api"
    )
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/11")
    parser.add_argument("--no-service-bench", action="store_true")
    parser.add_argument(
        "--no-throttles", action="store_true", help="turn the rates off (to compare with)"
    )
    parser.add_argument("--procs", type=int, default=2, help="load generator processes")
    parser.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="commands a second per table at most (0: as fast as answers come back)",
    )
    args = parser.parse_args()

    proc = None
    if args.target:
        base = args.target.rstrip("/")
    else:
        subprocess.run(  # a fresh scratch database each run
            [sys.executable, "-c", _DROP_DB, args.database_url], cwd=ROOT, check=True
        )
        base = f"http://127.0.0.1:{free_port()}"
        port = int(base.rsplit(":", 1)[1])
        proc = start_stack(
            port, args.web_workers, args.database_url, args.broker, not args.no_throttles
        )
    try:
        wait_healthy(base)
        tag = f"{int(time.time()) % 100000}"
        if not args.target:
            reads_commits(base, args.database_url, tag)
        pace = f"at most {args.rate:g} commands/s per table" if args.rate else "flat out"
        print(f"target {base}; {args.seconds:.0f} s per load, {pace}; times in ms", flush=True)
        print(
            f"{'tables':>6} {'moves/s':>9} {'POST p50':>8} {'p95':>8} {'p99':>8} "
            f"{'GET p50':>8} {'p99':>8} {'/me p50':>8} {'POST/me':>10} {'refused':>8} "
            f"{'web ms/move':>11}",
            flush=True,
        )
        for n in [int(x) for x in args.tables.split(",")]:
            run_load(base, n, args.seconds, tag, args.rate, args.procs, proc and proc.pid)
    finally:
        if proc is not None:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(60)
    if not args.no_service_bench and not args.target:
        print("service layer (manage.py bench_moves, same database):", flush=True)
        env = {**os.environ, "DATABASE_URL": args.database_url}
        subprocess.run(
            [sys.executable, "manage.py", "bench_moves", "--moves", "2000"], cwd=ROOT, env=env
        )
    return 0


def _commits(database_url: str) -> int:
    url = urllib.parse.urlsplit(database_url)
    dsn = dict(host=url.hostname, port=url.port or 5432, user=url.username or "postgres")
    with psycopg.connect(**dsn, dbname=url.path.lstrip("/"), autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        return int(conn.execute(STAT_COMMITS).fetchone()[0])


STAT_COMMITS = "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"


def reads_commits(base: str, database_url: str, tag: str, reads: int = 1000) -> None:
    """PostgreSQL's committed transactions for ``reads`` GET /me of one token, beside the idle
    stack's background over as long, three times in turn.

    The background comes in bursts (the sweeper's run every ``TONGITS_SWEEP_INTERVAL_SECONDS``
    is six transactions), so it is measured over two whole sweep intervals and scaled to the
    reads' window; what the reads add is the difference.
    """
    client = Client(base, register(base, f"r{tag}"))
    time.sleep(8.0)  # past the stack's start-up work
    background = 2 * 10.0 + 1.5
    for _ in range(3):
        before = _commits(database_url)
        started = time.monotonic()
        for _ in range(reads):
            assert client.call("GET", "/api/v1/me")[0] == 200
        took = time.monotonic() - started
        time.sleep(1.5)  # backends flush their statistics about every second
        during = _commits(database_url) - before
        before = _commits(database_url)
        time.sleep(background)
        idle = (_commits(database_url) - before) * (took + 1.5) / background
        print(
            f"{reads} GET /me of one token in {took:.1f} s: {during} transactions committed; "
            f"the idle stack {idle:.1f} in as long (over {background:.0f} s): "
            f"{during - idle:.1f} added",
            flush=True,
        )


_DROP_DB = """
import sys, psycopg
from urllib.parse import urlsplit
url = urlsplit(sys.argv[1]); name = url.path.lstrip("/")
with psycopg.connect(host=url.hostname, port=url.port or 5432, user=url.username or "postgres",
                     dbname="postgres", autocommit=True) as conn:
    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
"""


if __name__ == "__main__":
    sys.exit(main())
