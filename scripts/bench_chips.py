"""What chips cost: a match's settlement with and without table stakes, and ``GET /me/wallet``
beside ``GET /me``, in one run.

    .venv/bin/python scripts/bench_chips.py [--matches 200] [--requests 2000]   (`make bench-chips`)

Runs the Django app of the checkout it is started from, in process, on a scratch database
``tongits_bench_chips`` of the local PostgreSQL (migrated; its tables are left for the next
run). Settings are the shipped defaults, throttles on (their counters in the database, as
under ``make run`` without ``CACHE_URL``), except the bot delays, which only pace play.

1. **Settlement.** Plays ``--matches`` quick-play matches of one player (played by the
   ``normal`` bot's choices) against two bots, one round each, half of them for a buy-in of
   100 chips at stake 5 and half for nothing, interleaved; then times the settlement task's
   work (``accounts.tasks.settle_match_now``: mark settled, pay the escrow out, project the
   history and ratings, one transaction) for each, interleaved again. The difference is what
   the ledger adds to a settlement.
2. **Reads.** ``GET /api/v1/me/wallet`` and ``GET /api/v1/me``, interleaved request by request,
   through Django's test client (the whole middleware, DRF, authentication, throttling), with
   the tokens of 40 players in turn, so no token reaches the read limit (1200/m).

A benchmark, not a test: it asserts only that every answer was a 200.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

DB_URL = "postgres://postgres@127.0.0.1:5432/tongits_bench_chips"
TOKENS = 40


def figures(times: list[float]) -> str:
    times = sorted(times)
    p50 = statistics.median(times) * 1e3
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1e3
    return f"p50 {p50:7.3f} ms   p99 {p99:7.3f} ms   (n={len(times)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()

    sys.path.insert(0, str(Path.cwd()))
    os.environ["DATABASE_URL"] = os.environ.get("BENCH_CHIPS_DATABASE_URL", DB_URL)
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
    from django.test import Client

    from accounts.services import session_create
    from accounts.tasks import settle_match_now
    from chips import services as chips
    from games import lobby, play, store
    from games.rules import legal_commands, player_view
    from games.rules.bots import get_bot

    call_command("migrate", verbosity=0)
    settings.ALLOWED_HOSTS = ["*"]
    settings.TONGITS_BOT_DELAY_SECONDS = 0.0
    settings.TONGITS_DEAL_INLINE = True
    user_model = get_user_model()
    tag = f"{os.getpid()}-{int(time.time())}"

    # ---------------------------------------------------------------- settlement
    player = user_model.objects.create_user(username=f"bench-chips-{tag}")
    chips.open_wallet(player.pk)
    chips.adjust(user_id=player.pk, amount=10**9, reason="bench_chips bankroll", staff_id=None)
    rng = random.Random(1)
    seats = [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}]
    games: dict[str, list] = {"with chips": [], "without": []}
    started = time.perf_counter()
    for n in range(args.matches):
        kind = "with chips" if n % 2 == 0 else "without"
        buy_in = 100 if kind == "with chips" else 0
        rules = {"preset": "standard", "wins_to_match": 1, "stake": 5}
        game = lobby.table_create(user=player, rules=rules, seats=seats, buy_in=buy_in)
        while (state := store.load(game.pk)).phase != "match_over":
            seat = state.turn
            command = get_bot("normal").choose(
                player_view(state, seat), legal_commands(state, seat), rng
            )
            user = player if state.seats[seat]["kind"] == "user" else None
            play.submit_command(
                game_id=game.pk,
                user=user,
                seat=None if user else seat,
                command=command,
                expected_version=state.version,
            )
        games[kind].append(game.pk)
    print(f"{Path.cwd()}: {args.matches} matches played in {time.perf_counter() - started:.1f} s")
    times: dict[str, list[float]] = {kind: [] for kind in games}
    for pair in zip(games["with chips"], games["without"], strict=False):
        for kind, game_id in zip(games, pair, strict=True):
            start = time.perf_counter()
            outcome = settle_match_now(str(game_id))
            times[kind].append(time.perf_counter() - start)
            assert outcome == "settled", outcome
    print("settlement (settle_match_now: settled, escrow paid out, history and ratings):")
    for kind, measured in times.items():
        print(f"  {kind:12} {figures(measured)}")
    ratio = statistics.median(times["with chips"]) / statistics.median(times["without"])
    print(f"  with chips / without, p50: {ratio:.2f}x")

    # ---------------------------------------------------------------- reads
    clients = []
    for n in range(TOKENS):
        user = user_model.objects.create_user(username=f"bench-chips-{tag}-{n}")
        chips.open_wallet(user.pk)
        _, key = session_create(user=user, device="bench")
        clients.append({"HTTP_AUTHORIZATION": f"Token {key}"})
    client = Client()
    paths = ("/api/v1/me/wallet", "/api/v1/me")
    for n in range(100):  # warm up
        for path in paths:
            assert client.get(path, **clients[n % TOKENS]).status_code == 200
    reads: dict[str, list[float]] = {path: [] for path in paths}
    for n in range(args.requests):
        for path in paths if n % 2 == 0 else reversed(paths):
            start = time.perf_counter()
            response = client.get(path, **clients[n % TOKENS])
            reads[path].append(time.perf_counter() - start)
            assert response.status_code == 200, (path, response.status_code, response.content)
    print(f"reads, interleaved, {TOKENS} tokens in turn, throttles on (in process):")
    for path, measured in reads.items():
        print(f"  GET {path:18} {figures(measured)}")
    wallet, me = (statistics.median(reads[p]) for p in paths)
    print(f"  GET /me/wallet / GET /me, p50: {wallet / me:.2f}x")


if __name__ == "__main__":
    main()
