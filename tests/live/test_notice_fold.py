"""An append's notice carries its rows: a followed game is folded on from it, with no query.

Ground truth is the database: for every append of a whole match, the read folded from the
notice must render, for every seat and audience, the same bytes as the stored rows that
``/events`` reads, and reach the same state as a fold of the stored stream.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import UTC, datetime

import orjson
import psycopg
import pytest

from games import lobby, store
from games import presenters as present
from games.live import feed, listener
from games.models import Game
from games.rules import state_to_dict
from tests.tasks.support import drive

pytestmark = pytest.mark.django_db(transaction=True)


def _notices_of_a_match(user_factory) -> tuple[str, list[str]]:
    """A whole match (one person, two bots, first to two wins) and the notices it sent."""
    with psycopg.connect(**listener.connection_params(), autocommit=True) as conn:
        conn.execute("LISTEN game_events")
        ann = user_factory()
        table = lobby.table_create(
            user=ann,
            rules={"preset": "standard", "wins_to_match": 2},
            seats=[{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot"}],
        )
        drive(str(table.pk), ann, lambda game: game.status == Game.Status.FINISHED)
        payloads = [n.payload for n in conn.notifies(timeout=1.0, stop_after=None)]
    return str(table.pk), [p for p in payloads if p.startswith(str(table.pk))]


def _head_at(game_id: str, version: int, note: dict | None) -> feed.GameRead:
    """The read a hub would hold at ``version``: the stream folded from zero."""
    head = feed.GameHead(game_id, "active", None, None, "")
    if note is not None:
        deadline = note["turn_deadline"]
        head = feed.GameHead(
            game_id,
            note["status"],
            datetime.fromisoformat(deadline) if deadline else None,
            None,
            note["awaiting"],
        )
    return feed.GameRead(head, store.fold_from_zero(game_id, upto=version), [])


def test_every_notice_of_a_match_folds_to_what_the_database_holds(user_factory) -> None:
    game_id, payloads = _notices_of_a_match(user_factory)
    stored = {row.seq: row for row in store.load_events(game_id)}
    bodies = [p.split(":", 2)[2] for p in payloads if p.count(":") >= 2]
    plain = [p for p in payloads if p.count(":") == 1]
    assert plain == [f"{game_id}:0"], "only the table's creation (no append) names no rows"
    assert len(bodies) >= 5

    first = orjson.loads(bodies[0])["rows"][0]["seq"]
    read = _head_at(game_id, first - 1, None) if first > 1 else None
    checked = 0
    for body in bodies:
        note = orjson.loads(body)
        if read is None:  # the table's first append: a hub always reads the database first
            read = _head_at(game_id, note["rows"][-1]["seq"], note)
            continue
        folded = feed.read_from_notice(read, note)
        assert folded is not None, note["rows"][0]["seq"]
        assert state_to_dict(folded.state) == state_to_dict(
            store.fold_from_zero(game_id, upto=folded.version)
        )
        for row in folded.rows:
            for seat in (0, 1, 2, None):
                for reveal in (False, True):
                    ours = orjson.dumps(present.feed_item(row, seat, reveal))
                    theirs = orjson.dumps(present.feed_item(stored[row.seq], seat, reveal))
                    assert ours == theirs, (row.seq, seat, reveal)
                    checked += 1
        read = folded

    game = Game.objects.get(pk=game_id)
    assert read.version == game.version
    assert (read.game.status, read.game.turn_deadline, read.game.awaiting) == (
        game.status,
        game.turn_deadline,
        game.awaiting,
    )
    assert read.finished and checked > 100


def test_a_notice_that_does_not_follow_on_is_not_folded(user_factory) -> None:
    game_id, payloads = _notices_of_a_match(user_factory)
    notes = [orjson.loads(p.split(":", 2)[2]) for p in payloads if p.count(":") >= 2]
    later = notes[-1]
    behind = _head_at(game_id, later["rows"][0]["seq"] - 2, None)  # one append missed
    assert feed.read_from_notice(behind, later) is None
    ahead = _head_at(game_id, later["rows"][-1]["seq"], None)  # the same append twice
    assert feed.read_from_notice(ahead, later) is None


def test_a_hub_that_folds_a_notice_answers_its_next_read_without_a_query(user_factory) -> None:
    game_id, payloads = _notices_of_a_match(user_factory)
    body = payloads[-1].split(":", 2)[2]  # the last append's
    note = orjson.loads(body)
    before = _head_at(game_id, note["rows"][0]["seq"] - 1, None)

    async def offered() -> tuple[feed.GameRead, feed.GameRead]:
        hub = listener.GameHub(game_id)
        hub._read, hub._read_gen = before, hub.gen  # as a read leaves it
        hub.offer(orjson.loads(body))
        hub.wake()
        held = hub._read
        return held, await hub.read(before.version)

    held, answered = asyncio.run(offered())
    assert answered is held  # a query would have made a new read
    assert answered.version == note["rows"][-1]["seq"]


def test_a_hub_keeps_only_the_recent_rows_of_a_whole_match(user_factory, monkeypatch) -> None:
    """Every notice of a match offered in turn to one hub: the rows and frames it holds stay
    within twice ``KEEP_ROWS`` (a process follows a game for as long as the match lasts).

    The window is narrowed to 4 rows so that every match, however short its shuffles make it,
    runs well past what a hub keeps."""
    monkeypatch.setattr(listener, "KEEP_ROWS", 4)
    game_id, payloads = _notices_of_a_match(user_factory)
    notes = [orjson.loads(p.split(":", 2)[2]) for p in payloads if p.count(":") >= 2]
    assert notes[-1]["rows"][-1]["seq"] > 2 * 2 * listener.KEEP_ROWS  # twice what is kept
    hub = listener.GameHub(game_id)
    hub._read, hub._read_gen = _head_at(game_id, notes[0]["rows"][-1]["seq"], notes[0]), hub.gen
    for note in notes[1:]:
        hub.rendered[(note["rows"][-1]["seq"], 0, False)] = b"frame"
        assert hub.offer(note) is not None
        hub.wake()
        assert len(hub.rows) <= 2 * listener.KEEP_ROWS
        assert len(hub.rendered) <= 2 * listener.KEEP_ROWS
    assert max(hub.rows) == notes[-1]["rows"][-1]["seq"]


def test_a_cached_head_follows_another_process_s_appends_from_their_notices(user_factory):
    game_id, payloads = _notices_of_a_match(user_factory)
    gid = uuid.UUID(game_id)
    notes = [orjson.loads(p.split(":", 2)[2]) for p in payloads if p.count(":") >= 2]
    note = notes[-1]
    before = note["rows"][0]["seq"] - 1
    store.heads.clear()
    store.advance(gid, note)  # no head here at the version before: nothing to move on
    assert store.heads.get(gid, note["rows"][-1]["seq"]) is None

    # A head this process read at the version before the append (as a move of its would).
    game = Game.objects.get(pk=game_id)
    old = store.Head(
        game_id=gid,
        version=before,
        last_hash=store.load_events(game_id, upto=before)[-1].hash,
        snapshot=None,
        rules=game.rules,
        created_by_id=game.created_by_id,
        status="active",
        settled_at=None,
        turn_deadline=None,
        started_at=game.started_at,
        finished_at=None,
        decoded=store.fold_from_zero(game_id, upto=before),
    )
    store.heads.put(old)
    store.advance(gid, note)
    head = store.heads.get(gid, game.version)
    assert head is not None and head.last_hash == bytes(game.last_hash).hex()
    assert state_to_dict(head.state()) == game.snapshot
    assert (head.status, head.turn_deadline, head.started_at, head.finished_at) == (
        game.status,
        game.turn_deadline,
        game.started_at,
        game.finished_at,
    )
    # The same notice twice, or one that does not follow on, changes nothing.
    store.advance(gid, note)
    store.advance(gid, notes[0])
    assert store.heads.get(gid, game.version) is head
    store.heads.clear()


def test_a_head_folds_the_appends_it_heard_only_when_its_state_is_wanted(user_factory):
    game_id, payloads = _notices_of_a_match(user_factory)
    gid = uuid.UUID(game_id)
    notes = [orjson.loads(p.split(":", 2)[2]) for p in payloads if p.count(":") >= 2]
    first = notes[0]["rows"][0]["seq"] - 1
    game = Game.objects.get(pk=game_id)
    start = store.Head(
        game_id=gid,
        version=first,
        last_hash=store.load_events(game_id, upto=first)[-1].hash if first else "",
        snapshot=None,
        rules=game.rules,
        created_by_id=game.created_by_id,
        status="active",
        settled_at=None,
        turn_deadline=None,
        started_at=game.started_at,
        finished_at=None,
        decoded=store.fold_from_zero(game_id, upto=first) if first else None,
    )
    store.heads.clear()
    store.heads.put(start)
    for i, note in enumerate(notes):
        store.advance(gid, note)
        head = store.heads.get(gid, note["rows"][-1]["seq"])
        assert head is not None
        assert head.decoded is None  # nothing folded yet
        # What a head holds to fold on is one earlier head, never a chain of them.
        assert head.base is not None and head.base.base is None
        if i % 7 == 3:  # now and then a move of this process's wants the state
            wanted = state_to_dict(head.state())
            assert wanted == state_to_dict(store.fold_from_zero(game_id, upto=head.version))
            assert head.base is None and head.unfolded == ()  # folded: the earlier head let go
    head = store.heads.get(gid, game.version)
    assert head is not None and state_to_dict(head.state()) == game.snapshot

    # A head that would hold more unfolded appends than it may is let go (read again instead).
    store.heads.clear()
    store.heads.put(start)
    store.advance(gid, {**notes[0], "rows": notes[0]["rows"] * (store.MAX_UNFOLDED + 1)})
    assert store.heads.get(gid, notes[0]["rows"][-1]["seq"]) is None
    store.heads.clear()


def test_a_process_that_neither_follows_a_game_nor_holds_its_head_leaves_its_notices_unread(
    caplog,
) -> None:
    """Every process hears every move; only one with something to move on reads the rows."""
    live = object.__new__(listener.Listener)  # its notice handling alone, with no connection
    gid = uuid.uuid4()
    store.heads.clear()
    with caplog.at_level(logging.ERROR, logger="games.live.listener"):
        live._fold(str(gid), None, "{not json")  # unread: unreadable rows go unnoticed
        assert not caplog.records
        store.heads.put(
            store.Head(
                game_id=gid,
                version=6,
                last_hash="0" * 64,
                snapshot=None,
                rules={},
                created_by_id=None,
                status="active",
                settled_at=None,
                turn_deadline=None,
                started_at=None,
                finished_at=None,
            ),
            committed=True,
        )
        live._fold(str(gid), None, "{not json")  # a head held here: the rows are read
    assert [r.getMessage() for r in caplog.records] == [f"live: could not fold the notice of {gid}"]
    store.heads.clear()


def test_a_notice_too_large_for_notify_names_only_the_game_and_version() -> None:
    game_id = uuid.uuid4()
    now = datetime.now(UTC)
    columns = {
        "status": "active",
        "turn_deadline": now,
        "awaiting": "user",
        "started_at": now,
        "finished_at": None,
    }
    small = store.notice(game_id, 7, columns, '[{"seq":7}]')
    assert small.startswith(f"{game_id}:7:{{") and len(small.encode()) < 8000
    assert orjson.loads(small.split(":", 2)[2])["rows"] == [{"seq": 7}]
    large = store.notice(game_id, 7, columns, orjson.dumps([{"pad": "x" * 8000}]).decode())
    assert large == f"{game_id}:7"


def test_a_deleted_account_is_forgotten_by_every_process_that_follows_games(user_factory) -> None:
    from accounts.services import account_delete
    from games import players

    zoe = user_factory(password="zoe-passphrase-0192")
    assert players.names([zoe.pk]) == {zoe.pk: zoe.username}  # remembered here now
    with psycopg.connect(**listener.connection_params(), autocommit=True) as conn:
        conn.execute("LISTEN game_events")
        account_delete(user=zoe, password="zoe-passphrase-0192")
        heard = [n.payload for n in conn.notifies(timeout=1.0, stop_after=None)]
    assert f"forget:{zoe.pk}" in heard

    # Another process's listener, with the old name remembered, drops it when it hears that.
    players._names[zoe.pk] = (float("inf"), "zoe, still remembered")

    async def hear() -> None:
        live = listener.Listener(asyncio.get_running_loop())
        live.dispatch(f"forget:{zoe.pk}")
        live.closing = True
        live._task.cancel()

    asyncio.run(hear())
    assert not players.remembered([zoe.pk])
    assert players.names([zoe.pk]) == {zoe.pk: players.DELETED_NAME}
