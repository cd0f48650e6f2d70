"""Tables of one person against two bots, per bot level, stepped (`make bench-bots`).

    .venv/bin/python scripts/bench_bots.py                      (easy, normal, hard; 250 and 500)
    .venv/bin/python scripts/bench_bots.py --levels hard --steps 250,500,750 --seconds 30
    .venv/bin/python scripts/bench_bots.py --levels hard --people 250 --niceness 0

At launch most tables are one person against two bots (quick play, and the matchmaker's bots
filling seats). For each level it starts the stack as `make run` does (``python -m ops.stack``:
web processes, the worker, the bots' worker at its lower priority, scheduler, notifier, beat;
the defaults, throttles as shipped, the bots' pause ``TONGITS_BOT_DELAY_SECONDS`` as shipped) on
a scratch database ``tongits_bench_bots`` of the local PostgreSQL, with Redis database 13 as the
broker, on a free port, and stops it at the end of the level. Each step's tables are made
through the services when the step begins (``games.lobby``: a person and two bots of the level,
untimed, first to 99 wins, so no table ends during the run; quick play starts them at once, so
their bots play from then on).

The person is `make bench-players`' player (``scripts/bench_players.py``: its connections, its
measures and its stack are reused from there): two kept-alive connections, its game's stream
and one for its commands; it acts only when a ``view`` frame gives it legal commands, thinks
1.5 to 4.5 s, then POSTs the greedy bot's choice. The load runs in ``--procs`` processes on the
same cores as the server.

For each step (tables added to those already playing), after a warm-up, over ``--seconds`` it
prints: moves per second (the person's and the bots', as the streams delivered them), the
person's POST p50/p95/p99, stream p95 (from the person's POST answer to its stream's
delivery of that move), the bots'
reply p50/p95/p99 beyond the configured pause (from the stream's delivery of the move that made
it a bot's turn, or the POST answer of the person's move, to the delivery of the bot's move,
minus ``TONGITS_BOT_DELAY_SECONDS``), CPU milliseconds per move of each part (``bots``: the
bots' worker) and of the whole machine, the bots' worker's CPU per bot move (its decision, the
read of the table and the write), the cores busy, and errors and dropped streams. At the end,
per level, the largest step within the targets: POST p99 <= 100 ms, stream p95 <= 100 ms, bot
reply p95 <= 1 s beyond the pause, no error, no dropped stream.

People first under load (``--people N``): at each level, on the same stack and database, N
tables of three people as `make bench-players` plays them (``bench_players.make_tables``, made
with the level's database before the stack starts; ``bench_players.client_main`` in one more
load process) open their streams with the first step and keep playing through every step, so
the bots' tables are added to a node already busy with people's. Each row then also shows the
people tables' own moves per second, POST p50/p95/p99 and stream p95 (``ppl``, apart from the
bot tables' person), their errors and dropped streams; the CPU per move is then per move of
all tables (the bot tables' and the people tables'), and a step is within the targets only if
the people tables' POST p99 <= 100 ms and stream p95 <= 100 ms as well, with no error and
every stream open. ``--niceness K`` starts the bots' worker at niceness K
(``TONGITS_BOT_NICENESS``, 10 as shipped), so a run with the bots at the requests' priority
(0) compares with one as shipped.

A benchmark, not a test: it asserts nothing. Run it on a quiet machine; beside
`make bench-players` (the same session) to compare a node's tables of people with its tables
of bots.
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bench_players
import orjson
import redis
import uvloop
from bench_players import (
    PARTS,
    POST_TARGET_MS,
    STREAM_TARGET_MS,
    THINK,
    Http,
    busy_cores,
    cpu_by_part,
    find_servers,
    free_port,
    pct,
    reset_database,
    settle,
    start_stack,
    wait_healthy,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NAME = "bench-bots"
DATABASE = "postgres://postgres@127.0.0.1:5432/tongits_bench_bots"
BROKER = "redis://127.0.0.1:6379/13"
REPLY_TARGET_MS = 1000.0
#: The bots' pause before each move, as shipped (tongits_site/settings.py); the replies are
#: measured beyond it.
BOT_DELAY = float(os.environ.get("TONGITS_BOT_DELAY_SECONDS") or 0.8)


# ---------------------------------------------------------------- set-up (services)


def make_tables(database_url: str, count: int, tag: str, level: str) -> list[tuple[str, str]]:
    """(game id, the person's token) for ``count`` new tables of a person and two ``level``
    bots, started at once (quick play); untimed, first to 99 wins."""
    os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "tongits_site.settings"
    os.environ["TONGITS_DEAL_INLINE"] = "1"  # set-up only: the first deal without a worker
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connections

    from accounts.services import session_create
    from games import lobby

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    users = get_user_model()
    out = []
    bot = {"kind": "bot", "level": level}
    rules = {"preset": "standard", "wins_to_match": 99, "turn_seconds": 0}
    for t in range(count):
        user = users.objects.create_user(f"b{tag}t{t}", password="bench-passphrase-0192")
        game = lobby.table_create(user=user, rules=rules, seats=[{"kind": "user"}, bot, bot])
        out.append((str(game.pk), session_create(user=user)[1]))
    connections.close_all()
    return out


# ---------------------------------------------------------------- the people (asyncio)


@dataclass
class Window:
    """What one load process saw during a measured window."""

    posts: list[float] = field(default_factory=list)  # ms
    streams: list[float] = field(default_factory=list)  # ms
    replies: list[float] = field(default_factory=list)  # ms beyond the bots' pause
    moves: int = 0  # the person's, answered 200
    bot_moves: int = 0
    conflicts: int = 0
    errors: list[str] = field(default_factory=list)
    dropped: int = 0


class People:
    """The person of each of some tables, in one event loop."""

    def __init__(self, host: str, port: int, seed: int) -> None:
        from games.rules.bots import GreedyBot

        self.host, self.port = host, port
        self.rng = random.Random(seed)
        self.bot = GreedyBot()
        self.window: Window | None = None
        self.ready = 0
        self.tasks: list[asyncio.Task] = []
        self.released = asyncio.Event()

    async def person(self, game: str, token: str) -> None:
        """Follow the stream; act after thinking whenever it is the person's move; time the
        bots' replies from the stream."""
        stream = Http(self.host, self.port, token)
        commands = Http(self.host, self.port, token)
        path = f"/api/v1/games/{game}/stream"
        last_id = 0
        acting: asyncio.Task | None = None
        latest: dict[str, Any] = {}
        first = True
        answered: dict[int, float] = {}  # version -> when the person's POST answer came
        bot_since: float | None = None  # a bot's turn began (its table's move seen) at

        async def act() -> None:
            nonlocal latest, bot_since
            while True:
                await asyncio.sleep(self.rng.uniform(*THINK))
                await self.released.wait()
                view = latest
                if not view.get("legal_commands"):
                    return
                command = self.bot.choose(view["view"], view["legal_commands"], self.rng)
                body = orjson.dumps({"command": command, "expected_version": view["version"]})
                sent = time.perf_counter()
                try:
                    status, data = await asyncio.wait_for(
                        commands.call("POST", f"/api/v1/games/{game}/commands", body), 30
                    )
                except (OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
                    commands.close()
                    self.error(f"POST {type(exc).__name__}")
                    return
                now = time.perf_counter()
                if status == 200:
                    answer = orjson.loads(data)
                    if self.window is not None:
                        self.window.posts.append((now - sent) * 1000)
                        self.window.moves += 1
                    answered[answer["version"]] = now
                    if len(answered) > 16:
                        del answered[min(answered)]
                    if answer["game"]["version"] >= latest.get("version", 0):
                        latest = answer["game"]
                        if _bots_turn(latest):
                            bot_since = now
                elif status == 409:  # the table moved on meanwhile: wait for its view
                    if self.window is not None:
                        self.window.conflicts += 1
                    return
                else:
                    self.error(f"POST {status} {data[:120]!r}")
                    return

        while True:
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
                            at = answered.pop(seq, None)
                            if at is not None and self.window is not None:
                                self.window.streams.append(max(0.0, now - at) * 1000)
                        elif raw.startswith(b"event: view"):
                            view = orjson.loads(raw[raw.index(b"data: ") + 6 :])
                            if view["version"] <= latest.get("version", 0):
                                continue
                            was_bots = _bots_turn(latest)
                            latest = view
                            if was_bots and bot_since is not None and self.window is not None:
                                reply = (now - bot_since - BOT_DELAY) * 1000
                                self.window.replies.append(reply)
                                self.window.bot_moves += 1
                            bot_since = now if _bots_turn(view) else None
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
                bot_since = None
                if self.window is not None:
                    self.window.dropped += 1
                    self.window.errors.append(f"stream dropped: {type(exc).__name__}")
                await asyncio.sleep(1.0)  # then resume after the last id, as an app would

    def error(self, text: str) -> None:
        if self.window is not None:
            self.window.errors.append(text)

    def add(self, tables: list[tuple[str, str]]) -> None:
        for game, token in tables:
            self.tasks.append(asyncio.create_task(self.person(game, token)))


def _bots_turn(game: dict[str, Any]) -> bool:
    """A round is on and a bot (not the person, seat 0) is to act."""
    view = game.get("view") or {}
    return view.get("phase") in ("start", "play", "draw_call") and view.get("turn") not in (
        None,
        game.get("seat"),
    )


def client_main(host: str, port: int, seed: int, conn: Any) -> None:
    """A load process: obeys the parent's ('add', tables) / ('release',) / ('start',) / ('end',)
    / ('stop',)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    import gc

    gc.freeze()

    async def run() -> None:
        people = People(host, port, seed)
        loop = asyncio.get_running_loop()
        while True:
            message = await loop.run_in_executor(None, conn.recv)
            if message[0] == "add":
                expected = people.ready + len(message[1])
                people.add(message[1])
                deadline = time.monotonic() + 180
                while people.ready < expected and time.monotonic() < deadline:
                    await asyncio.sleep(0.1)
                conn.send(("ready", people.ready, expected))
            elif message[0] == "release":
                people.released.set()
                conn.send(("released",))
            elif message[0] == "start":
                people.window = Window()
                conn.send(("started",))
            elif message[0] == "end":
                window, people.window = people.window, None
                conn.send(("window", window))
            elif message[0] == "stop":
                for task in people.tasks:
                    task.cancel()
                conn.send(("stopped",))
                return

    uvloop.run(run())


# ---------------------------------------------------------------- one level


def on_both_cores(make: Any, database_url: str, count: int, tag: str, *extra: Any) -> list[Any]:
    """``count`` tables made by ``make(database_url, n, tag, *extra)`` in two processes, half
    each, interleaved so that each load process gets tables of both halves."""
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:
        halves = pool.starmap(
            make,
            [
                (database_url, count // 2, f"{tag}a", *extra),
                (database_url, count - count // 2, f"{tag}b", *extra),
            ],
        )
    tables = [t for pair in zip(*halves, strict=False) for t in pair]
    return tables + halves[0][len(halves[1]) :]


def make_step(args: argparse.Namespace, count: int, tag: str, level: str) -> list[tuple[str, str]]:
    """``count`` new tables, made on both cores (quick play starts them at once: their bots
    play their first moves, so a step's tables are made only when the step begins)."""
    return on_both_cores(make_tables, args.database_url, count, tag, level)


def make_people(args: argparse.Namespace, tag: str) -> list[tuple[str, list[str]]]:
    """``--people`` tables of three people, as `make bench-players` makes them (on both cores),
    in the level's database; nobody acts before the first step."""
    if not args.people:
        return []
    started = time.monotonic()
    tables = on_both_cores(bench_players.make_tables, args.database_url, args.people, tag)
    print(
        f"{len(tables)} tables of three people made in {time.monotonic() - started:.0f} s",
        flush=True,
    )
    return tables


def one_level(args: argparse.Namespace, level: str) -> list[dict[str, Any]]:
    steps = [int(s) for s in args.steps.split(",")]
    reset_database(args.database_url)
    tag = f"{level[0]}{int(time.time()) % 100000}"
    people_tables = make_people(args, tag)
    # The scratch broker too: a previous level's tables no longer exist, and their queued moves
    # (and the sweeper's copies of them) would stand before this level's in the bots' queue.
    redis.Redis.from_url(args.broker).flushdb()
    settle(args.database_url)

    port = free_port()
    servers = find_servers(args.database_url, args.broker)
    stack = start_stack(port, args.database_url, args.broker, name=NAME)
    rows: list[dict[str, Any]] = []
    fork = multiprocessing.get_context("fork")
    pipes, procs = [], []
    try:
        wait_healthy(port, name=NAME)
        time.sleep(3.0)  # past the stack's start-up work
        for i in range(args.procs):
            parent, child = fork.Pipe()
            proc = fork.Process(target=client_main, args=("127.0.0.1", port, 7919 * i + 1, child))
            proc.start()
            pipes.append(parent)
            procs.append(proc)
        people_pipe = None  # the people tables' load process (bench_players' players)
        if people_tables:
            people_pipe, child = fork.Pipe()
            proc = fork.Process(
                target=bench_players.client_main, args=("127.0.0.1", port, 104729, child)
            )
            proc.start()
            procs.append(proc)
        load_pids = {os.getpid(), *(p.pid for p in procs)}

        def ask(messages: list[Any], people: Any = None) -> list[Any]:
            """Every bots' table load process its message, and the people's process ``people``
            (if any, its answer last), at once."""
            for pipe, message in zip(pipes, messages, strict=True):
                pipe.send(message)
            if people is not None and people_pipe is not None:
                people_pipe.send(people)
            answers = [pipe.recv() for pipe in pipes]
            if people is not None and people_pipe is not None:
                answers.append(people_pipe.recv())
            return answers

        people_ready = 0
        playing = 0
        for n, step in enumerate(steps):
            started = time.monotonic()
            new = make_step(args, step - playing, f"{tag}s{n}", level)
            print(
                f"{level}: {len(new)} more tables of a person and two bots made in "
                f"{time.monotonic() - started:.0f} s",
                flush=True,
            )
            answers = ask([("add", new[i :: args.procs]) for i in range(args.procs)])
            ready = sum(a[1] for a in answers)
            if n == 0:
                if people_pipe is not None:
                    people_pipe.send(("add", people_tables))
                    people_ready = people_pipe.recv()[1]  # streams open, three a table
                ask([("release",)] * args.procs, ("release",))
            playing = step
            time.sleep(args.warmup)
            ask([("start",)] * args.procs, ("start",))
            cpu0, _ = cpu_by_part(load_pids, stack.pid, servers)
            busy0, total0 = busy_cores()
            t0 = time.monotonic()
            time.sleep(args.seconds)
            windows = [a[1] for a in ask([("end",)] * args.procs, ("end",))]
            people = windows.pop() if people_pipe is not None else bench_players.Window()
            elapsed = time.monotonic() - t0
            cpu1, _ = cpu_by_part(load_pids, stack.pid, servers)
            busy1, total1 = busy_cores()
            person = sum(w.moves for w in windows)
            bots = sum(w.bot_moves for w in windows)
            moves = person + bots + people.moves  # for the CPU per move: every table's
            posts = [x for w in windows for x in w.posts]
            streams = [x for w in windows for x in w.streams]
            replies = [x for w in windows for x in w.replies]
            errors = [e for w in windows for e in w.errors]
            cores = (busy1 - busy0) / (total1 - total0) * (os.cpu_count() or 1)
            row: dict[str, Any] = {
                "level": level,
                "tables": step,
                "ready": ready,
                "moves_per_s": (person + bots) / elapsed,
                "bot_share": bots / max(1, person + bots),  # of the bot tables' moves
                "post": (pct(posts, 0.5), pct(posts, 0.95), pct(posts, 0.99)),
                "stream": pct(streams, 0.95),
                "reply": (pct(replies, 0.5), pct(replies, 0.95), pct(replies, 0.99)),
                "cpu_ms": {p: (cpu1[p] - cpu0[p]) * 1000 / max(1, moves) for p in PARTS},
                "bot_move_ms": (cpu1["bots"] - cpu0["bots"]) * 1000 / max(1, bots),
                "all_ms": cores * elapsed * 1000 / max(1, moves),
                "cores": cores,
                "errors": len(errors),
                "error_kinds": sorted(set(errors))[:5],
                "dropped": sum(w.dropped for w in windows),
            }
            if people_pipe is not None:
                row["people"] = {
                    "tables": len(people_tables),
                    "streams": 3 * len(people_tables),
                    "ready": people_ready,
                    "moves_per_s": people.moves / elapsed,
                    "post": (
                        pct(people.posts, 0.5),
                        pct(people.posts, 0.95),
                        pct(people.posts, 0.99),
                    ),
                    "stream": pct(people.streams, 0.95),
                    "errors": len(people.errors),
                    "error_kinds": sorted(set(people.errors))[:5],
                    "dropped": people.dropped,
                }
            rows.append(row)
            print_row(row)
        ask([("stop",)] * args.procs, ("stop",))
    finally:
        for proc in procs:
            proc.join(10)
            if proc.is_alive():
                proc.kill()
        os.killpg(stack.pid, signal.SIGINT)
        stack.wait(60)
    return rows


HEADER = (
    f"{'level':>6} {'tables':>6} {'moves/s':>8} {'bots':>5} {'POST p50/p95/p99 ms':>21} "
    f"{'strm p95':>8} {'reply p50/p95/p99 ms':>22} "
    f"{'web':>5} {'pg':>5} {'wrk':>5} {'bots':>5} {'sch+bt':>6} {'ntf':>5} {'rds':>5} "
    f"{'load':>5} {'all':>5} {'bot/mv':>6} {'cores':>5} {'err':>4} {'drop':>4}"
)
#: The people tables' columns (``--people``), after the bot tables'.
PEOPLE_HEADER = (
    f" | {'ppl mv/s':>8} {'ppl POST p50/p95/p99':>21} {'ppl strm':>8} {'err':>4} {'drop':>4}"
)


def print_row(row: dict[str, Any]) -> None:
    cpu = row["cpu_ms"]
    post, reply = row["post"], row["reply"]
    print(
        f"{row['level']:>6} {row['tables']:>6} {row['moves_per_s']:8.1f} "
        f"{row['bot_share']:5.0%} {post[0]:6.1f}/{post[1]:6.1f}/{post[2]:6.1f}  "
        f"{row['stream']:8.1f} {reply[0]:6.0f}/{reply[1]:6.0f}/{reply[2]:6.0f}  "
        f"{cpu['web']:5.2f} {cpu['postgres']:5.2f} {cpu['worker']:5.2f} {cpu['bots']:5.2f} "
        f"{cpu['scheduler'] + cpu['beat']:6.2f} {cpu['notifier']:5.2f} {cpu['redis']:5.2f} "
        f"{cpu['load']:5.2f} {row['all_ms']:5.2f} {row['bot_move_ms']:6.2f} "
        f"{row['cores']:5.2f} {row['errors']:>4} {row['dropped']:>4}"
        + (people_columns(row["people"]) if "people" in row else "")
        + (f"  {row['error_kinds']}" if row["errors"] else "")
        + (
            f"  people: {row['people']['error_kinds']}"
            if row.get("people", {}).get("errors")
            else ""
        ),
        flush=True,
    )


def people_columns(people: dict[str, Any]) -> str:
    post = people["post"]
    return (
        f" | {people['moves_per_s']:8.1f} {post[0]:6.1f}/{post[1]:6.1f}/{post[2]:6.1f}  "
        f"{people['stream']:8.1f} {people['errors']:>4} {people['dropped']:>4}"
    )


def meets(row: dict[str, Any]) -> bool:
    return (
        row["post"][2] <= POST_TARGET_MS
        and row["stream"] <= STREAM_TARGET_MS
        and row["reply"][1] <= REPLY_TARGET_MS
        and row["errors"] == 0
        and row["dropped"] == 0
        and row["ready"] == row["tables"]
        and ("people" not in row or people_meet(row["people"]))
    )


def people_meet(people: dict[str, Any]) -> bool:
    """The people tables' own targets, as `make bench-players` holds them."""
    return (
        people["post"][2] <= POST_TARGET_MS
        and people["stream"] <= STREAM_TARGET_MS
        and people["errors"] == 0
        and people["dropped"] == 0
        and people["ready"] == people["streams"]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="easy,normal,hard", help="bot levels, one by one")
    parser.add_argument("--steps", default="250,500", help="tables at each step")
    parser.add_argument("--seconds", type=float, default=30.0, help="the measured window")
    parser.add_argument("--warmup", type=float, default=10.0, help="seconds before each window")
    parser.add_argument("--procs", type=int, default=1, help="load generator processes")
    parser.add_argument(
        "--people",
        type=int,
        default=0,
        help="tables of three people playing on the same stack through every step",
    )
    parser.add_argument(
        "--niceness",
        type=int,
        default=None,
        help="the bots' worker's niceness, 0 to 19 (TONGITS_BOT_NICENESS; 10 as shipped)",
    )
    parser.add_argument("--database-url", default=DATABASE)
    parser.add_argument("--broker", default=BROKER)
    args = parser.parse_args()
    if args.niceness is not None:
        if not 0 <= args.niceness <= 19:
            parser.error("--niceness: 0 to 19")
        os.environ["TONGITS_BOT_NICENESS"] = str(args.niceness)  # the stack inherits it
    from ops.stack import bot_niceness

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(
        f"{os.cpu_count()} CPUs; the person thinks {THINK[0]}-{THINK[1]} s, the bots pause "
        f"{BOT_DELAY} s; {args.warmup:.0f} s warm-up, {args.seconds:.0f} s measured per step; "
        "CPU in ms per move (the person's and the bots'); bot/mv: the bots' worker's CPU ms per "
        f"bot move; reply: beyond the pause; the bots' worker at nice {bot_niceness()}"
        + (
            f"; {args.people} tables of three people play through every step (ppl), CPU per "
            "move of every table"
            if args.people
            else ""
        ),
        flush=True,
    )
    best = {}
    for level in args.levels.split(","):
        print(HEADER + (PEOPLE_HEADER if args.people else ""), flush=True)
        rows = one_level(args, level)
        passing = [r["tables"] for r in rows if meets(r)]
        best[level] = max(passing) if passing else 0
        print(f"{level}: the largest step within the targets: {best[level]} tables", flush=True)
    print(f"largest step within the targets, per level: {best}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
