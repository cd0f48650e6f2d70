"""Tickets over HTTP: ask for a table, see it, cancel it; the refusals, each with its code."""

from __future__ import annotations

import pytest

from games import lobby
from matchmaking import matcher
from matchmaking.models import Ticket
from tests.api.games_support import assert_error
from tests.matchmaking.support import person

pytestmark = pytest.mark.django_db

TICKETS = "/api/v1/matchmaking/tickets"


@pytest.fixture
def player(auth_client_factory, user_factory):
    return lambda: auth_client_factory(person(user_factory))


def test_a_ticket_searches_at_once_and_shows_its_room_and_estimate(player, settings):
    settings.TONGITS_MATCH_BOTS_AFTER_SECONDS = 25.0
    me = player()
    made = me.post(TICKETS, {"room": "1000:50"}, format="json")
    assert made.status_code == 201, made.content
    ticket = made.json()
    assert ticket["status"] == "searching" and ticket["room"] == "1000:50"
    assert ticket["rules"]["stake"] == 50 and ticket["rated"] is True
    assert ticket["bots_after"] == 25.0 and ticket["estimated_wait"] == 25.0
    assert ticket["members"] == [
        {
            "username": me.user.username,
            "display_name": me.user.username,
            "avatar": me.user.avatar_key,
            "status": "joined",
            "owner": True,
        }
    ]
    mine = me.get("/api/v1/me/matchmaking")
    assert mine.status_code == 200 and mine.json()["id"] == ticket["id"]
    assert me.delete(f"{TICKETS}/{ticket['id']}").status_code == 204
    assert_error(me.get("/api/v1/me/matchmaking"), 404, "not_found")
    gone = me.get(f"{TICKETS}/{ticket['id']}").json()
    assert (gone["status"], gone["reason"]) == ("cancelled", "cancelled")
    assert me.delete(f"{TICKETS}/{ticket['id']}").status_code == 204  # again: no change


def test_one_open_ticket_a_person(player):
    me = player()
    assert me.post(TICKETS, {"room": "1000:50"}, format="json").status_code == 201
    assert_error(me.post(TICKETS, {"room": "100:5"}, format="json"), 409, "already_searching")


def test_no_ticket_while_seated_at_a_waiting_or_active_table(player):
    me = player()
    lobby.table_create(user=me.user)
    assert_error(me.post(TICKETS, {"room": "1000:50"}, format="json"), 409, "already_seated")


def test_the_rooms_buy_in_must_be_in_the_wallet_now(player):
    me = player()
    refused = me.post(TICKETS, {"room": "10000:500"}, format="json")
    assert_error(refused, 409, "insufficient_chips")
    assert not Ticket.objects.exists()


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"room": "999:1"}, "invalid_room"),
        ({"room": "1000:50", "rules": "poker"}, "invalid_rules"),
        ({"room": "1000:50", "rules": {"preset": "standard", "stake": 7}}, "invalid_rules"),
        ({"room": "1000:50", "rules": {"turn_seconds": 5}}, "invalid_rules"),
        ({"room": "1000:50", "bots_after": "soon"}, "invalid"),
        ({"room": "1000:50", "bots_after": -1}, "invalid"),
        ({"room": "1000:50", "with": ["a", "b", "c"]}, "invalid"),
        ({"room": "1000:50", "with": ["nobody-at-all"]}, "not_a_friend"),
        ({}, "invalid"),
    ],
)
def test_bad_tickets_are_refused_with_their_code(player, body, code):
    assert_error(player().post(TICKETS, body, format="json"), 400, code)
    assert not Ticket.objects.exists()


def test_a_matched_ticket_cannot_be_cancelled_and_shows_its_game(player):
    people = [player() for _ in range(3)]
    ids = [p.post(TICKETS, {"room": "1000:50"}, format="json").json()["id"] for p in people]
    assert matcher.match_once() == 1
    seen = people[0].get(f"{TICKETS}/{ids[0]}").json()
    assert seen["status"] == "matched" and seen["game_id"]
    assert_error(people[0].delete(f"{TICKETS}/{ids[0]}"), 409, "already_matched")
    game = people[1].get(f"/api/v1/games/{seen['game_id']}").json()
    assert game["status"] == "active" and game["seat"] is not None


def test_a_stranger_cannot_see_or_cancel_a_ticket(player):
    me, stranger = player(), player()
    ticket = me.post(TICKETS, {"room": "1000:50"}, format="json").json()
    assert_error(stranger.get(f"{TICKETS}/{ticket['id']}"), 404, "not_found")
    assert_error(stranger.delete(f"{TICKETS}/{ticket['id']}"), 404, "not_found")
    assert me.get(f"{TICKETS}/{ticket['id']}").json()["status"] == "searching"
