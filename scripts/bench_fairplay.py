"""What the fair-play scoring costs the worker: CPU per settled match, in one run.

    .venv/bin/python scripts/bench_fairplay.py [--matches 60]   (`make bench-fairplay`)

Runs the Django app of the checkout it is started from, in process, on a scratch database
``tongits_bench_fairplay`` of the local PostgreSQL (``BENCH_FAIRPLAY_DATABASE_URL``; migrated,
its tables left for the next run). Plays ``--matches`` matches of three people (each seat
played by the ``normal`` bot's choices, the standard rules) at a table for a buy-in of 100 chips
at stake 5; settles each as the settlement task does (``accounts.tasks.settle_match_now``,
timed), then scores each as the scoring task does (``fairplay.detection.projections.project``:
read the events and the ledger's settlement, score every decision, add to the pair sums, judge
the pairs). Prints the settlement's time and the scoring's CPU per match (``time.thread_time``
of the scoring thread, as ``ScoredMatch.cpu_ms`` records it: the same on a loaded machine),
beside its wall time.

A benchmark, not a test: it asserts only that every match was settled and scored.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

DB_URL = "postgres://postgres@127.0.0.1:5432/tongits_bench_fairplay"


def figures(values: list[float], unit: str = "ms") -> str:
    values = sorted(values)
    p50 = statistics.median(values)
    p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
    mean = statistics.fmean(values)
    n = len(values)
    return f"mean {mean:7.2f} {unit}  p50 {p50:7.2f} {unit}  p99 {p99:7.2f} {unit}  (n={n})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=60)
    args = parser.parse_args()

    sys.path.insert(0, str(Path.cwd()))
    os.environ["DATABASE_URL"] = os.environ.get("BENCH_FAIRPLAY_DATABASE_URL", DB_URL)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tongits_site.settings")
    os.environ["CELERY_BROKER_URL"] = os.environ.get(
        "BENCH_BROKER_URL", "redis://127.0.0.1:6379/11"
    )
    import django

    from ops.ensure_db import main as ensure_db

    ensure_db()
    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from accounts.tasks import settle_match_now
    from chips import services as chips
    from fairplay.detection import projections
    from fairplay.detection.models import ScoredMatch
    from games import lobby, play, store
    from games.rules import legal_commands, player_view
    from games.rules.bots import get_bot

    call_command("migrate", verbosity=0)
    settings.TONGITS_BOT_DELAY_SECONDS = 0.0
    settings.TONGITS_DEAL_INLINE = True
    user_model = get_user_model()
    tag = f"{os.getpid()}-{int(time.time())}"
    players = []
    for n in range(3):
        user = user_model.objects.create_user(username=f"bench-fp-{tag}-{n}")
        chips.open_wallet(user.pk)
        chips.adjust(user_id=user.pk, amount=10**9, reason="bench_fairplay bankroll", staff_id=None)
        players.append(user)
    rng = random.Random(1)
    bot = get_bot("normal")
    rules = {"preset": "standard", "stake": 5}
    games = []
    started = time.perf_counter()
    for n in range(args.matches):
        order = players[n % 3 :] + players[: n % 3]
        seats = [{"kind": "user"}] + [{"kind": "user", "username": u.username} for u in order[1:]]
        game = lobby.table_create(user=order[0], rules=rules, seats=seats, buy_in=100)
        for user in order[1:]:
            lobby.table_respond(game_id=game.pk, user=user, accept=True)
        lobby.table_start(game_id=game.pk, user=order[0])
        while (state := store.load(game.pk)).phase != "match_over":
            seat = state.turn
            command = bot.choose(player_view(state, seat), legal_commands(state, seat), rng)
            play.submit_command(
                game_id=game.pk,
                user=order[seat],
                command=command,
                expected_version=state.version,
            )
        games.append(str(game.pk))
    took = time.perf_counter() - started
    print(f"{Path.cwd()}: {args.matches} matches of three people in {took:.1f} s")
    settle: list[float] = []
    for game_id in games:
        start = time.perf_counter()
        assert settle_match_now(game_id) == "settled"
        settle.append((time.perf_counter() - start) * 1e3)
    walls: list[float] = []
    whole: list[float] = []
    for game_id in games:
        start, start_cpu = time.perf_counter(), time.thread_time()
        assert projections.project(game_id) == "scored"
        whole.append((time.thread_time() - start_cpu) * 1e3)
        walls.append((time.perf_counter() - start) * 1e3)
    rows = ScoredMatch.objects.filter(game_id__in=games)
    cpu = [r.cpu_ms for r in rows]
    hits = sum(len(r.signals.get("decisions", [])) for r in rows)
    print(f"settlement (settle_match_now), wall:  {figures(settle)}")
    print(f"scoring, CPU (read + score: cpu_ms):  {figures(cpu)}")
    print(f"scoring, CPU (all of project):        {figures(whole)}")
    print(f"scoring, wall (all of project):       {figures(walls)}")
    print(f"decisions that counted as hits in these matches: {hits}")


if __name__ == "__main__":
    main()
