"""The write path's contract: a move is the authentication look-up plus two round trips (read the
head, one conditional write), whatever the game's length, for people, bots and time-outs alike;
and the snapshot the head keeps always equals a fold of the stream."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts import token_cache
from games import play, store
from games.models import Game
from games.rules import state_to_dict
from tests.api.games_support import (
    choose,
    client_for_turn,
    fast_password_hashing,  # noqa: F401 (a fixture)
    get_view,
    post_command,
    start_game,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

#: Round trips of one move, besides authentication: read the head, write (commit is the third
#: outside the test's transaction).
MOVE_QUERIES = 2


@pytest.fixture
def players(auth_client_factory):
    return [auth_client_factory() for _ in range(3)]


def play_moves(players, game_id: str, n: int) -> dict:
    for _ in range(n):
        payload = get_view(players[0], game_id)
        client = client_for_turn(players, payload)
        payload = get_view(client, game_id)
        response = post_command(client, game_id, choose(payload), payload["version"])
        assert response.status_code == 200, response.content
    return get_view(players[0], game_id)


def timed_move(players, game_id: str, cold_token: bool = False, **headers) -> list[str]:
    """One move over HTTP; the SQL it ran (``cold_token``: its token not seen for a second)."""
    payload = get_view(players[0], game_id)
    client = client_for_turn(players, payload)
    payload = get_view(client, game_id)
    if cold_token:
        token_cache.clear()
    with CaptureQueriesContext(connection) as queries:
        response = post_command(client, game_id, choose(payload), payload["version"], **headers)
    assert response.status_code == 200, response.content
    return [q["sql"] for q in queries.captured_queries]


def assert_move_queries(sql: list[str]) -> None:
    auth = [q for q in sql if "accounts_session" in q]
    assert len(auth) <= 1, sql  # none when the token was looked up within the last second
    rest = [q for q in sql if q not in auth]
    assert len(rest) == MOVE_QUERIES, rest
    assert rest[0].startswith("SELECT g.version") and rest[1].startswith("WITH g AS"), rest


def test_a_move_over_http_is_auth_plus_two_round_trips(players, settings):
    settings.TONGITS_DEAL_INLINE = True
    game_id = start_game(players, {"preset": "standard", "wins_to_match": 99})
    assert_move_queries(timed_move(players, game_id))
    assert_move_queries(timed_move(players, game_id, HTTP_IDEMPOTENCY_KEY="k-1"))
    sql = timed_move(players, game_id, cold_token=True)  # the look-up is the one more query
    assert len([q for q in sql if "accounts_session" in q]) == 1
    assert_move_queries(sql)


def test_a_long_games_move_costs_the_same_queries(players, settings):
    """No re-read or re-fold of the stream: the same statements at 300+ events as at 3."""
    settings.TONGITS_DEAL_INLINE = True
    game_id = start_game(players, {"preset": "standard", "wins_to_match": 99})
    early = timed_move(players, game_id)
    while Game.objects.get(pk=game_id).version < 300:
        play_moves(players, game_id, 20)
    late = timed_move(players, game_id)
    assert_move_queries(late)
    assert len(late) == len(early)
    game = Game.objects.get(pk=game_id)
    assert state_to_dict(store.fold_from_zero(game_id)) == game.snapshot
    assert store.verify_chain(game_id) is None


def test_bot_and_time_out_writes_build_no_answer_and_make_two_round_trips(
    auth_client_factory, settings
):
    human = auth_client_factory()
    seats = [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}]
    response = human.post("/api/v1/tables", {"rules": "standard", "seats": seats}, "json")
    game_id = response.json()["id"]
    game = Game.objects.get(pk=game_id)
    if game.awaiting == Game.Awaiting.USER:  # let the human time out once, then a bot acts
        Game.objects.filter(pk=game_id).update(turn_deadline=timezone.now())
        with CaptureQueriesContext(connection) as queries:
            assert play.expire_turn(game_id=game_id, expected_version=game.version) == "done"
        assert len(queries.captured_queries) == MOVE_QUERIES
        game = Game.objects.get(pk=game_id)
    assert game.awaiting == Game.Awaiting.BOT, game.awaiting
    with CaptureQueriesContext(connection) as queries:
        assert play.play_bot_turn(game_id=game_id, expected_version=game.version) == "done"
    assert len(queries.captured_queries) == MOVE_QUERIES  # the easy bot reads no history
    game = Game.objects.get(pk=game_id)
    assert state_to_dict(store.fold_from_zero(game_id)) == game.snapshot
    assert bytes(game.last_hash).hex() == store.load_events(game_id)[-1].hash


def test_the_snapshot_equals_a_fold_after_every_move(players, settings):
    settings.TONGITS_DEAL_INLINE = True
    game_id = start_game(players, {"preset": "house", "wins_to_match": 2})
    for _ in range(400):
        payload = get_view(players[0], game_id)
        if payload["status"] == "finished":
            break
        play_moves(players, game_id, 1)
        game = Game.objects.get(pk=game_id)
        assert state_to_dict(store.fold_from_zero(game_id)) == game.snapshot
        assert bytes(game.last_hash).hex() == store.load_events(game_id)[-1].hash
    assert get_view(players[0], game_id)["status"] == "finished"


@pytest.mark.django_db(transaction=True)
def test_a_cached_head_behind_the_game_only_ever_spares_a_read(players, settings):
    """The head cache of a process that did not see the last move: the conditional write
    refuses, nothing is appended, and the current version is read for the answer."""
    settings.TONGITS_DEAL_INLINE = True
    game_id = start_game(players, {"preset": "standard", "wins_to_match": 99})
    play_moves(players, game_id, 2)
    behind = store.read(game_id)  # committed, so cached
    assert store.heads.get(behind.game_id, behind.version) is behind
    payload = play_moves(players, game_id, 1)  # this process moves the game on
    store.heads._heads[behind.game_id] = behind  # as if another process had made that move
    client = client_for_turn(players, get_view(players[0], game_id))
    count = len(store.load_events(game_id))
    response = post_command(client, game_id, {"type": "draw"}, behind.version)
    assert response.status_code == 409 and response.json()["version"] == payload["version"]
    assert len(store.load_events(game_id)) == count
    assert store.heads.get(behind.game_id, behind.version) is None  # forgotten on refusal
    play_moves(players, game_id, 3)  # and play goes on from the database's head
    assert store.verify_chain(game_id) is None


def test_writes_inside_a_transaction_are_not_cached(players, settings):
    """A write that could still roll back never reaches the cache (the tests' own transaction
    is such a block)."""
    settings.TONGITS_DEAL_INLINE = True
    game_id = start_game(players, {"preset": "standard", "wins_to_match": 99})
    payload = play_moves(players, game_id, 1)
    assert store.heads.get(store.parse_id(game_id), payload["version"]) is None


def test_a_command_answer_carries_the_server_time(players, settings):
    """Every view carries server_time, the command's answer too, so a client's countdown needs
    no trust in its own clock."""
    settings.TONGITS_DEAL_INLINE = True
    game_id = start_game(players, {"preset": "standard", "wins_to_match": 99})
    payload = get_view(players[0], game_id)
    client = client_for_turn(players, payload)
    payload = get_view(client, game_id)
    before = timezone.now()
    response = post_command(client, game_id, choose(payload), payload["version"])
    answer = response.json()["game"]
    stamp = timezone.datetime.fromisoformat(answer["server_time"].replace("Z", "+00:00"))
    assert before <= stamp <= timezone.now()
    assert "server_time" in get_view(client, game_id)


def _prepared_statements() -> list[tuple[str, int]]:
    """(first line, executions) of the statements prepared on this connection."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements")
        return [(sql.strip().split("\n")[0], runs) for sql, runs in cursor.fetchall()]


def test_a_moves_read_and_write_are_prepared_once_per_connection(players, settings):
    """The write path's statements are parsed and planned once per connection, then only
    executed (``DATABASE_PREPARED_STATEMENTS``, on by default)."""
    assert settings.DATABASES["default"]["OPTIONS"]["prepare_threshold"] is not None
    settings.TONGITS_DEAL_INLINE = True
    game_id = start_game(players, {"preset": "standard", "wins_to_match": 99})
    play_moves(players, game_id, 6)
    prepared = dict(_prepared_statements())
    writes = [runs for sql, runs in prepared.items() if sql.startswith("WITH g AS")]
    reads = [runs for sql, runs in prepared.items() if sql.startswith("SELECT g.version")]
    assert writes and sum(writes) >= 6, prepared
    assert reads and sum(reads) >= 6, prepared


def test_without_prepared_statements_moves_are_bound_client_side(players, settings):
    """``DATABASE_PREPARED_STATEMENTS=0`` (a connection that never prepares): the same moves,
    the same round trips, nothing prepared (what a pooler without prepared statements needs)."""
    settings.TONGITS_DEAL_INLINE = True
    game_id = start_game(players, {"preset": "standard", "wins_to_match": 99})
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    connection.connection._prepared.clear()  # psycopg's record of them
    threshold = connection.connection.prepare_threshold
    connection.connection.prepare_threshold = None
    try:
        assert_move_queries(timed_move(players, game_id))
        play_moves(players, game_id, 3)
        assert _prepared_statements() == []
    finally:
        connection.connection.prepare_threshold = threshold
    game = Game.objects.get(pk=game_id)
    assert state_to_dict(store.fold_from_zero(game_id)) == game.snapshot
    assert store.verify_chain(game_id) is None


@pytest.mark.django_db(transaction=True)
def test_the_head_a_move_leaves_holds_no_earlier_head(players, settings):
    """A head moved on from other processes' notices keeps the head it folds from; the head a
    write leaves needs nothing before it (kept, a game's heads would chain for a whole match in
    every process that follows it)."""
    settings.TONGITS_DEAL_INLINE = True
    game_id = start_game(players, {"preset": "standard", "wins_to_match": 99})
    play_moves(players, game_id, 2)
    payload = get_view(players[0], game_id)
    client = client_for_turn(players, payload)
    payload = get_view(client, game_id)
    head = store.read(game_id)
    chained = head.moved(decoded=None, base=head, unfolded=())  # as ``store.advance`` leaves one
    store.heads._heads[head.game_id] = chained
    response = post_command(client, game_id, choose(payload), payload["version"])
    assert response.status_code == 200, response.content
    new = store.heads._heads[head.game_id]
    assert new.version == response.json()["version"] > head.version
    assert new.base is None and new.unfolded == ()
    assert chained.base is None  # folded for the move: the head before it let go as well
