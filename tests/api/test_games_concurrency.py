"""Twenty clients send the same move at once: one wins, the rest get 409, one event is added.

These tests commit for real (``transaction=True``), so each thread's own database connection
sees the game and races for its row lock as production requests would.
"""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connection
from rest_framework.test import APIClient

from games import lobby, store
from games.models import Event, IdempotencyRecord
from games.rules.cards import codes_of
from tests.api.games_support import fast_password_hashing  # noqa: F401 (a fixture)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fast_password_hashing"),
]

THREADS = 20


@pytest.fixture
def game(user_factory):
    """A started game, committed; returns (game_id, token of the seat to act, its command)."""
    from rest_framework.authtoken.models import Token

    users = [user_factory() for _ in range(3)]
    table = lobby.table_create(
        user=users[0],
        seats=[{"kind": "user"}] + [{"kind": "user", "username": u.username} for u in users[1:]],
    )
    for invited in users[1:]:
        lobby.table_respond(game_id=table.pk, user=invited, accept=True)
    lobby.table_start(game_id=table.pk, user=users[0])
    state = store.load(table.pk)
    actor = next(u for u in users if u.pk == state.seats[state.turn]["user_id"])
    token, _ = Token.objects.get_or_create(user=actor)
    command = {"type": "discard", "card": codes_of(state.hands[state.turn])[0]}
    return table.pk, token.key, command, state.version


def race(game_id, token, body, headers=None):
    """Send ``body`` from THREADS threads released together; return their responses."""
    barrier = threading.Barrier(THREADS)
    results: list = [None] * THREADS

    def worker(i: int) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        try:
            barrier.wait(timeout=30)
            results[i] = client.post(
                f"/api/v1/games/{game_id}/commands", body, "json", **(headers or {})
            )
        except Exception as exc:  # recorded, so the assertion below shows it
            results[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return results


def test_twenty_threads_same_command_same_version_exactly_one_wins(game):
    game_id, token, command, version = game
    results = race(game_id, token, {"command": command, "expected_version": version})
    statuses = Counter(getattr(r, "status_code", repr(r)) for r in results)
    assert statuses == {200: 1, 409: THREADS - 1}, statuses
    codes = {r.json()["code"] for r in results if r.status_code == 409}
    assert codes == {"stale_version"}
    assert Event.objects.filter(game_id=game_id).count() == version + 1
    assert store.verify_chain(game_id) is None
    assert store.load(game_id).version == version + 1


def test_twenty_threads_same_idempotency_key_one_append_one_answer(game):
    game_id, token, command, version = game
    results = race(
        game_id,
        token,
        {"command": command, "expected_version": version},
        headers={"HTTP_IDEMPOTENCY_KEY": "retry-me"},
    )
    statuses = Counter(getattr(r, "status_code", repr(r)) for r in results)
    # The lock serialises them: the first appends, the others find its stored answer (or, if
    # they read the version before it committed, still find the record under the lock).
    assert statuses == {200: THREADS}, statuses
    assert len({r.content for r in results}) == 1
    assert Event.objects.filter(game_id=game_id).count() == version + 1
    assert IdempotencyRecord.objects.count() == 1
