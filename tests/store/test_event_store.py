"""The event store against the real PostgreSQL: append with expected version, hash chain,
snapshot loads, append-only triggers, tamper detection and verify_events."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, IntegrityError, connection, transaction

from games import application, lobby, store
from games.application import Sender
from games.errors import GameNotFound, StaleVersion
from games.models import Event, Game
from games.rules import decide, legal_commands, state_to_dict

pytestmark = pytest.mark.django_db


@pytest.fixture
def game(user_factory) -> Game:
    """A started three-user game (game_started + round_started)."""
    ann, ben, cy = user_factory(), user_factory(), user_factory()
    table = lobby.table_create(
        user=ann,
        seats=[
            {"kind": "user"},
            {"kind": "user", "username": ben.username},
            {"kind": "user", "username": cy.username},
        ],
    )
    for invited in (ben, cy):
        lobby.table_respond(game_id=table.pk, user=invited, accept=True)
    return lobby.table_start(game_id=table.pk, user=ann)


def append(game_id, expected_version: int, events) -> application.Written:
    """Append events through the write door (as the server), at an expected version."""
    return application.execute(
        game_id,
        sender=Sender.server(),
        step=lambda _s, _a: events,
        expected_version=expected_version,
    )


def play(game_id, n: int) -> None:
    """Append ``n`` moves of whoever is to act (the first legal command), through the write
    door as that seat's user (so the moves are legal, actors included)."""
    for _ in range(n):
        state = store.load(game_id)
        seat = state.turn
        command = legal_commands(state, seat)[0]
        application.execute(
            game_id,
            sender=Sender(user_id=state.seats[seat]["user_id"]),
            step=lambda s, a, command=command: decide(s, a.seat, command),
            expected_version=state.version,
        )


def sql(statement: str, params=None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def test_start_appends_game_started_and_the_first_deal(game):
    rows = store.load_events(game.pk)
    assert [(r.seq, r.type) for r in rows] == [(1, "game_started"), (2, "round_started")]
    assert rows[0].actor.startswith("user:") and rows[1].actor == "system"
    assert rows[0].prev_hash == store.GENESIS_HASH
    assert rows[1].prev_hash == rows[0].hash
    # Stored as the 32 bytes of SHA-256; the previous hash is not stored at all.
    stored = list(Event.objects.filter(game=game).order_by("seq").values_list("hash", flat=True))
    assert [bytes(h).hex() for h in stored] == [r.hash for r in rows]
    assert all(len(bytes(h)) == 32 for h in stored)
    assert not hasattr(Event(), "prev_hash")
    game.refresh_from_db()
    assert game.version == 2 and game.status == Game.Status.ACTIVE and game.phase == "play"
    assert game.current_seat == game.snapshot["dealer"] and game.turn_deadline is not None


def test_append_assigns_consecutive_seqs_and_chains_the_hashes(game):
    play(game.pk, 6)
    rows = store.load_events(game.pk)
    assert [r.seq for r in rows] == list(range(1, len(rows) + 1))
    prev = store.GENESIS_HASH
    for row in rows:
        assert row.prev_hash == prev
        assert row.hash == store.event_hash(
            prev,
            game_id=game.pk,
            seq=row.seq,
            actor=row.actor,
            recorded_at=row.recorded_at,
            data=row.data,
        )
        assert row.type == row.data["type"]
        prev = row.hash
    assert store.verify_chain(game.pk) is None


def test_a_stale_expected_version_is_a_conflict_and_appends_nothing(game):
    state = store.load(game.pk)
    events = decide(state, state.turn, legal_commands(state, state.turn)[-1])
    with pytest.raises(StaleVersion) as excinfo:
        append(game.pk, state.version - 1, events)
    assert excinfo.value.code == "stale_version" and excinfo.value.actual == state.version
    assert excinfo.value.extra == {"version": state.version}
    with pytest.raises(StaleVersion):
        append(game.pk, state.version + 1, events)
    assert Event.objects.filter(game=game).count() == state.version
    append(game.pk, state.version, events)
    assert Game.objects.get(pk=game.pk).version == state.version + len(events)


def test_load_reads_the_snapshot_row_only(game, django_assert_num_queries):
    play(game.pk, 5)
    with django_assert_num_queries(1):
        state = store.load(game.pk)
    assert state_to_dict(state) == state_to_dict(store.fold_from_zero(game.pk))
    assert state.version == Game.objects.get(pk=game.pk).version


def test_load_folds_from_zero_when_the_snapshot_is_missing_or_behind(game):
    play(game.pk, 3)
    expected = state_to_dict(store.load(game.pk))
    Game.objects.filter(pk=game.pk).update(snapshot=None)
    assert state_to_dict(store.load(game.pk)) == expected
    stale = {**expected, "version": expected["version"] - 1}
    Game.objects.filter(pk=game.pk).update(snapshot=stale)
    assert state_to_dict(store.load(game.pk)) == expected


def test_replay_prefix_is_a_fold_of_the_first_n_events(game):
    play(game.pk, 4)
    assert store.fold_from_zero(game.pk, upto=2).version == 2
    assert [r.seq for r in store.load_events(game.pk, after=3, upto=5)] == [4, 5]


def test_a_failing_append_leaves_no_trace(game, monkeypatch):
    """The head update and the inserts are one statement: an insert that fails (here a row
    whose seq already exists) takes the head's update with it."""
    play(game.pk, 1)
    state = store.load(game.pk)
    events = decide(state, state.turn, legal_commands(state, state.turn)[-1])
    chain = store.chain

    def clashing(head, batches, now):
        rows = chain(head, batches, now)
        return [*rows[:-1], rows[-1].__class__(**{**rows[-1].__dict__, "seq": 1})]

    monkeypatch.setattr(store, "chain", clashing)
    before = Game.objects.values("version", "last_hash", "snapshot").get(pk=game.pk)
    with pytest.raises(IntegrityError), transaction.atomic():
        append(game.pk, state.version, events)
    assert Event.objects.filter(game=game).count() == state.version
    assert Game.objects.values("version", "last_hash", "snapshot").get(pk=game.pk) == before


# ---------------------------------------------------------------- append-only in the database


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE games_event SET data = '{}'::jsonb WHERE game_id = %s",
        "UPDATE games_event SET actor = 'someone' WHERE game_id = %s AND seq = 1",
        "DELETE FROM games_event WHERE game_id = %s",
        "DELETE FROM games_event WHERE game_id = %s AND seq = 2",
        "TRUNCATE games_event CASCADE",
    ],
)
def test_raw_sql_cannot_change_or_remove_events(game, statement):
    params = [game.pk] if "%s" in statement else None
    # Run the test transaction's deferred FK checks now: TRUNCATE refuses to run while any are
    # pending, and we want to see the trigger refuse it.
    sql("SET CONSTRAINTS ALL IMMEDIATE")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        sql(statement, params)
    assert Event.objects.filter(game=game).count() == 2
    assert store.verify_chain(game.pk) is None


def test_the_orm_cannot_delete_events_or_games_either(game):
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        Event.objects.filter(game=game).delete()
    from django.db.models import ProtectedError

    with pytest.raises(ProtectedError):
        Game.objects.filter(pk=game.pk).delete()


def tamper(statement: str, params) -> None:
    """Change events the way only a table owner can: with the row trigger switched off.

    (Deferred FK checks of the test's own transaction must run first: PostgreSQL refuses to
    ALTER a table with pending trigger events.)"""
    sql("SET CONSTRAINTS ALL IMMEDIATE")
    sql("ALTER TABLE games_event DISABLE TRIGGER games_event_no_update_delete")
    sql(statement, params)
    sql("ALTER TABLE games_event ENABLE TRIGGER games_event_no_update_delete")


@pytest.mark.parametrize(
    ("statement", "broken"),
    [
        (
            "UPDATE games_event SET data = jsonb_set(data, '{seat}', '7') WHERE game_id = %s "
            "AND seq = 4",
            4,
        ),
        ("UPDATE games_event SET actor = 'user:999' WHERE game_id = %s AND seq = 3", 3),
        (
            "UPDATE games_event SET recorded_at = recorded_at - interval '1 hour' "
            "WHERE game_id = %s AND seq = 5",
            5,
        ),
        ("UPDATE games_event SET type = 'folded' WHERE game_id = %s AND seq = 4", 4),
        ("DELETE FROM games_event WHERE game_id = %s AND seq = 3", 3),
        ("DELETE FROM games_event WHERE game_id = %s AND seq = 6", 6),
    ],
)
def test_an_edit_around_the_trigger_breaks_the_chain_at_that_seq(game, statement, broken):
    play(game.pk, 4)  # seqs 3..6
    assert store.verify_chain(game.pk) is None
    tamper(statement, [game.pk])
    assert store.verify_chain(game.pk) == broken


def test_verify_events_names_the_broken_game_and_seq(game, user_factory):
    sound = lobby.table_create(
        user=user_factory(), seats=[{"kind": "user"}, {"kind": "bot"}, {"kind": "bot"}]
    )  # quick play: started at once
    assert sound.status == "active"
    play(game.pk, 3)
    out = StringIO()
    call_command("verify_events", stdout=out)
    assert "every game is sound" in out.getvalue()

    tamper(
        "UPDATE games_event SET data = jsonb_set(data, '{tampered}', 'true') "
        "WHERE game_id = %s AND seq = 3",
        [game.pk],
    )
    out = StringIO()
    with pytest.raises(CommandError, match="1 of 2 games"):
        call_command("verify_events", stdout=out)
    assert f"BROKEN game {game.pk}: first bad seq 3 (chain:" in out.getvalue()
    assert str(sound.pk) not in out.getvalue()


def test_verify_events_checks_only_the_games_named(game):
    out = StringIO()
    call_command("verify_events", str(game.pk), "-v", "2", stdout=out)
    assert f"ok game {game.pk}" in out.getvalue() and "1 games verified" in out.getvalue()
    with pytest.raises(CommandError, match="not a game id"):
        call_command("verify_events", "not-a-uuid")


@pytest.mark.parametrize("game_id", ["not-a-uuid", "00000000-0000-0000-0000-000000000000"])
def test_a_bad_or_unknown_game_id_is_not_found(game_id):
    with pytest.raises(GameNotFound):
        store.load(game_id)


def test_a_head_whose_last_hash_is_not_the_streams_is_named(game):
    """The head's last_hash saves a read on every append; an edit of it shows at its seq."""
    play(game.pk, 3)
    version = Game.objects.get(pk=game.pk).version
    assert store.verify_chain(game.pk) is None
    Game.objects.filter(pk=game.pk).update(last_hash=b"\xff" * 32)
    assert store.verify_chain(game.pk) == version
