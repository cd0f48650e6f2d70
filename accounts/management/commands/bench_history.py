"""``manage.py bench_history``: the first page of a 10,000-match history, timed.

Everything happens in one transaction that is rolled back at the end, so the database is left as
it was: a player, two opponents and N finished matches are bulk-inserted straight into the
projection tables (games rows too, which the records point at), the tables are ANALYZEd, then:

- baseline: ``SELECT 1`` round trips (what any query costs here at least);
- query: the history page's SQL (the selector's queryset, sliced as the cursor paginator does);
- api: ``GET /api/v1/players/{username}/matches`` through DRF's in-process test client;

each as the median (and p95) over ``--repeats`` runs, then ``EXPLAIN ANALYZE`` of the page's
query, which must use the ``accounts_pm_history`` index. Target: the API's median < 50 ms.
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connection, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from accounts import selectors
from accounts.api.views import HistoryPagination
from accounts.models import MatchRecord, PlayerMatch, PlayerStats, User
from games.models import Game
from games.rules.rating import DEFAULT_RATING, ordinal

TARGET_MS = 50.0
INDEX = "accounts_pm_history"


class Rollback(Exception):
    """Raised at the end of the run so the transaction and all its rows go away."""


def timed(run: Callable[[], Any], repeats: int) -> list[float]:
    """Milliseconds per call, after two warm-up calls."""
    for _ in range(2):
        run()
    out = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        out.append((time.perf_counter() - started) * 1000)
    return out


def summary(samples: list[float]) -> str:
    p95 = sorted(samples)[max(0, int(len(samples) * 0.95) - 1)]
    return f"median {statistics.median(samples):7.3f} ms   p95 {p95:7.3f} ms"


class Command(BaseCommand):
    help = "Time the first page of a long match history (rolled back; nothing is kept)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--matches", type=int, default=10_000)
        parser.add_argument("--repeats", type=int, default=50)
        parser.add_argument(
            "--no-target",
            action="store_true",
            help="report the time without failing on it (a missing index still fails)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            with transaction.atomic():
                self.run(options["matches"], options["repeats"], not options["no_target"])
                raise Rollback
        except Rollback:
            self.stdout.write("(rolled back: the benchmark's rows are gone)")

    def run(self, matches: int, repeats: int, timed_target: bool = True) -> None:
        started = time.perf_counter()
        player = self.fill(matches)
        self.stdout.write(
            f"inserted {matches} matches of {player.username} "
            f"({PlayerMatch.objects.count()} history rows in the table) "
            f"in {time.perf_counter() - started:.1f}s"
        )
        page = HistoryPagination.page_size + 1  # the paginator reads one more to know of a next

        def query() -> None:
            list(selectors.player_match_list(player=player)[:page])

        def select_one() -> None:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
                cursor.fetchone()

        client = APIClient(HTTP_HOST="localhost")  # an ALLOWED_HOSTS name, as a browser sends
        url = f"/api/v1/players/{player.username}/matches"

        def api() -> None:
            response = client.get(url)
            if response.status_code != 200 or len(response.json()["results"]) != page - 1:
                raise CommandError(f"{url}: {response.status_code} {response.content[:200]!r}")

        # In-process requests must keep this connection (and its transaction) open.
        request_started.disconnect(close_old_connections)
        request_finished.disconnect(close_old_connections)
        try:
            results = {
                "baseline SELECT 1": timed(select_one, repeats),
                "history page query": timed(query, repeats),
                "GET history (API)": timed(api, repeats),
            }
        finally:
            request_started.connect(close_old_connections)
            request_finished.connect(close_old_connections)
        for name, samples in results.items():
            self.stdout.write(f"{name:20} {summary(samples)}   ({repeats} runs)")

        sql, params = selectors.player_match_list(player=player)[:page].query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", params)
            plan = "\n".join(row[0] for row in cursor.fetchall())
        self.stdout.write("EXPLAIN ANALYZE of the history page query:\n" + plan)
        api_median = statistics.median(results["GET history (API)"])
        in_time = api_median < TARGET_MS or not timed_target
        verdict = "OK" if in_time and INDEX in plan else "FAIL"
        self.stdout.write(
            f"{verdict}: first page via the API {api_median:.2f} ms (target < {TARGET_MS:.0f} ms); "
            f"index {INDEX} {'used' if INDEX in plan else 'NOT used'}"
        )
        if verdict != "OK":
            raise CommandError("the history page misses its target")

    def fill(self, matches: int) -> User:
        """A player with ``matches`` finished matches against two opponents, bulk-inserted."""
        tag = uuid.uuid4().hex[:8]
        names = [f"bench-{tag}", f"bench-{tag}-b", f"bench-{tag}-c"]
        users = User.objects.bulk_create([User(username=n, password="!") for n in names])
        ids = [u.pk for u in users]
        now = timezone.now()
        games = Game.objects.bulk_create(
            [Game(status=Game.Status.FINISHED, rules={}, version=1) for _ in range(matches)],
            batch_size=2000,
        )
        mu, sigma = DEFAULT_RATING
        records, rows = [], []
        for i, game in enumerate(games):
            ended = now - timedelta(minutes=30 * (matches - i))
            winner = i % 3
            records.append(
                MatchRecord(
                    game=game,
                    rules={},
                    rules_preset=("standard", "house")[i % 2],
                    started_at=ended - timedelta(minutes=20),
                    ended_at=ended,
                    end_event_id=10**12 + i,
                    winner_seat=winner,
                    round_wins=[3 if s == winner else 1 for s in range(3)],
                    placements=[1 if s == winner else 2 for s in range(3)],
                    rounds=[],
                    seats=[{"kind": "user", "user_id": pk} for pk in ids],
                )
            )
            for seat, pk in enumerate(ids):
                rows.append(
                    PlayerMatch(
                        player_id=pk,
                        match_id=game.pk,
                        seat=seat,
                        opponent_1_id=ids[(seat + 1) % 3],
                        opponent_2_id=ids[(seat + 2) % 3],
                        started_at=ended - timedelta(minutes=20),
                        ended_at=ended,
                        rules_preset=records[-1].rules_preset,
                        end_event_id=10**12 + i,
                        result="win" if seat == winner else "loss",
                        placement=1 if seat == winner else 2,
                        rounds_played=5,
                        rounds_won=3 if seat == winner else 1,
                        tongits_wins=1,
                        draw_wins=1,
                        stock_out_wins=1 if seat == winner else 0,
                        tongits_losses=1,
                        draw_losses=0,
                        stock_out_losses=1,
                        rounds_without_winner=0,
                        times_burned=seat == 2,
                        draw_calls=1,
                        draw_calls_won=1,
                        challenges=0,
                        challenges_won=0,
                        time_outs=0,
                        chips=4 if seat == winner else -2,
                        deadwood_total=40,
                        mu_before=mu,
                        sigma_before=sigma,
                        mu=mu,
                        sigma=sigma,
                        ordinal=ordinal(mu, sigma),
                    )
                )
        MatchRecord.objects.bulk_create(records, batch_size=2000)
        PlayerMatch.objects.bulk_create(rows, batch_size=5000)
        PlayerStats.objects.bulk_create(
            [
                PlayerStats(player_id=pk, mu=mu, sigma=sigma, ordinal=ordinal(mu, sigma))
                for pk in ids
            ]
        )
        with connection.cursor() as cursor:
            for table in ("accounts_playermatch", "accounts_matchrecord", "accounts_user"):
                cursor.execute(f"ANALYZE {table}")
        return users[0]
