"""Benchmark of the live streams: 300 open streams while 10 tables play (`make bench-streams`).

    .venv/bin/python scripts/bench_streams.py [--streams 300] [--tables 10] [--moves 40]
        [--spectators 300 [--delay D]]

Needs a PostgreSQL server: the one of DATABASE_URL (default postgres://postgres@127.0.0.1:5432),
on which it creates, migrates and at the end drops a scratch database. It starts ONE uvicorn
process (one web worker: every figure is per process) on a free port, seats 3 users at each of
the tables, opens the streams (spread evenly over the tables' seats, each an independent HTTP
connection) and has each table play `--moves` greedy moves over HTTP, one at a time per table,
all tables at once. It prints:

- move-to-stream latency, p50 / p95 / max over every (move, stream): from the moment the command
  was sent, and from the moment its answer (after the commit) came back, to the moment the
  stream delivered the move's last event (targets: p50 <= 20 ms, p95 <= 100 ms);
- resident memory per open stream: the server's RSS with the streams open minus before, / N;
- the server's CPU while every stream is open and idle (10 s, no moves).

With ``--spectators N`` the tables are public and N more streams watch them (N users, spread
evenly over the tables, ``--delay`` their spectator delay): it prints their move-to-spectator
latency beside the players' (the move's append to the delivery of its last event; with a delay,
to the delivery of the move's events once that many more were appended, so only 0 compares).

Not a test: nothing is asserted. The client runs on the same machine and competes for the CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import psutil
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ops.stack import one_web_process  # noqa: E402 (needs ROOT on the path)

BENCH_DB = "tongits_bench_streams"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def scratch_database() -> tuple[str, dict[str, Any]]:
    """(DATABASE_URL of a fresh scratch database, psycopg keywords of its server)."""
    import dj_database_url

    base = dj_database_url.parse(
        os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/tongits")
    )
    params = {
        "dbname": "postgres",
        "user": base.get("USER") or None,
        "password": base.get("PASSWORD") or None,
        "host": base.get("HOST") or None,
        "port": base.get("PORT") or None,
    }
    params = {k: v for k, v in params.items() if v}
    with psycopg.connect(**params, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{BENCH_DB}"')
    user = quote(str(base.get("USER") or ""))
    password = f":{quote(str(base['PASSWORD']))}" if base.get("PASSWORD") else ""
    host = quote(str(base.get("HOST") or "127.0.0.1"), safe="")
    port = base.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{BENCH_DB}", params


def drop_database(params: dict[str, Any]) -> None:
    with psycopg.connect(**params, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}" WITH (FORCE)')


def setup_tables(
    tables: int, prefix: str = "bench", migrate: bool = True, watch: dict | None = None
) -> list[tuple[str, list[str]]]:
    """(game id, the three players' tokens) per table, made through the services (the fast
    path: users with a fast password hasher, each table created, accepted and started;
    untimed, first to 99 wins); ``migrate`` the database first. ``scripts/bench_players.py``
    makes its tables here too."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tongits_site.settings")
    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from accounts.services import session_create
    from games import lobby

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    if migrate:
        call_command("migrate", interactive=False, verbosity=0)
    users = get_user_model()
    out = []
    for t in range(tables):
        seated = [
            users.objects.create_user(f"{prefix}t{t}s{s}", password="bench-passphrase-0192")
            for s in range(3)
        ]
        seats = [{"kind": "user"}] + [{"kind": "user", "username": u.username} for u in seated[1:]]
        rules = {"preset": "standard", "wins_to_match": 99, "turn_seconds": 0}
        game = lobby.table_create(user=seated[0], rules=rules, seats=seats, **(watch or {}))
        for invited in seated[1:]:  # a seat given by name is an invitation
            lobby.table_respond(game_id=game.pk, user=invited, accept=True)
        lobby.table_start(game_id=game.pk, user=seated[0])
        out.append((str(game.pk), [session_create(user=u)[1] for u in seated]))
    from django.db import connections

    connections.close_all()
    return out


def spectator_tokens(count: int) -> list[str]:
    """Tokens of ``count`` more users (spectators: they sit nowhere)."""
    from django.contrib.auth import get_user_model

    from accounts.services import session_create

    users = get_user_model()
    out = []
    for i in range(count):
        user = users.objects.create_user(f"benchw{i}", password="bench-passphrase-0192")
        out.append(session_create(user=user)[1])
    from django.db import connections

    connections.close_all()
    return out


class Stream:
    def __init__(self, game: str, seat: int | None) -> None:
        self.game, self.seat = game, seat
        self.seen: dict[int, float] = {}  # seq -> when it arrived (perf_counter)
        self.delay: dict[int, float] = {}  # seq -> arrival minus the event's recorded_at
        self.ready = asyncio.Event()


async def read_stream(client: httpx.AsyncClient, stream: Stream, token: str) -> None:
    headers = {"Authorization": f"Token {token}", "Accept": "text/event-stream"}
    async with client.stream("GET", f"/api/v1/games/{stream.game}/stream", headers=headers) as r:
        assert r.status_code == 200, await r.aread()
        buffer = b""
        async for chunk in r.aiter_raw():
            now, wall = time.perf_counter(), time.time()
            buffer += chunk
            while b"\n\n" in buffer:
                raw, buffer = buffer.split(b"\n\n", 1)
                if raw.startswith(b"id: "):
                    seq = int(raw[4 : raw.index(b"\n")])
                    stream.seen[seq] = now
                    item = json.loads(raw[raw.index(b"data: ") + 6 :])
                    recorded = datetime.fromisoformat(item["recorded_at"].replace("Z", "+00:00"))
                    stream.delay[seq] = wall - recorded.timestamp()
                elif raw.startswith(b"event: view"):
                    stream.ready.set()


async def play_table(
    client: httpx.AsyncClient,
    game: str,
    tokens: list[str],
    streams: list[Stream],
    moves: int,
    samples: list[tuple[float, float, float, bool]],
) -> None:
    from games.rules.bots import GreedyBot

    bot, rng = GreedyBot(), random.Random(game)
    auth = [{"Authorization": f"Token {t}"} for t in tokens]
    for _ in range(moves):
        view = (await client.get(f"/api/v1/games/{game}", headers=auth[0])).json()
        if view["status"] != "active" or view["view"]["turn"] is None:
            return
        seat = view["view"]["turn"]
        mine = (await client.get(f"/api/v1/games/{game}", headers=auth[seat])).json()
        if not mine["legal_commands"]:
            await asyncio.sleep(0.05)
            continue
        command = bot.choose(mine["view"], mine["legal_commands"], rng)
        sent = time.perf_counter()
        response = await client.post(
            f"/api/v1/games/{game}/commands",
            json={"command": command, "expected_version": mine["version"]},
            headers=auth[seat],
        )
        answered = time.perf_counter()
        if response.status_code != 200:
            continue
        version = response.json()["version"]
        deadline = time.monotonic() + 5
        while not all(version in s.seen for s in streams) and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        for s in streams:
            if version in s.seen:
                delay = s.delay[version]
                samples.append(
                    (delay, s.seen[version] - sent, s.seen[version] - answered, s.seat is None)
                )
        await asyncio.sleep(0.05)


def cpu_seconds(process: psutil.Process) -> float:
    """User plus system CPU seconds the process has used so far."""
    times = process.cpu_times()
    return times.user + times.system


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def bench(
    url: str,
    server: psutil.Process,
    tables,
    n_streams: int,
    moves: int,
    watchers: list[str] | None = None,
) -> None:
    watchers = watchers or []
    total = n_streams + len(watchers)
    limits = httpx.Limits(max_connections=total + 50, max_keepalive_connections=total + 50)
    timeout = httpx.Timeout(10.0, read=60.0)
    async with (
        httpx.AsyncClient(base_url=url, limits=limits, timeout=timeout) as streams_client,
        httpx.AsyncClient(base_url=url, timeout=timeout) as moves_client,
    ):
        await moves_client.get("/healthz")
        await moves_client.get(
            f"/api/v1/games/{tables[0][0]}/events",
            headers={"Authorization": f"Token {tables[0][1][0]}"},
        )
        time.sleep(0.5)
        rss_before = server.memory_info().rss
        streams: dict[str, list[Stream]] = {game: [] for game, _ in tables}
        tasks = []
        for i in range(n_streams):
            game, tokens = tables[i % len(tables)]
            seat = (i // len(tables)) % 3
            stream = Stream(game, seat)
            streams[game].append(stream)
            tasks.append(asyncio.create_task(read_stream(streams_client, stream, tokens[seat])))
        for i, token in enumerate(watchers):
            game, _ = tables[i % len(tables)]
            stream = Stream(game, None)
            streams[game].append(stream)
            tasks.append(asyncio.create_task(read_stream(streams_client, stream, token)))
        opened = time.perf_counter()
        await asyncio.wait_for(
            asyncio.gather(*(s.ready.wait() for ss in streams.values() for s in ss)), 120
        )
        print(
            f"opened {n_streams} player streams and {len(watchers)} spectator streams in "
            f"{time.perf_counter() - opened:.1f} s"
        )
        await asyncio.sleep(1.0)
        rss_open = server.memory_info().rss
        samples: list[tuple[float, float, float, bool]] = []
        started = time.perf_counter()
        me = psutil.Process()
        cpu_before, me_before = cpu_seconds(server), cpu_seconds(me)
        await asyncio.gather(
            *(
                play_table(moves_client, game, tokens, streams[game], moves, samples)
                for game, tokens in tables
            )
        )
        played = time.perf_counter() - started
        busy = cpu_seconds(server) - cpu_before
        client_busy = cpu_seconds(me) - me_before
        await asyncio.sleep(1.0)
        idle_cpu_start = cpu_seconds(server)
        idle_wall = time.perf_counter()
        await asyncio.sleep(10.0)
        idle = cpu_seconds(server) - idle_cpu_start
        idle_wall = time.perf_counter() - idle_wall
        alive = sum(not t.done() for t in tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    watched = [r * 1000 for r, _, _, spectator in samples if spectator]
    if watched:
        print(
            f"move-to-spectator latency over {len(watched)} (move, spectator stream) pairs, from "
            f"the move's append: p50 {pct(watched, 0.5):.1f} ms, p95 {pct(watched, 0.95):.1f} ms, "
            f"max {max(watched):.1f} ms"
        )
    samples = [sample for sample in samples if not sample[3]]  # the players' own streams
    n_streams = max(1, n_streams)
    recorded = [r * 1000 for r, _, _, _ in samples]
    sent = [s * 1000 for _, s, _, _ in samples]
    print(
        f"{len(tables)} tables played {len(samples) // max(1, n_streams // len(tables))} moves "
        f"in {played:.1f} s while {n_streams} streams were open ({alive} still open at the end)"
    )
    print(
        f"move-to-stream latency over {len(samples)} (move, stream) pairs, from the move's "
        f"append (its events' recorded_at) to the stream's delivery: p50 "
        f"{pct(recorded, 0.5):.1f} ms, p95 {pct(recorded, 0.95):.1f} ms, "
        f"max {max(recorded):.1f} ms, mean {statistics.fmean(recorded):.1f} ms"
    )
    print(
        f"  from the client sending the command (its whole HTTP round trip included): p50 "
        f"{pct(sent, 0.5):.1f} ms, p95 {pct(sent, 0.95):.1f} ms"
    )
    print(
        f"resident memory: {rss_before / 2**20:.1f} MiB before, {rss_open / 2**20:.1f} MiB with "
        f"{total} streams open: {(rss_open - rss_before) / total / 1024:.1f} KiB per stream"
    )
    print(
        f"server CPU while the tables played: {100 * busy / played:.0f} % of one core "
        f"(this client's: {100 * client_busy / played:.0f} %)"
    )
    print(
        f"server CPU with all {n_streams} streams open and idle: "
        f"{100 * idle / idle_wall:.2f} % of one core ({idle * 1000:.0f} ms in {idle_wall:.0f} s)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=300)
    parser.add_argument("--tables", type=int, default=10)
    parser.add_argument("--moves", type=int, default=40, help="moves per table")
    parser.add_argument(
        "--spectators", type=int, default=0, help="spectator streams (public tables)"
    )
    parser.add_argument("--delay", type=int, default=0, help="the tables' spectator_delay")
    args = parser.parse_args()

    database_url, server_params = scratch_database()
    os.environ["DATABASE_URL"] = database_url
    os.environ["CELERY_BROKER_URL"] = "memory://"  # nothing to queue: no bots, deals inline
    os.environ["TONGITS_DEAL_INLINE"] = "1"
    proc = None
    try:
        watch = None
        if args.spectators:
            watch = {"visibility": "public", "spectator_delay": args.delay}
        tables = setup_tables(args.tables, watch=watch)
        watchers = spectator_tokens(args.spectators)
        port = free_port()
        env = {**os.environ, "LOG_LEVEL": "WARNING", "DJANGO_DEBUG": "0"}
        proc = subprocess.Popen(
            one_web_process(port),
            cwd=ROOT,
            env=env,
        )
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        print(
            f"uvicorn (one process, pid {proc.pid}) on {url}; {args.tables} tables of 3 users; "
            f"{os.cpu_count()} CPUs on this machine"
        )
        logging.getLogger("httpx").setLevel(logging.WARNING)
        asyncio.run(
            bench(url, psutil.Process(proc.pid), tables, args.streams, args.moves, watchers)
        )
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(15)
        drop_database(server_params)
    return 0


if __name__ == "__main__":
    sys.exit(main())
