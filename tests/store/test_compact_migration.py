"""Migration games.0011 (hashes as bytes, no stored prev_hash, archives) on a database holding
finished, compacted, running and waiting games: the older release's rows (the migration
backwards) convert forwards with every hash kept and every chain verifying, and a prev_hash that
cannot be derived stops the migration instead of being dropped."""

from __future__ import annotations

import random
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from accounts.tasks import settle_match_now
from games import archive, lobby, store
from games.models import Game
from tests.verify.support import bot_table, play_to_end

pytestmark = pytest.mark.django_db

BEFORE = "0010_merge_rematch_spectators"
AFTER = "0011_compact_events"


def migrate(target: str) -> None:
    """Migrate the games app to ``target`` inside the test's transaction (rolled back after)."""
    with connection.cursor() as cursor:  # no deferred FK checks pending under ALTER TABLE
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([("games", target)])
    store.heads.clear()


def rows(sql: str, params=None) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


@pytest.fixture
def games(user_factory) -> dict[str, str]:
    user = user_factory()
    made = {}
    for name, seed in (("compacted", 1), ("finished", 2)):
        game = bot_table(user)
        play_to_end(game.pk, user, random.Random(seed))
        assert settle_match_now(str(game.pk)) == "settled"
        made[name] = str(game.pk)
    assert archive.compact_game(made["compacted"]) == "archived"
    running = bot_table(user)
    play_to_end(running.pk, user, random.Random(3), upto=12)
    made["running"] = str(running.pk)
    seats = [{"kind": "user"}, {"kind": "open"}, {"kind": "bot", "level": "easy"}]
    waiting = lobby.table_create(user=user, seats=seats)
    assert waiting.status == Game.Status.WAITING and waiting.version == 0
    made["waiting"] = str(waiting.pk)
    return made


def chains(games: dict[str, str]) -> dict[str, list[tuple[int, str, str]]]:
    return {
        name: [(e.seq, e.prev_hash, e.hash) for e in store.load_events(game_id)]
        for name, game_id in games.items()
    }


def test_old_rows_convert_with_every_hash_kept_and_every_chain_verifying(games):
    expected = chains(games)
    heads = {g: bytes(Game.objects.get(pk=g).last_hash).hex() for g in games.values()}

    migrate(BEFORE)
    # The older release's shape: hex text, prev_hash stored, the archive's rows back in place.
    for name, game_id in games.items():
        old = rows(
            "SELECT seq, prev_hash, hash FROM games_event WHERE game_id = %s ORDER BY seq",
            [game_id],
        )
        assert old == expected[name]
        (head,) = rows("SELECT last_hash FROM games_game WHERE id = %s", [game_id])
        assert head[0] == heads[game_id]
    assert rows("SELECT to_regclass('games_eventarchive')") == [(None,)]

    migrate(AFTER)
    assert rows(
        "SELECT data_type FROM information_schema.columns WHERE table_name = "
        "'games_event' AND column_name IN ('hash', 'prev_hash')"
    ) == [("bytea",)]
    assert chains(games) == expected
    out = StringIO()
    call_command("verify_events", *games.values(), stdout=out)
    assert f"{len(games)} games verified: every game is sound" in out.getvalue()
    for game_id in (games["compacted"], games["finished"]):
        assert archive.compact_game(game_id) == "archived"
        assert store.verify_chain(game_id) is None
    assert chains(games) == expected


def test_a_prev_hash_that_cannot_be_derived_stops_the_migration(games):
    migrate(BEFORE)
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE games_event DISABLE TRIGGER games_event_no_update_delete")
        cursor.execute(
            "UPDATE games_event SET prev_hash = repeat('a', 64) WHERE game_id = %s AND seq = 5",
            [games["running"]],
        )
        cursor.execute("ALTER TABLE games_event ENABLE TRIGGER games_event_no_update_delete")
    with pytest.raises(Exception, match=games["running"]):
        migrate(AFTER)
