"""A tournament of 27 from its start to its payout (`make bench-tournament`).

    .venv/bin/python scripts/bench_tournament.py
    .venv/bin/python scripts/bench_tournament.py --database-url postgres://.../db --broker redis://...

It starts the stack as `make run` does (``python -m ops.stack``: web processes, worker, the
bots' worker, scheduler with the matcher's and the tournaments' loops, notifier, beat; the
defaults as shipped, bot delays included) on a scratch database, on a free port, and stops it at
the end. Staff create a scheduled event of 27 entrants with bots (``--wins`` rounds a match, 1
by default; a buy-in of 100) starting ``--lead`` seconds later; nine people register over HTTP,
so that at the start bots take the other 18 places and the draw seats one person at each of the
nine first tables. Each person, in a thread of this process, follows the tournament
(``GET /tournaments/{id}``) and plays their table over HTTP (``GET /games/{id}``, then a greedy
bot's choice among the legal commands), until the tournament is finished.

It prints the wall time from ``starts_at`` to the tournament being finished (prizes paid,
sealed), the matches played, the stack's CPU seconds by part over that window and per match,
and the scheduler process's CPU over the event against the same process's idle rate measured
before it (``--baseline`` seconds with the tournament registering); then the tournaments'
extra work in the scheduler measured directly: the mean time of the loop's one question
(``tournaments.services.due``, asked once a second) while the event runs, as a share of a core.
A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench_players import (
    cpu_by_part,
    find_servers,
    free_port,
    reset_database,
    settle,
    start_stack,
    wait_healthy,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
NAME = "bench-tournament"


def http(port: int, token: str, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Accept": "application/json", "Authorization": f"Token {token}"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/v1{path}", data=data, method=method, headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read()
    except urllib.error.HTTPError as exc:
        return {"status": exc.code, **json.loads(exc.read() or b"{}")}
    return json.loads(text) if text else None


def set_up(database_url: str, people: int) -> tuple[str, list[tuple[int, str]]]:
    """A staff token and (user id, token) of each person, made through the services."""
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
    tag = f"{random.randrange(10**6):06d}"
    staff = users.objects.create_user(f"t{tag}staff", password="bench-passphrase-0192")
    users.objects.filter(pk=staff.pk).update(is_staff=True)
    out = []
    for i in range(people):
        user = users.objects.create_user(f"t{tag}u{i}", password="bench-passphrase-0192")
        chips.open_wallet(user.pk)
        out.append((user.pk, session_create(user=user)[1]))
    token = session_create(user=users.objects.get(pk=staff.pk))[1]
    connections.close_all()
    return token, out


def play(port: int, tid: str, user_id: int, token: str, done: threading.Event, moves: list) -> None:
    """One person: their table's turns, greedily, until the tournament is over."""
    from games.rules.bots import GreedyBot

    bot, rng = GreedyBot(), random.Random(user_id)
    while not done.is_set():
        detail = http(port, token, "GET", f"/tournaments/{tid}")
        if detail.get("status") in ("finished", "cancelled"):
            return
        mine = next(
            (e["entrant"] for e in detail.get("entrants_list", []) if e["user_id"] == user_id),
            None,
        )
        tables = [t for s in detail.get("stages_list", []) for t in s["tables"]]
        game = next(
            (
                t["game_id"]
                for t in tables
                if mine in t["entrants"] and t["game_status"] == "active"
            ),
            None,
        )
        if game is None:
            time.sleep(0.5)
            continue
        payload = http(port, token, "GET", f"/games/{game}")
        if payload.get("legal_commands"):
            command = bot.choose(payload["view"], payload["legal_commands"], rng)
            http(
                port,
                token,
                "POST",
                f"/games/{game}/commands",
                {"command": command, "expected_version": payload["version"]},
            )
            moves.append(1)
        else:
            time.sleep(0.1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/tongits_bench_tournament"
    )
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/5")
    parser.add_argument("--wins", type=int, default=1, help="rounds a table's match is played to")
    parser.add_argument("--lead", type=float, default=20.0, help="seconds from creation to start")
    parser.add_argument("--baseline", type=float, default=10.0)
    args = parser.parse_args()

    reset_database(args.database_url)
    staff, people = set_up(args.database_url, 9)
    settle(args.database_url)
    port = free_port()
    stack = start_stack(port, args.database_url, args.broker, NAME)
    try:
        wait_healthy(port, name=NAME)
        servers = find_servers(args.database_url, args.broker)
        from django.utils import timezone

        starts_at = timezone.now() + timedelta(seconds=args.lead)
        made = http(
            port,
            staff,
            "POST",
            "/tournaments",
            {
                "name": "Bench 27",
                "wins_to_match": args.wins,
                "entrants": 27,
                "buy_in": 100,
                "bots": True,
                "minimum": 9,
                "starts_at": starts_at.isoformat(),
            },
        )
        tid = made["id"]
        for _, token in people:
            http(port, token, "POST", f"/tournaments/{tid}/registration", {})

        # The idle rate of each part, the tournament registering, before its start.
        time.sleep(max(0.0, (starts_at - timezone.now()).total_seconds() - args.baseline - 1))
        idle_from, idle_at = cpu_by_part(set(), stack.pid, servers)[0], time.monotonic()
        time.sleep(args.baseline)
        idle_to, idle_end = cpu_by_part(set(), stack.pid, servers)[0], time.monotonic()
        idle_rate = {k: (idle_to[k] - idle_from[k]) / (idle_end - idle_at) for k in idle_to}
        time.sleep(max(0.0, (starts_at - timezone.now()).total_seconds()))

        before, started = cpu_by_part(set(), stack.pid, servers)[0], time.monotonic()
        done, moves = threading.Event(), []
        threads = [
            threading.Thread(target=play, args=(port, tid, uid, token, done, moves))
            for uid, token in people
        ]
        for thread in threads:
            thread.start()

        from tournaments import services
        from tournaments.models import Table, Tournament

        asked: list[float] = []
        while True:
            t0 = time.perf_counter()
            services.due()
            asked.append(time.perf_counter() - t0)
            status = Tournament.objects.filter(pk=tid).values_list("status", flat=True).first()
            if status in ("finished", "cancelled"):
                break
            time.sleep(1.0)
        finished = time.monotonic()
        after = cpu_by_part(set(), stack.pid, servers)[0]
        done.set()
        for thread in threads:
            thread.join(30)

        row = Tournament.objects.get(pk=tid)
        wall = (row.finished_at - row.starts_at).total_seconds()
        matches = Table.objects.filter(tournament_id=tid).count()
        spent = {k: after[k] - before[k] for k in after}
        stack_cpu = sum(v for k, v in spent.items() if k != "load")
        window = finished - started
        print(f"tournament {tid}: {row.status}, 27 entrants (9 people, 18 bots), {matches} matches")
        print(f"wall time from starts_at to finished (prizes paid, sealed): {wall:.1f} s")
        print(f"people's moves over HTTP: {len(moves)}")
        print(f"stack CPU over the event: {stack_cpu:.1f} s, {stack_cpu / matches:.2f} s a match")
        for part, seconds in sorted(spent.items(), key=lambda kv: -kv[1]):
            if seconds > 0.05:
                print(f"  {part:10s} {seconds:7.1f} s  ({seconds / matches:.2f} s a match)")
        sched = spent.get("scheduler", 0.0)
        idle = idle_rate.get("scheduler", 0.0) * window
        print(
            f"scheduler process: {sched:.2f} s over {window:.0f} s "
            f"(idle rate before the start: {idle:.2f} s over as long)"
        )
        mean_ms = 1000 * sum(asked) / len(asked)
        print(
            f"the tournaments' loop question (services.due), asked once a second: "
            f"{mean_ms:.2f} ms a pass over {len(asked)} passes, "
            f"{mean_ms / 10:.3f}% of a core"
        )
    finally:
        import signal

        os.killpg(stack.pid, signal.SIGTERM)
        stack.wait(60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
