"""The matchmaker under a crowd: thousands of people queue over a minute in three rooms
(`make bench-matchmaking`).

    .venv/bin/python scripts/bench_matchmaking.py                    (3,000 people over 60 s)
    .venv/bin/python scripts/bench_matchmaking.py --people 600 --seconds 30

It starts the stack as `make run` does (``python -m ops.stack``: web processes, worker,
scheduler with the matcher thread, notifier, beat; the defaults, throttles as shipped) on a
scratch database ``tongits_bench_matchmaking`` of the local PostgreSQL, with Redis database 6
as the broker, on a free port, and stops it at the end. The load generator's address is in
``TONGITS_THROTTLE_EXEMPT``: every request is counted by the throttles, none refused.

People come through the services, not the API (registering thousands over HTTP would spend
minutes hashing passwords): ``create_user`` with a fast password hasher,
``accounts.services.session_create`` for each token, ``chips.services.open_wallet`` (the
sign-up grant) and, so that anyone may queue in any room, a staff adjustment
(``chips.services.adjust``) that brings the wallet to the dearest room's buy-in (10,000).

Each person opens ``/me/stream`` and waits for its first frame; the idle baseline is measured
then (every stream open, nobody queued, ``--baseline`` seconds, 60 by default). Then each
person, at a moment drawn uniformly within ``--seconds``, POSTs a ticket to one of the three
rooms (drawn uniformly) with ``bots_after`` the rooms' default (20 s): people meet people while
the queue is busy, and bots fill the tables of the last ones. It records when the POST's answer
and the ``matched`` frame on its stream arrived; once matched it resigns (``POST
/games/{id}/resign``) and closes its stream. Resigning is the lightest end of a match a person
can choose: the server plays a resigned seat at once, so a table whose three people resigned
plays out its match within seconds (the worker deals each next round and plays it at once) and
settles, where a table left alone would be played by time-outs, one every 20 s until its
match ends, many minutes later; a table with bots plays on with them. The people run in
``--procs`` processes, on the same cores as the server. The queueing window ends once every
ticket is answered and matched (or nothing moved for ``--bots-after`` + ``--grace`` seconds).

It prints: the POST's p50/p95/p99; ticket-to-matched p50/p95/p99 (from the POST's answer to
the ``matched`` frame), tables of people only apart from tables bots filled; the same for the
last person to sit at each table of people (the others also waited for that person), and the
wait split at the matcher's commit by the database's clock (the ticket's ``searching_since`` to
its ``ended_at``, then to the frame) with the part spent waiting for the table's last person to
arrive; tables formed per second over the arrivals (and in the busiest second); the matcher's
CPU a table (the scheduler process's CPU over the window less its idle baseline at the same
rate, and the same for the matcher's thread alone); each part's CPU (web processes, PostgreSQL,
worker, notifier, beat, Redis, the load generator), each process read every half second so that
one that ends keeps what it spent; the cores busy, the stack's share and the load average;
errors (5xx, refused, other answers, timed out) and dropped streams. Then, from the database:
people at two tables (double seats: everyone queues once, so a second seat is one), matched
tickets without a game or whose people do not sit at it, tables no ticket formed, open tickets
left, and every POSTed ticket's end (lost tickets: not in the database, or matched without its
frame). A benchmark, not a test: it asserts nothing. Run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import resource
import signal
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import uvloop
from bench_players import (
    PARTS,
    Http,
    busy_cores,
    find_servers,
    free_port,
    pct,
    reset_database,
    settle,
    start_stack,
    wait_healthy,
)
from bench_players import _classify as classify

#: The stack's runtime files are in var/<NAME>, its log in var/<NAME>.log.
NAME = "bench-matchmaking"

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ROOMS = ("100:5", "1000:50", "10000:500")  # TONGITS_ROOMS' default
DEAREST = 10_000  # the wallets are brought to this: any person may queue in any room
DATABASE = "postgres://postgres@127.0.0.1:5432/tongits_bench_matchmaking"
BROKER = "redis://127.0.0.1:6379/6"
P95_AIM_MS = 1000.0
#: How long a person waits for an answer before giving up (an app would show an error).
ANSWER_WITHIN = 120.0


# ---------------------------------------------------------------- set-up (services)


def make_people(database_url: str, count: int, tag: str) -> list[tuple[int, str]]:
    """(user id, token) of ``count`` new people, each wallet holding ``DEAREST`` chips."""
    os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "tongits_site.settings"
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connections

    from accounts.services import session_create
    from chips import services as chips

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    users = get_user_model()
    staff = users.objects.create_user(
        f"mstaff{tag}", password="bench-passphrase-0192", is_staff=True
    )
    top_up = DEAREST - settings.TONGITS_SIGNUP_GRANT
    out = []
    for i in range(count):
        user = users.objects.create_user(f"m{tag}u{i}", password="bench-passphrase-0192")
        chips.open_wallet(user.pk)
        if top_up > 0:
            chips.adjust(user_id=user.pk, amount=top_up, reason="benchmark", staff_id=staff.pk)
        out.append((user.pk, session_create(user=user)[1]))
    connections.close_all()
    return out


# ---------------------------------------------------------------- the people (asyncio)


@dataclass
class Person:
    user_id: int
    token: str
    room: str
    offset: float  # seconds after the start when the ticket is POSTed
    ready: bool = False
    post_sent: float | None = None
    post_answered: float | None = None
    post_status: int | None = None
    ticket_id: str | None = None
    matched_at: float | None = None
    matched_wall: float | None = None  # the same moment by the clock the database stamps with
    matched_ticket: str | None = None
    game_id: str | None = None
    matched_by_get: bool = False  # learnt from GET after a dropped stream, not from a frame
    cancelled: str | None = None
    resign_status: int | None = None
    done: bool = False
    dropped: int = 0
    stream_refused: int = 0  # answers other than 200 to the stream's request
    frames: dict[str, int] = field(default_factory=dict)  # by event, from the POST on
    error: str | None = None

    def summary(self) -> tuple:
        return (
            self.user_id,
            self.room,
            self.post_sent,
            self.post_answered,
            self.post_status,
            self.ticket_id,
            self.matched_at,
            self.matched_wall,
            self.matched_ticket,
            self.game_id,
            self.matched_by_get,
            self.cancelled,
            self.resign_status,
            self.dropped,
            self.stream_refused,
            self.frames,
            self.error,
        )


FIELDS = (
    "user_id",
    "room",
    "post_sent",
    "post_answered",
    "post_status",
    "ticket_id",
    "matched_at",
    "matched_wall",
    "matched_ticket",
    "game_id",
    "matched_by_get",
    "cancelled",
    "resign_status",
    "dropped",
    "stream_refused",
    "frames",
    "error",
)


class Crowd:
    """Some of the people, in one event loop."""

    def __init__(self, host: str, port: int, bots_after: float) -> None:
        self.host, self.port = host, port
        self.bots_after = bots_after
        self.people: list[Person] = []
        self.tasks: list[asyncio.Task] = []
        self.start: float | None = None
        self.go = asyncio.Event()

    async def follow(self, person: Person, matched: asyncio.Event) -> None:
        """Read the person's /me/stream until cancelled; on a drop, open it again and ask the
        ticket's state (the stream has no ids to resume from)."""
        stream = Http(self.host, self.port, person.token)
        try:
            while True:
                try:
                    await stream.send(
                        "GET", "/api/v1/me/stream", extra=b"Accept: text/event-stream\r\n"
                    )
                    status, _ = await stream.head_of_answer()
                    if status != 200:
                        person.stream_refused += 1
                        stream.close()
                        await asyncio.sleep(1.0)
                        continue
                    if person.dropped and person.ticket_id and not matched.is_set():
                        await self.ask_ticket(person, matched)
                    buffer = b""
                    while True:
                        part = await stream.chunk()
                        if not part:
                            raise ConnectionResetError("stream ended")
                        now = time.monotonic()
                        buffer += part
                        *frames, buffer = buffer.split(b"\n\n")
                        for raw in frames:
                            if not raw.startswith(b"event: "):
                                continue
                            person.ready = True
                            if person.post_sent is not None:
                                kind = raw[7 : raw.index(b"\n")].decode()
                                person.frames[kind] = person.frames.get(kind, 0) + 1
                            if raw.startswith(b"event: matched\n"):
                                data = orjson.loads(raw[raw.index(b"data: ") + 6 :])
                                if person.matched_at is None:
                                    person.matched_at = now
                                    person.matched_wall = time.time()
                                    person.matched_ticket = data.get("ticket_id")
                                    person.game_id = data.get("game_id")
                                matched.set()
                            elif raw.startswith(b"event: ticket_cancelled\n"):
                                data = orjson.loads(raw[raw.index(b"data: ") + 6 :])
                                person.cancelled = data.get("reason") or "?"
                                matched.set()
                except (OSError, asyncio.IncompleteReadError, ConnectionResetError):
                    stream.close()
                    person.dropped += 1
                    await asyncio.sleep(1.0)
        finally:
            stream.close()

    async def ask_ticket(self, person: Person, matched: asyncio.Event) -> None:
        http = Http(self.host, self.port, person.token)
        try:
            status, data = await http.call("GET", f"/api/v1/matchmaking/tickets/{person.ticket_id}")
        except (OSError, asyncio.IncompleteReadError):
            return
        finally:
            http.close()
        if status == 200:
            ticket = orjson.loads(data)
            if ticket["status"] == "matched" and person.matched_at is None:
                person.matched_at = time.monotonic()
                person.matched_ticket, person.game_id = ticket["id"], ticket["game_id"]
                person.matched_by_get = True
                matched.set()
            elif ticket["status"] == "cancelled":
                person.cancelled = ticket["reason"] or "?"
                matched.set()

    async def person(self, person: Person) -> None:
        matched = asyncio.Event()
        reader = asyncio.create_task(self.follow(person, matched))
        commands = Http(self.host, self.port, person.token)
        try:
            await self.go.wait()
            assert self.start is not None
            await asyncio.sleep(max(0.0, self.start + person.offset - time.monotonic()))
            body = orjson.dumps({"room": person.room, "bots_after": self.bots_after})
            person.post_sent = time.monotonic()
            try:
                status, data = await asyncio.wait_for(
                    commands.call("POST", "/api/v1/matchmaking/tickets", body), ANSWER_WITHIN
                )
            except (OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
                person.error = f"POST {type(exc).__name__}"
                return
            person.post_answered, person.post_status = time.monotonic(), status
            if status != 201:
                person.error = f"POST {status} {data[:80]!r}"
                return
            person.ticket_id = orjson.loads(data)["id"]
            await matched.wait()
            if person.game_id is None:
                return
            try:
                status, data = await asyncio.wait_for(
                    commands.call("POST", f"/api/v1/games/{person.game_id}/resign"), ANSWER_WITHIN
                )
            except (OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
                person.error = f"resign {type(exc).__name__}"
                return
            person.resign_status = status
            if status != 200:
                person.error = f"resign {status} {data[:80]!r}"
        finally:
            person.done = True
            commands.close()
            reader.cancel()

    def add(self, people: list[Person]) -> None:
        for person in people:
            self.people.append(person)
            self.tasks.append(asyncio.create_task(self.person(person)))

    def status(self) -> dict[str, int]:
        people = self.people
        return {
            "ready": sum(p.ready for p in people),
            "posted": sum(p.post_sent is not None for p in people),
            "answered": sum(
                p.post_sent is not None and (p.post_status is not None or p.error is not None)
                for p in people
            ),
            "queued": sum(p.ticket_id is not None for p in people),
            "ended": sum(
                p.ticket_id is not None and (p.game_id is not None or p.cancelled is not None)
                for p in people
            ),
            "done": sum(p.done for p in people),
        }


def client_main(host: str, port: int, bots_after: float, conn: Any) -> None:
    """A load process: obeys the parent's ('add', people) / ('go', start) / ('status',) /
    ('collect',) / ('stop',)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    import gc

    gc.freeze()

    async def run() -> None:
        crowd = Crowd(host, port, bots_after)
        loop = asyncio.get_running_loop()
        while True:
            message = await loop.run_in_executor(None, conn.recv)
            if message[0] == "add":
                crowd.add(message[1])
                deadline = time.monotonic() + 180
                while time.monotonic() < deadline:
                    if crowd.status()["ready"] == len(crowd.people):
                        break
                    await asyncio.sleep(0.1)
                conn.send(crowd.status())
            elif message[0] == "go":
                crowd.start = message[1]
                crowd.go.set()
                conn.send(("going",))
            elif message[0] == "status":
                conn.send(crowd.status())
            elif message[0] == "collect":
                conn.send([p.summary() for p in crowd.people])
            elif message[0] == "stop":
                for task in crowd.tasks:
                    task.cancel()
                await asyncio.gather(*crowd.tasks, return_exceptions=True)
                conn.send(("stopped",))
                return

    uvloop.run(run())


# ---------------------------------------------------------------- measuring


def scheduler_threads(stack: int) -> tuple[int | None, dict[int, float]]:
    """The scheduler process of the stack (``manage.py run_scheduler``) and the CPU seconds of
    each of its threads so far (the main thread's id is the process's)."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    found = None
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        if b"run_scheduler" in command:
            found = found or []
            found.append(int(entry.name))
    for pid in found or []:
        up = pid
        while up > 1 and up in parents and up != stack:
            up = parents[up]
        if up != stack:
            continue
        threads = {}
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            threads[int(task.name)] = (int(fields[11]) + int(fields[12])) / ticks
        return pid, threads
    return None, {}


def cpu_by_pid(load_pids: set[int], stack: int, servers: Any) -> dict[int, tuple[str, float]]:
    """Each process of a part (as ``bench_players.cpu_by_part`` counts them) and its own CPU
    seconds so far. Taken every half second, a process that ends (a PostgreSQL session, a
    worker the stack restarts) keeps what it spent up to its last reading."""
    ticks = os.sysconf("SC_CLK_TCK")
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

    out = {}
    for pid, (parent, command, fields) in seen.items():
        part = classify(command, pid, parent, load_pids, servers)
        if part is None or (part not in ("postgres", "redis", "load") and not in_stack(pid)):
            continue
        out[pid] = (part, (int(fields[11]) + int(fields[12])) / ticks)
    return out


@dataclass
class Snapshot:
    at: float
    pids: dict[int, tuple[str, float]]
    scheduler: int | None
    threads: dict[int, float]
    busy: tuple[float, float]


def snapshot(load_pids: set[int], stack: int, servers: Any) -> Snapshot:
    pid, threads = scheduler_threads(stack)
    return Snapshot(
        time.monotonic(), cpu_by_pid(load_pids, stack, servers), pid, threads, busy_cores()
    )


def matcher_seconds(snaps: list[Snapshot], tid: int | None) -> float:
    a, b = snaps[0], snaps[-1]
    if tid is None or a.scheduler != b.scheduler:
        return float("nan")
    return b.threads.get(tid, 0.0) - a.threads.get(tid, 0.0)


def phase_cpu(snaps: list[Snapshot]) -> tuple[dict[str, float], list[str]]:
    """CPU seconds of each part between the first and the last snapshot, and the parts of the
    stack that started a process meanwhile (the stack restarted them)."""
    first = snaps[0].pids
    last: dict[int, tuple[str, float]] = {}
    for snap in snaps:
        last.update(snap.pids)
    out = dict.fromkeys(PARTS, 0.0)
    for pid, (part, seconds) in last.items():
        out[part] += seconds - first.get(pid, (part, 0.0))[1]
    new = {part for pid, (part, _) in last.items() if pid not in first}
    return out, sorted(new - {"postgres", "redis", "load"})


def cores(snaps: list[Snapshot]) -> float:
    a, b = snaps[0].busy, snaps[-1].busy
    return (b[0] - a[0]) / max(1, b[1] - a[1]) * (os.cpu_count() or 1)


# ---------------------------------------------------------------- the stack


# ---------------------------------------------------------------- the database's account


def connect(database_url: str) -> Any:
    import psycopg

    url = urllib.parse.urlsplit(database_url)
    return psycopg.connect(
        host=url.hostname,
        port=url.port or 5432,
        user=url.username or "postgres",
        dbname=url.path.lstrip("/"),
        autocommit=True,
    )


CHECKS = {
    "people at two tables (ever)": """
        SELECT count(*) FROM (SELECT user_id FROM games_seat WHERE user_id IS NOT NULL
        GROUP BY user_id HAVING count(*) > 1) x""",
    "people at two active tables now": """
        SELECT count(*) FROM (SELECT s.user_id FROM games_seat s JOIN games_game g
        ON g.id = s.game_id WHERE g.status IN ('waiting', 'active') AND s.user_id IS NOT NULL
        GROUP BY s.user_id HAVING count(*) > 1) x""",
    "people in two matched tickets": """
        SELECT count(*) FROM (SELECT m.user_id FROM matchmaking_member m
        JOIN matchmaking_ticket t ON t.id = m.ticket_id WHERE t.status = 'matched'
        GROUP BY m.user_id HAVING count(*) > 1) x""",
    "matched tickets without a game": """
        SELECT count(*) FROM matchmaking_ticket t LEFT JOIN games_game g ON g.id = t.game_id
        WHERE t.status = 'matched' AND g.id IS NULL""",
    "matched people not seated at their game": """
        SELECT count(*) FROM matchmaking_member m JOIN matchmaking_ticket t
        ON t.id = m.ticket_id WHERE t.status = 'matched' AND m.status = 'joined'
        AND NOT EXISTS (SELECT 1 FROM games_seat s WHERE s.game_id = t.game_id
        AND s.user_id = m.user_id)""",
    "tables no ticket formed": """
        SELECT count(*) FROM games_game g WHERE NOT EXISTS
        (SELECT 1 FROM matchmaking_ticket t WHERE t.game_id = g.id)""",
    "tables of other than three seats": """
        SELECT count(*) FROM (SELECT game_id FROM games_seat
        WHERE user_id IS NOT NULL OR bot_level <> '' GROUP BY game_id
        HAVING count(*) <> 3) x""",
    "open tickets (forming, searching)": """
        SELECT count(*) FROM matchmaking_ticket WHERE status IN ('forming', 'searching')""",
}


def account(database_url: str) -> dict[str, Any]:
    with connect(database_url) as conn:
        checks = {name: conn.execute(sql).fetchone()[0] for name, sql in CHECKS.items()}
        tickets = {
            str(row[0]): row[1:]
            for row in conn.execute(
                "SELECT id, owner_id, status, reason, game_id, extract(epoch FROM "
                "searching_since), extract(epoch FROM ended_at) FROM matchmaking_ticket"
            )
        }
        states = conn.execute(
            "SELECT status, reason, count(*) FROM matchmaking_ticket GROUP BY 1, 2 ORDER BY 1, 2"
        ).fetchall()
        games = {
            str(row[0]): (row[1], row[2])
            for row in conn.execute(
                "SELECT g.id, g.status, count(*) FILTER (WHERE s.bot_level <> '') FROM games_game g"
                " JOIN games_seat s ON s.game_id = g.id GROUP BY g.id, g.status"
            )
        }
    return {"checks": checks, "tickets": tickets, "states": states, "games": games}


# ---------------------------------------------------------------- one run


def run(args: argparse.Namespace) -> None:
    load0 = os.getloadavg()
    reset_database(args.database_url)
    started = time.monotonic()
    half = args.people // 2
    context = multiprocessing.get_context("spawn")
    tag = f"{int(time.time()) % 100000}"
    with context.Pool(2) as pool:  # set-up on both cores
        made = pool.starmap(
            make_people,
            [
                (args.database_url, half, f"{tag}a"),
                (args.database_url, args.people - half, f"{tag}b"),
            ],
        )
    accounts = made[0] + made[1]
    print(f"{len(accounts)} people made in {time.monotonic() - started:.0f} s", flush=True)
    settle(args.database_url)

    rng = random.Random(args.seed)
    people = [
        Person(uid, token, rng.choice(ROOMS), rng.uniform(0, args.seconds))
        for uid, token in accounts
    ]
    port = free_port()
    servers = find_servers(args.database_url, args.broker)
    stack = start_stack(port, args.database_url, args.broker, name=NAME)
    fork = multiprocessing.get_context("fork")
    pipes, procs = [], []
    try:
        wait_healthy(port, name=NAME)
        time.sleep(3.0)  # past the stack's start-up work
        for _ in range(args.procs):
            parent, child = fork.Pipe()
            proc = fork.Process(
                target=client_main, args=("127.0.0.1", port, args.bots_after, child)
            )
            proc.start()
            pipes.append(parent)
            procs.append(proc)
        load_pids = {os.getpid(), *(p.pid for p in procs)}

        def ask(messages: list[Any]) -> list[Any]:
            for pipe, message in zip(pipes, messages, strict=True):
                pipe.send(message)
            return [pipe.recv() for pipe in pipes]

        def tally() -> dict[str, int]:
            out: dict[str, int] = {}
            for answer in ask([("status",)] * args.procs):
                for key, value in answer.items():
                    out[key] = out.get(key, 0) + value
            return out

        opened = time.monotonic()
        shares = [people[i :: args.procs] for i in range(args.procs)]
        ask([("add", share) for share in shares])
        ready = tally()["ready"]
        print(
            f"{ready} of {len(people)} streams open in {time.monotonic() - opened:.0f} s; "
            f"idle baseline {args.baseline:.0f} s",
            flush=True,
        )
        time.sleep(5.0)
        base = [snapshot(load_pids, stack.pid, servers)]
        while time.monotonic() < base[0].at + args.baseline:
            time.sleep(0.5)
            base.append(snapshot(load_pids, stack.pid, servers))

        start = time.monotonic() + 1.0
        ask([("go", start)] * args.procs)
        time.sleep(max(0.0, start - time.monotonic()))
        win = [snapshot(load_pids, stack.pid, servers)]
        # Until every ticket POSTed is answered and ended, or nothing moved for longer than
        # a ticket waits for bots (and --grace more).
        progress, moved = None, time.monotonic()
        while True:
            time.sleep(0.5)
            now = tally()
            win.append(snapshot(load_pids, stack.pid, servers))
            at = time.monotonic()
            if (now["answered"], now["ended"]) != progress:
                progress, moved = (now["answered"], now["ended"]), at
            if at < start + args.seconds:
                continue
            if now["answered"] == len(people) and now["ended"] == now["queued"]:
                break
            if at - moved > args.bots_after + args.grace:
                break
        print(
            f"queued {now['queued']} of {now['posted']} posted; ended {now['ended']} "
            f"{win[-1].at - start:.1f} s after the first moment",
            flush=True,
        )
        finish = time.monotonic() + 30
        while tally()["done"] < len(people) and time.monotonic() < finish:
            time.sleep(0.5)
        rows = [r for part in ask([("collect",)] * args.procs) for r in part]
        rows = [dict(zip(FIELDS, r, strict=True)) for r in rows]
        ask([("stop",)] * args.procs)
        time.sleep(2.0)
        found = account(args.database_url)
    finally:
        for proc in procs:
            proc.join(10)
            if proc.is_alive():
                proc.kill()
        os.killpg(stack.pid, signal.SIGINT)
        stack.wait(60)
    load1 = os.getloadavg()
    report(args, rows, found, base, win, start, (load0, load1))


# ---------------------------------------------------------------- the figures


def report(
    args: argparse.Namespace,
    rows: list[dict[str, Any]],
    found: dict[str, Any],
    base: list[Snapshot],
    win: list[Snapshot],
    start: float,
    loads: tuple[tuple[float, ...], tuple[float, ...]],
) -> None:
    games = found["games"]
    tickets = found["tickets"]

    def kind(row: dict[str, Any]) -> str:
        game = games.get(str(row["game_id"]))
        return "bots" if game and game[1] else "people"

    matched = [r for r in rows if r["game_id"] is not None and not r["matched_by_get"]]
    waits: dict[str, list[float]] = {"people": [], "bots": []}
    for r in matched:
        waits[kind(r)].append(max(0.0, r["matched_at"] - r["post_answered"]) * 1000)
    posts = [
        (r["post_answered"] - r["post_sent"]) * 1000 for r in rows if r["post_answered"] is not None
    ]
    # The server's part: at a table of people only, its last person's ticket to matched (the
    # others also waited for that person to arrive).
    seated: dict[str, list[dict[str, Any]]] = {}
    for r in matched:
        if kind(r) == "people":
            seated.setdefault(r["game_id"], []).append(r)
    last = []
    for group in seated.values():
        r = max(group, key=lambda r: r["post_answered"])
        last.append(max(0.0, r["matched_at"] - r["post_answered"]) * 1000)
    # The same tickets split at the matcher's commit, by the database's clock: searching to
    # matched (the queue and the matcher), then matched to the frame (the stream's delivery).
    queue, queue_last, delivery, arrivals = [], [], [], []
    for group in seated.values():
        stamps = [tickets.get(r["ticket_id"]) for r in group]
        if any(s is None or s[4] is None or s[5] is None for s in stamps):
            continue
        came = max(float(s[4]) for s in stamps)  # the table's last person began searching
        for r, s in zip(group, stamps, strict=True):
            queue.append(float(s[5] - s[4]) * 1000)
            arrivals.append((came - float(s[4])) * 1000)
            delivery.append(max(0.0, r["matched_wall"] - float(s[5])) * 1000)
        queue_last.append(min(float(s[5] - s[4]) for s in stamps) * 1000)

    first_seen: dict[str, float] = {}
    for r in matched:
        at = r["matched_at"] - start
        first_seen[r["game_id"]] = min(first_seen.get(r["game_id"], at), at)
    tables = {"people": 0, "bots": 0}
    for gid in first_seen:
        tables["bots" if games.get(gid, (None, 0))[1] else "people"] += 1
    in_window = [at for at in first_seen.values() if 0 <= at <= args.seconds]
    per_second = [0] * (int(args.seconds) + 1)
    for at in in_window:
        per_second[int(at)] += 1

    # The idle baseline, taken at its rate over the window's length.
    span_base = base[-1].at - base[0].at
    span = win[-1].at - win[0].at
    cpu_base, _ = phase_cpu(base)
    cpu_win, restarted = phase_cpu(win)
    formed = len(games)
    # The matcher's thread: of the scheduler's threads but its main one, the busiest.
    tid = None
    if win[0].scheduler == base[0].scheduler == win[-1].scheduler:
        others = {
            t: win[-1].threads.get(t, 0) - base[0].threads.get(t, 0)
            for t in base[0].threads
            if t != base[0].scheduler
        }
        tid = max(others, key=others.get) if others else None
    m_base = matcher_seconds(base, tid)
    m_win = matcher_seconds(win, tid)

    def less_idle(busy: float, idle: float) -> float:
        return busy - idle * span / span_base

    sched = less_idle(cpu_win["scheduler"], cpu_base["scheduler"])
    matcher = less_idle(m_win, m_base)

    errors: dict[str, int] = {}
    for r in rows:
        if r["error"]:
            key = r["error"].split(" b'")[0]
            errors[key] = errors.get(key, 0) + 1
    if any(r["stream_refused"] for r in rows):
        errors["stream refused"] = sum(r["stream_refused"] for r in rows)
    fivexx = sum(1 for r in rows if (r["post_status"] or 0) >= 500)
    fivexx += sum(1 for r in rows if (r["resign_status"] or 0) >= 500)
    refused = sum(1 for r in rows if 429 in (r["post_status"], r["resign_status"]))

    # Every POSTed ticket's end: told by its frame, or as the database has it.
    ends: dict[str, int] = {}
    known = set()
    for r in rows:
        if r["ticket_id"] is None:
            continue
        known.add(r["ticket_id"])
        row = tickets.get(r["ticket_id"])
        if row is None:
            end = "lost (not in the database)"
        elif row[1] == "matched" and r["game_id"] and not r["matched_by_get"]:
            wrong = str(row[3]) != r["game_id"] or r["matched_ticket"] != r["ticket_id"]
            end = "matched, frame with another game" if wrong else "matched, frame seen"
        elif row[1] == "matched" and r["matched_by_get"]:
            end = "matched, learnt after a dropped stream"
        elif row[1] == "matched":
            end = "matched, no frame (lost frame)"
        else:
            end = f"{row[1]} {row[2]}".strip()
        ends[end] = ends.get(end, 0) + 1
    unanswered = [t for t in tickets if t not in known]

    def three(values: list[float]) -> str:
        return "/".join(f"{pct(values, q):.0f}" for q in (0.5, 0.95, 0.99))

    posted = sum(1 for r in rows if r["post_sent"] is not None)
    print()
    print(
        f"{len(rows)} people, {posted} tickets POSTed over {args.seconds:.0f} s "
        f"({len(rows) / args.seconds:.1f}/s) in rooms {', '.join(ROOMS)}; "
        f"bots_after {args.bots_after:g} s"
    )
    print(f"POST /matchmaking/tickets p50/p95/p99 ms: {three(posts)}")
    print(
        f"ticket to matched p50/p95/p99 ms: people only {three(waits['people'])} "
        f"({len(waits['people'])} tickets, {tables['people']} tables; p95 aim "
        f"{P95_AIM_MS:.0f} ms: {'met' if pct(waits['people'], 0.95) < P95_AIM_MS else 'missed'}"
        f"); bots filled {three(waits['bots'])} ({len(waits['bots'])} tickets, "
        f"{tables['bots']} tables)"
    )
    print(f"  the last person to sit at a table of people: {three(last)} ({len(last)} tables)")
    print(
        f"  split at the matcher's commit (tables of people): searching to matched "
        f"{three(queue)} (the last person's {three(queue_last)}), then to the frame "
        f"{three(delivery)}; of the first part, waiting for the table's last person to "
        f"begin searching {three(arrivals)}"
    )
    print(
        f"tables formed a second over the {args.seconds:.0f} s of arrivals: "
        f"{len(in_window) / args.seconds:.2f} (peak {max(per_second)} in one second; arrivals "
        f"allow {len(rows) / 3 / args.seconds:.2f}); all {formed} tables "
        f"by {max(first_seen.values(), default=0):.1f} s"
    )
    print(
        f"matcher CPU a table: scheduler process {sched * 1000 / max(1, formed):.2f} ms "
        f"({cpu_win['scheduler']:.2f} s in {span:.0f} s less {cpu_base['scheduler']:.2f} s "
        f"idle in {span_base:.0f} s), matcher thread {matcher * 1000 / max(1, formed):.2f} ms "
        f"({m_win:.2f} s less {m_base:.2f} s idle)"
    )
    line = ", ".join(
        f"{p} {cpu_win[p]:.1f} s "
        f"({less_idle(cpu_win[p], cpu_base[p]) * 1000 / max(1, formed):.1f} ms a table)"
        for p in ("web", "postgres", "worker", "notifier", "beat", "redis", "load")
    )
    print(f"CPU in the window: {line}")
    print(
        f"cores busy: {cores(win):.2f} in the window ({sum(cpu_win.values()) / span:.2f} of "
        f"them the stack's, PostgreSQL's and the load's), {cores(base):.2f} in the idle "
        f"baseline ({sum(cpu_base.values()) / span_base:.2f}; streams open, nobody queued); "
        f"load average {loads[0][0]:.2f} before the run, {loads[1][0]:.2f} after; "
        f"restarted in the window: {', '.join(restarted) or 'nothing'}"
    )
    resigned = sum(1 for r in rows if r["resign_status"] == 200)
    dropped = sum(r["dropped"] for r in rows)
    print(
        f"errors: {sum(errors.values())} (5xx {fivexx}, refused {refused}) {errors or ''}; "
        f"dropped streams {dropped}; resigned {resigned}"
    )
    kinds: dict[str, int] = {}
    for r in rows:
        for name, count in r["frames"].items():
            kinds[name] = kinds.get(name, 0) + count
    shown = ", ".join(
        f"{name} {count / max(1, posted):.2f}"
        for name, count in sorted(kinds.items(), key=lambda kv: -kv[1])
    )
    print(f"frames a person's stream delivered from the POST to its closing: {shown}")
    checks = found["checks"]
    doubles = checks["people at two tables (ever)"] + checks["people at two active tables now"]
    print(f"double seats: {doubles}  ({', '.join(f'{k}: {v}' for k, v in checks.items())})")
    lost = sum(
        v for k, v in ends.items() if k.startswith("lost") or "no frame" in k or "another" in k
    )
    print(
        f"lost tickets: {lost}  (POSTed tickets' ends: {dict(sorted(ends.items()))}; tickets "
        f"whose POST got no answer: {len(unanswered)})"
    )
    print(f"tickets in the database: {[tuple(s) for s in found['states']]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", type=int, default=3000)
    parser.add_argument("--seconds", type=float, default=60.0, help="arrivals spread over this")
    parser.add_argument(
        "--baseline", type=float, default=None, help="idle seconds measured (default --seconds)"
    )
    parser.add_argument("--bots-after", type=float, default=20.0, help="the tickets' bots_after")
    parser.add_argument("--grace", type=float, default=20.0, help="seconds past the last bots")
    parser.add_argument("--procs", type=int, default=2, help="load generator processes")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database-url", default=DATABASE)
    parser.add_argument("--broker", default=BROKER)
    args = parser.parse_args()
    if args.baseline is None:
        args.baseline = args.seconds
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(
        f"{os.cpu_count()} CPUs; {args.people} people over {args.seconds:.0f} s in 3 rooms; "
        f"load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
