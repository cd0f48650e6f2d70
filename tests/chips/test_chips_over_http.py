"""The whole flow over HTTP with real PostgreSQL and a real Celery worker: three players
register (the sign-up grant), sit at a table played for 100 chips, play it to the end; the
worker settles it; each balance changes by exactly what the settlement says it paid."""

from __future__ import annotations

import pytest

from games.rules import table_stakes
from tests.accounts.support import register
from tests.api.games_support import choose, get_view, post_command, table_url

# The worker fixtures of tests/tasks (a real worker and the scheduler, on the test Redis).
from tests.tasks.conftest import (  # noqa: F401
    broker,
    game_timing,
    task_runs,
    worker,
)
from tests.tasks.support import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
RULES = {"preset": "standard", "wins_to_match": 2, "stake": 10}


def wallet(client) -> dict:
    response = client.get("/api/v1/me/wallet")
    assert response.status_code == 200, response.content
    return response.json()


def test_three_players_play_for_chips_and_the_worker_pays_them(worker, settings):  # noqa: F811
    settings.TONGITS_SIGNUP_GRANT = 1000
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    clients = [register(f"stakes{n}") for n in range(3)]
    assert [wallet(c)["available"] for c in clients] == [1000, 1000, 1000]
    seats = [{"kind": "user"}] + [{"kind": "user", "username": c.username} for c in clients[1:]]
    body = {"rules": RULES, "seats": seats, "buy_in": 100}
    response = clients[0].post("/api/v1/tables", body, "json")
    assert response.status_code == 201, response.content
    game_id = response.json()["id"]
    for other in clients[1:]:
        answer = other.post(table_url(game_id, "/invitation"), {"answer": "accept"}, "json")
        assert answer.status_code == 200, answer.content
    assert clients[0].post(table_url(game_id, "/start")).status_code == 200
    for client in clients:
        assert (wallet(client)["available"], wallet(client)["in_play"]) == (900, 100)

    payload = get_view(clients[0], game_id)
    for _ in range(5000):
        if payload["status"] == "finished":
            break
        if payload["view"]["turn"] is not None:
            client = clients[payload["view"]["turn"]]
            mine = get_view(client, game_id)
            if mine["legal_commands"]:
                response = post_command(client, game_id, choose(mine), mine["version"])
                assert response.status_code in (200, 409), response.content
        payload = wait_for(
            lambda: (
                (p := get_view(clients[0], game_id))
                and (p["status"] == "finished" or p["view"]["turn"] is not None)
                and p
            ),
            10,
        )
        assert payload, "the table stopped moving (the worker deals the next round)"
    assert payload["status"] == "finished"
    owed = payload["view"]["chips"]

    match = wait_for(
        lambda: (
            (r := clients[0].get(f"/api/v1/matches/{game_id}")).status_code == 200
            and r.json()["settlement"]["settled"]
            and r.json()
        ),
        20,
    )
    assert match, "the worker never settled the match"
    settlement = match["settlement"]
    assert settlement["owed"] == owed and settlement["buy_in"] == 100
    assert settlement["paid"] == table_stakes(owed, [100, 100, 100])
    for seat, client in enumerate(clients):
        after = wallet(client)
        assert after["available"] == 1000 + settlement["paid"][seat], (seat, after, settlement)
        assert after["in_play"] == 0
        newest = client.get("/api/v1/me/wallet/entries").json()["results"][0]
        back = 100 + settlement["paid"][seat]
        # A seat that lost its whole buy-in gets nothing back: no posting of its own.
        expected = ("payout", back) if back else ("buy_in", -100)
        assert (newest["cause"], newest["amount"]) == expected
        if back:  # the result alone, won or lost, beside what came back
            assert newest["match_result"] == settlement["paid"][seat]
        assert newest["match"] == f"/api/v1/matches/{game_id}"
    assert sum(settlement["paid"]) == 0
    audit = clients[1].get(f"/api/v1/games/{game_id}/audit").json()
    assert audit["settlement_ok"] is True and audit["settlement"]["problems"] == []
    assert audit["sound"] is True
