"""Finished matches packed into one archive row (``games.archive``, ``manage.py compact_events``):
every read answers as it did from the rows, the rows leave only into a sound archive, and the
archive is written once and checked against the chain head."""

from __future__ import annotations

import random
import zlib
from datetime import timedelta
from io import StringIO
from unittest.mock import ANY

import orjson
import pytest
from django.core.management import CommandError, call_command
from django.db import DataError, IntegrityError, InternalError, connection, transaction
from django.db.utils import ProgrammingError

from accounts import projections
from accounts.models import MatchRecord, PlayerMatch
from accounts.tasks import settle_match_now
from games import archive, store, tasks
from games.models import Event, EventArchive, Game
from tests.verify.support import bot_table, play_to_end

pytestmark = pytest.mark.django_db

REFUSED = (IntegrityError, InternalError, ProgrammingError, DataError)


@pytest.fixture
def player(auth_client_factory):
    return auth_client_factory()


def finished(player, seed: int) -> str:
    game = bot_table(player.user)
    play_to_end(game.pk, player.user, random.Random(seed))
    assert settle_match_now(str(game.pk)) == "settled"
    return str(game.pk)


def answers(client, game_id: str, version: int) -> list[bytes]:
    """What a player reads of a finished match, as bytes."""
    paths = [
        "events",
        "events?after=5",
        "export",
        "audit",
        "replay?at=1",
        f"replay?at={version // 2}",
        "replay",
        "",
    ]
    bodies = []
    for path in paths:
        response = client.get(f"/api/v1/games/{game_id}/{path}".rstrip("/"))
        assert response.status_code == 200, (path, response.content)
        # The one thing that differs from a read to the next: the server's clock.
        bodies.append(response.content.split(b',"server_time":')[0])
    return bodies


def sql(statement: str, params=None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def test_a_compacted_match_answers_byte_for_byte_as_its_rows_did(player):
    game_id = finished(player, 1)
    version = Game.objects.get(pk=game_id).version
    before = answers(player, game_id, version)
    rows_before = store.load_events(game_id)
    summary_before = projections.summarize_match(rows_before)
    assert before[3] and orjson.loads(before[3])["sound"] is True

    assert archive.compact_game(game_id) == "archived"
    assert not Event.objects.filter(game_id=game_id).exists()
    packed = EventArchive.objects.get(game_id=game_id)
    assert packed.version == version and bytes(packed.last_hash) == bytes(
        Game.objects.get(pk=game_id).last_hash
    )
    store.heads.clear()
    assert answers(player, game_id, version) == before
    assert store.load_events(game_id) == rows_before  # ids, hashes and prev_hash included
    assert store.load_events(game_id, after=3, limit=4) == rows_before[3:7]
    assert projections.summarize_match(store.load_events(game_id)) == summary_before
    # The projections' rebuild finds the match in its archive, at the same place in the order.
    records = list(MatchRecord.objects.values().order_by("end_event_id"))
    players = list(PlayerMatch.objects.values().order_by("end_event_id", "seat"))
    assert records and projections.rebuild() == len(records)
    assert list(MatchRecord.objects.values().order_by("end_event_id")) == records
    assert list(PlayerMatch.objects.values().order_by("end_event_id", "seat")) == [
        {**p, "id": ANY}
        for p in players  # new rows, the same content
    ]
    assert store.verify_chain(game_id) is None
    assert game_id in {str(g) for g in store.finished_matches()}
    out = StringIO()
    call_command("verify_events", game_id, stdout=out)
    assert "every game is sound" in out.getvalue()
    # Written once: a second compaction finds it done, and the archive cannot be changed.
    assert archive.compact_game(game_id) == "archived_before"
    for statement in (
        "UPDATE games_eventarchive SET version = version + 1 WHERE game_id = %s",
        "DELETE FROM games_eventarchive WHERE game_id = %s",
    ):
        with pytest.raises(REFUSED, match="written once"), transaction.atomic():
            sql(statement, [game_id])


def test_only_final_settled_matches_are_packed_and_a_row_leaves_only_into_its_archive(player):
    running = bot_table(player.user)
    play_to_end(running.pk, player.user, random.Random(2), upto=10)
    assert archive.compact_game(running.pk) == "not_final"
    unsettled = bot_table(player.user)
    play_to_end(unsettled.pk, player.user, random.Random(3))
    assert archive.compact_game(unsettled.pk) == "not_final"  # the settlement reads the rows
    assert archive.compactable(timedelta(0)) == []
    for game_id in (running.pk, unsettled.pk):
        with pytest.raises(REFUSED, match="append-only"), transaction.atomic():
            sql("DELETE FROM games_event WHERE game_id = %s", [game_id])
    version = Game.objects.get(pk=running.pk).version
    assert version >= 10 and Event.objects.filter(game_id=running.pk).count() == version


def test_a_match_whose_rows_do_not_verify_is_not_packed(player):
    game_id = finished(player, 4)
    data = dict(store.load_events(game_id, after=6, upto=7)[0].data)
    rows = list(Event.objects.filter(game_id=game_id).order_by("seq"))
    sql("SET CONSTRAINTS ALL IMMEDIATE")
    sql("ALTER TABLE games_event DISABLE TRIGGER games_event_no_update_delete")
    try:
        data["edited"] = True
        Event.objects.filter(pk=rows[6].pk).update(data=data)
    finally:
        sql("ALTER TABLE games_event ENABLE TRIGGER games_event_no_update_delete")
    out = StringIO()
    with pytest.raises(CommandError, match="1 of 1 games not packed"):
        call_command("compact_events", "--min-age", "0", stdout=out)
    assert f"BROKEN game {game_id}" in out.getvalue()
    assert Event.objects.filter(game_id=game_id).count() == len(rows)
    assert not EventArchive.objects.filter(game_id=game_id).exists()


def _repack(game_id: str, change) -> None:
    """The insider's edit of an archive: its document changed, compressed again, written back
    with the write-once trigger off."""
    packed = EventArchive.objects.get(game_id=game_id)
    document = orjson.loads(zlib.decompress(bytes(packed.events)))
    change(document)
    sql("SET CONSTRAINTS ALL IMMEDIATE")
    sql("ALTER TABLE games_eventarchive DISABLE TRIGGER games_eventarchive_no_update_delete")
    try:
        EventArchive.objects.filter(game_id=game_id).update(
            events=zlib.compress(orjson.dumps(document))
        )
    finally:
        sql("ALTER TABLE games_eventarchive ENABLE TRIGGER games_eventarchive_no_update_delete")
    store.heads.clear()


def test_an_edited_archive_is_named_at_its_seq_by_every_judge(player):
    game_id = finished(player, 5)
    assert archive.compact_game(game_id) == "archived"
    edited = store.load_events(game_id, after=8, upto=9)[0]

    def edit_one(document):
        document["data"][8] = {**document["data"][8], "edited": True}

    _repack(game_id, edit_one)
    assert store.verify_chain(game_id) == 9
    body = player.get(f"/api/v1/games/{game_id}/audit").json()
    assert body["first_broken_seq"] == 9 and body["sound"] is False
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("verify_events", game_id, stdout=out)
    assert "first bad seq 9" in out.getvalue()
    # The reads still answer (as reads of edited rows do), with the hash the content gives.
    assert store.load_events(game_id, after=8, upto=9)[0].hash != edited.hash


def test_an_archive_rewritten_whole_is_caught_at_the_head(player):
    """Every check recomputed to match the edit: only the chain head (the game row's, which
    the seal signs) tells."""
    game_id = finished(player, 6)
    assert archive.compact_game(game_id) == "archived"
    version = Game.objects.get(pk=game_id).version

    def edit_and_recheck(document):
        last = version - 1
        document["actor"][last] = "system" if document["actor"][last] != "system" else "bot:x"
        rows, prev, at = [], store.GENESIS_HASH, ""
        for seq in range(1, version + 1):
            at = document["at"][seq - 1] or at
            prev = store.verify.event_hash(
                prev,
                game_id=game_id,
                seq=seq,
                actor=document["actor"][seq - 1],
                recorded_at=at,
                data=document["data"][seq - 1],
            )
            rows.append(prev[:8])
        document["check"] = "".join(rows)

    _repack(game_id, edit_and_recheck)
    assert store.verify_chain(game_id) == version
    assert player.get(f"/api/v1/games/{game_id}/audit").json()["sound"] is False


def test_the_command_and_the_beat_task_pack_what_is_old_enough(player, settings):
    game_id = finished(player, 7)
    out = StringIO()
    call_command("compact_events", stdout=out)  # the default leaves an hour
    assert "nothing to pack" in out.getvalue()
    assert tasks.compact_events() == {}
    call_command("compact_events", "--min-age", "0", stdout=out)
    assert "1 archived" in out.getvalue()
    assert EventArchive.objects.filter(game_id=game_id).exists()
    other = finished(player, 9)
    settings.TONGITS_COMPACT_AFTER_SECONDS = 0
    assert "games.tasks.compact_events" in {
        entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()
    }
    assert tasks.compact_events() == {"archived": 1}
    assert not Event.objects.filter(game_id=other).exists()
