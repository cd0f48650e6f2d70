"""``manage.py bench_moves``: the write path's speed, against baselines measured in the same run.

Writes for real (every move commits), so run it on a scratch database: ``make bench-moves``
points ``DATABASE_URL`` at ``tongits_bench`` and creates and migrates it first. One thread:

- ``raw``: a raw psycopg append as a store without snapshots would do it, in scratch tables of
  a fixed shape (the events' hashes as hex text, ``prev_hash`` stored: the shape before
  migration games.0011, kept so that the ratios of checkouts on either side compare): BEGIN,
  ``SELECT ... FOR UPDATE`` of the game row, read its 500 events, INSERT one event, UPDATE the
  row, COMMIT;
- ``select1``: a ``SELECT 1`` round trip (the floor of any database call here);
- ``move``: ``games.play.submit_command`` with the API's presenter, on a new game (this
  process wrote the game last, so its head is cached: one round trip);
- ``move cold``: the same with the head cache emptied before each move (read + write), as when
  another process moved last;
- ``move@1000``: a warm move on a game already at 1,000+ events (the cost must not grow).

The kinds run interleaved in rounds, so a drift of the machine's speed hits them all alike.
Prints moves per second, p50 and p99 per kind, the ratios, and the queries of one move.
"""

from __future__ import annotations

import random
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import connection
from django.test.utils import CaptureQueriesContext

from games import lobby, play, presenters, store
from games.rules import GameState, legal_commands
from ops.ensure_db import server_params

RAW_EVENTS = 500
EVENT_DATA = '{"type": "discarded", "seat": 1, "card": "KD", "hand_count": 9, "pad": "%s"}'


class Player:
    """Three users playing one table through the service, choosing at random among legal
    commands (outside the timed call)."""

    def __init__(self, users: list[Any], rules: dict[str, Any], seed: int) -> None:
        table = lobby.table_create(
            user=users[0],
            rules=rules,
            seats=[
                {"kind": "user"},
                {"kind": "user", "username": users[1].username},
                {"kind": "user", "username": users[2].username},
            ],
        )
        for invited in users[1:3]:  # a seat given by name is an invitation
            lobby.table_respond(game_id=table.pk, user=invited, accept=True)
        lobby.table_start(game_id=table.pk, user=users[0])
        self.game_id = table.pk
        self.users = users
        self.rng = random.Random(seed)
        self.state: GameState = store.load(self.game_id)  # type: ignore[assignment]

    def next_move(self) -> Callable[[], None]:
        state = self.state
        if state.phase == "match_over":
            raise RuntimeError("the bench match ended; raise wins_to_match")
        seat = state.turn
        command = self.rng.choice(legal_commands(state, seat))

        def move() -> None:
            written = play.submit_command(
                game_id=self.game_id,
                user=self.users[seat],
                command=command,
                expected_version=state.version,
                present=presenters.command_answer,
            )
            self.state = written.state  # type: ignore[assignment]

        return move


class Raw:
    """The raw psycopg baseline in scratch tables (dropped at the end)."""

    def __init__(self) -> None:
        params = server_params(connection.settings_dict)
        params["dbname"] = connection.settings_dict["NAME"]
        self.conn = psycopg.connect(**params, autocommit=True)
        self.game = uuid.uuid4()
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS bench_raw_game (id uuid PRIMARY KEY, version int, "
            "snapshot jsonb, updated_at timestamptz)"
        )
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS bench_raw_event (id bigserial PRIMARY KEY, game_id uuid, "
            "seq int, type text, data jsonb, actor text, recorded_at timestamptz, "
            "prev_hash text, hash text, UNIQUE (game_id, seq))"
        )
        self.conn.execute("INSERT INTO bench_raw_game VALUES (%s, 0, '{}', now())", [self.game])
        for _ in range(RAW_EVENTS):
            self._append()

    def _append(self) -> None:
        with self.conn.transaction():
            (version,) = self.conn.execute(
                "SELECT version FROM bench_raw_game WHERE id = %s FOR UPDATE", [self.game]
            ).fetchone()
            self.conn.execute(
                "SELECT data FROM bench_raw_event WHERE game_id = %s ORDER BY seq DESC LIMIT %s",
                [self.game, RAW_EVENTS],
            ).fetchall()
            self.conn.execute(
                "INSERT INTO bench_raw_event (game_id, seq, type, data, actor, recorded_at, "
                "prev_hash, hash) VALUES (%s, %s, 'discarded', %s, 'user:1', now(), %s, %s)",
                [self.game, version + 1, EVENT_DATA % ("x" * 40), "0" * 64, "f" * 64],
            )
            self.conn.execute(
                "UPDATE bench_raw_game SET version = %s, updated_at = now() WHERE id = %s",
                [version + 1, self.game],
            )

    def next_move(self) -> Callable[[], None]:
        return self._append

    def select1(self) -> Callable[[], None]:
        return lambda: self.conn.execute("SELECT 1").fetchone()

    def close(self) -> None:
        self.conn.execute("DROP TABLE IF EXISTS bench_raw_event, bench_raw_game")
        self.conn.close()


def cold(make: Callable[[], Callable[[], None]]) -> Callable[[], Callable[[], None]]:
    """The move ``make`` gives, with this process's head cache emptied first (untimed)."""

    def make_cold() -> Callable[[], None]:
        store.heads.clear()
        return make()

    return make_cold


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Command(BaseCommand):
    help = "Time the write path (a move through the service) against raw baselines."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--moves", type=int, default=2000, help="timed moves per kind")
        parser.add_argument("--rounds", type=int, default=10, help="interleaved rounds")
        parser.add_argument("--long", type=int, default=1000, help="events of the long game")
        parser.add_argument("--seed", type=int, default=1)

    def handle(self, *args: Any, **options: Any) -> None:
        # Deal the next round inside the move that ends a round (no worker runs here).
        settings.TONGITS_DEAL_INLINE = True
        user_model = get_user_model()
        tag = uuid.uuid4().hex[:8]
        users = [user_model.objects.create(username=f"bench-{tag}-{i}") for i in range(6)]
        rules = {"preset": "standard", "turn_seconds": 0, "wins_to_match": 99}
        fresh = Player(users[:3], rules, options["seed"])
        long = Player(users[3:], rules, options["seed"] + 1)
        started = time.perf_counter()
        while long.state.version < options["long"]:
            long.next_move()()
        self.stdout.write(
            f"long game: {long.state.version} events played in "
            f"{time.perf_counter() - started:.1f} s (setup, not timed)"
        )
        raw = Raw()
        try:
            kinds: dict[str, Callable[[], Callable[[], None]]] = {
                "select1": raw.select1,
                "raw": raw.next_move,
                "move": fresh.next_move,
                "move cold": cold(fresh.next_move),
                f"move@{options['long']}": long.next_move,
            }
            times: dict[str, list[float]] = {name: [] for name in kinds}
            per_round = max(1, options["moves"] // options["rounds"])
            for _ in range(options["rounds"]):
                for name, make in kinds.items():
                    for _ in range(per_round):
                        call = make()
                        t0 = time.perf_counter()
                        call()
                        times[name].append(time.perf_counter() - t0)
            with CaptureQueriesContext(connection) as queries:
                fresh.next_move()()
            store.heads.clear()
            with CaptureQueriesContext(connection) as cold_queries:
                fresh.next_move()()
        finally:
            raw.close()

        def rate(name: str) -> float:
            return len(times[name]) / sum(times[name])

        self.stdout.write(f"{'kind':<12} {'per s':>9} {'p50 ms':>8} {'p99 ms':>8}")
        for name in kinds:
            values = times[name]
            self.stdout.write(
                f"{name:<12} {rate(name):9.0f} {statistics.median(values) * 1e3:8.3f} "
                f"{percentile(values, 0.99) * 1e3:8.3f}"
            )
        long_name = f"move@{options['long']}"
        for name in ("move", "move cold"):
            self.stdout.write(
                f"{name} vs raw (lock + read {RAW_EVENTS} events + append + update): "
                f"{rate(name) / rate('raw'):.2f}x"
            )
        self.stdout.write(
            f"move at {long.state.version} events vs a new game: "
            f"{rate(long_name) / rate('move'):.2f}x the rate"
        )
        for label, captured in (("warm", queries), ("cold", cold_queries)):
            sql = [q["sql"].split("\n")[0][:60] for q in captured.captured_queries]
            self.stdout.write(f"round trips of one {label} move: {len(sql)} {sql}")
