"""What a finished match costs on disk: the whole database's growth per quick-play match, from
PostgreSQL's own sizes.

    .venv/bin/python scripts/bench_storage.py [--matches 100]   (`make bench-storage`)

Runs the Django app of the checkout it is started from, in process, on a scratch database
``tongits_bench_storage`` of the local PostgreSQL (``BENCH_STORAGE_DATABASE_URL`` to change
it), dropped and created again on every run so nothing of a previous run is counted.

1. Plays quick-play matches as the first room of ``TONGITS_ROOMS`` sets them: one person
   (played by the ``normal`` bot's choices) against two ``easy`` bots, standard rules (three
   wins to the match), a buy-in of 100 chips at stake 5, each move through ``games.play``; and
   settles each (``accounts.tasks.settle_match_now``: the escrow paid out, history, stats,
   ratings).
2. After every ``--vacuum-every`` matches (1: a real match spans several of autovacuum's
   rounds) does what runs beside play on a server: the notifications projector over the logs
   (inbox, pushes, webhook messages), the compaction of finished matches (``manage.py
   compact_events``, when the checkout has it) and a plain ``VACUUM`` (dead rows become free
   space, empty trailing pages go back to the disk).
3. Sums ``pg_total_relation_size`` (heap, TOAST, free space and visibility maps, every index)
   of every table after ``--warmup`` matches (one-off rows: the seal key, the wallet, the
   cursors) and again after ``--matches`` more, and prints the growth per match, per table,
   largest first, and in total ("as played": before the last round of step 2).

A measurement, not a test: it asserts only that every match ended and settled.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

DB_URL = "postgres://postgres@127.0.0.1:5432/tongits_bench_storage"

SIZES = """
SELECT c.relname, pg_total_relation_size(c.oid)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'm', 'p') AND n.nspname = 'public'
"""


def sizes(connection) -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute(SIZES)
        return dict(cursor.fetchall())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=20, help="matches played before measuring")
    parser.add_argument(
        "--vacuum-every",
        type=int,
        default=1,
        help="matches between two runs of the projector, the compaction and VACUUM (a real "
        "match spans several of autovacuum's rounds)",
    )
    args = parser.parse_args()

    sys.path.insert(0, str(Path.cwd()))
    os.environ["DATABASE_URL"] = os.environ.get("BENCH_STORAGE_DATABASE_URL", DB_URL)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tongits_site.settings")
    os.environ["CELERY_BROKER_URL"] = os.environ.get(
        "BENCH_BROKER_URL", "redis://127.0.0.1:6379/11"
    )
    import django
    import psycopg

    from ops.ensure_db import main as ensure_db

    ensure_db()  # only to learn the server is there; the database is made afresh below
    django.setup()
    from django.conf import settings
    from django.db import connection

    from ops.ensure_db import server_params

    params = server_params(connection.settings_dict)
    name = connection.settings_dict["NAME"]
    connection.close()
    with psycopg.connect(**{**params, "dbname": "postgres"}, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')

    from django.contrib.auth import get_user_model
    from django.core.management import call_command, get_commands

    from accounts.tasks import settle_match_now
    from chips import services as chips
    from games import lobby, play, store
    from games.rules import legal_commands, player_view
    from games.rules.bots import get_bot
    from notifications.projector import Projector

    call_command("migrate", verbosity=0)
    settings.TONGITS_BOT_DELAY_SECONDS = 0.0
    settings.TONGITS_DEAL_INLINE = True
    commands = get_commands()
    compaction = "compact_events" if "compact_events" in commands else None

    player = get_user_model().objects.create_user(username="bench-storage")
    chips.open_wallet(player.pk)
    chips.adjust(user_id=player.pk, amount=10**9, reason="bench_storage bankroll", staff_id=None)
    rng = random.Random(args.seed)
    bot = get_bot("normal")
    seats = [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}]
    rules = {"preset": "standard", "stake": 5}

    def play_match() -> int:
        game = lobby.table_create(user=player, rules=rules, seats=seats, buy_in=100)
        while (state := store.load(game.pk)).phase != "match_over":
            seat = state.turn
            command = bot.choose(player_view(state, seat), legal_commands(state, seat), rng)
            user = player if state.seats[seat]["kind"] == "user" else None
            play.submit_command(
                game_id=game.pk,
                user=user,
                seat=None if user else seat,
                command=command,
                expected_version=state.version,
            )
        outcome = settle_match_now(str(game.pk))
        assert outcome == "settled", outcome
        return state.version

    def at_rest() -> None:
        """What runs beside play: the notifier's projector, the compaction, autovacuum."""
        Projector().run_all()
        if compaction:
            call_command(compaction, "--min-age", "0", verbosity=0)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM")

    # One-off rows (the seal key, the wallet, the cursors) and the free space that the churn of
    # running games' rows leaves between two VACUUMs, before the first measure: what grows
    # after it is what every further match adds.
    for n in range(args.warmup):
        play_match()
        if (n + 1) % args.vacuum_every == 0:
            at_rest()
    at_rest()
    before = sizes(connection)
    events = 0
    started = time.perf_counter()
    for n in range(args.matches):
        events += play_match()
        if (n + 1) % args.vacuum_every == 0 and n + 1 < args.matches:
            at_rest()
    played = time.perf_counter() - started
    Projector().run_all()
    played_sizes = sizes(connection)
    at_rest()
    after = sizes(connection)

    n = args.matches
    print(
        f"{Path.cwd()}: {n} quick-play matches, {events / n:.1f} events each, played and "
        f"settled in {played:.1f} s; compaction: {compaction or 'none in this checkout'}"
    )
    print(f"{'table (with its TOAST and indexes)':<40} {'as played':>10} {'at rest':>10}")
    rows = sorted(after, key=lambda t: after[t] - before.get(t, 0), reverse=True)
    for table in rows:
        grown = after[table] - before.get(table, 0)
        written = played_sizes.get(table, 0) - before.get(table, 0)
        if grown or written:
            print(f"{table:<40} {written / n:10.0f} {grown / n:10.0f}")
    total_played = sum(played_sizes.values()) - sum(before.values())
    total = sum(after.values()) - sum(before.values())
    print(f"{'the whole database':<40} {total_played / n:10.0f} {total / n:10.0f}")
    print(
        f"bytes a finished match costs: {total / n:.0f} "
        f"({total / n / 1024:.1f} KB; as played, before compaction and VACUUM: "
        f"{total_played / n / 1024:.1f} KB)"
    )


if __name__ == "__main__":
    main()
