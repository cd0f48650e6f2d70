"""Rematches: after a match ends its people may play it again, each with their consent; the new
table keeps the seats (bots too), the rules and the stakes, the next dealer deals first, and
the two games link to each other."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from chips import services as chips
from games import play, store
from games.models import Event, Game, Rematch
from tests.accounts.support import settle
from tests.api.games_support import TABLES, assert_error, game_url, table_url
from tests.chips.support import assert_sound, escrow_balance

pytestmark = pytest.mark.django_db

EASY = {"kind": "bot", "level": "easy"}
HARD = {"kind": "bot", "level": "hard"}
SHORT = {"preset": "house", "wins_to_match": 1, "turn_seconds": 0}


@pytest.fixture
def clients(auth_client_factory):
    return [auth_client_factory() for _ in range(3)]


def finished_match(owner, *others, bots=(), **extra) -> str:
    """A finished match of ``owner``, ``others`` (invited, accepting) and ``bots``: the people
    resign and the server plays it out."""
    seats = [{"kind": "user"}] + [{"kind": "user", "username": o.user.username} for o in others]
    seats += list(bots)
    response = owner.post(TABLES, {"rules": SHORT, "seats": seats, **extra}, "json")
    assert response.status_code == 201, response.content
    game_id = response.json()["id"]
    for other in others:
        answer = other.post(table_url(game_id, "/invitation"), {"answer": "accept"}, "json")
        assert answer.status_code == 200, answer.content
    if response.json()["status"] == "waiting":
        assert owner.post(table_url(game_id, "/start")).status_code == 200
    for person in (owner, *others):
        play.resign(game_id, person.user.pk)
    for _ in range(5000):
        head = store.read(game_id)
        if head.status == Game.Status.FINISHED:
            return game_id
        assert play.play_bot_turn(game_id=game_id, expected_version=head.version) in (
            play.Outcome.DONE,
        )
    raise AssertionError("the match does not end")


def propose(client, game_id: str):
    return client.post(game_url(game_id, "/rematch"))


def answer(client, game_id: str, what):
    return client.post(game_url(game_id, "/rematch/answer"), {"answer": what}, "json")


def started(game_id: str) -> dict:
    return Event.objects.get(game_id=game_id, seq=1).data


def test_one_decline_and_no_new_table(clients):
    ann, ben, cy = clients
    game_id = finished_match(ann, ben, cy)
    tables = Game.objects.count()
    proposed = propose(ben, game_id)
    assert proposed.status_code == 201, proposed.content
    body = proposed.json()
    assert body["status"] == "open" and body["proposed_by"] == ben.user.username
    assert [(a["seat"], a["answer"]) for a in body["answers"]] == [
        (0, "pending"),
        (1, "accepted"),
        (2, "pending"),
    ]
    assert body["next_game_id"] is None and body["game_id"] == game_id
    accepted = answer(ann, game_id, "accept")
    assert accepted.status_code == 200 and accepted.json()["status"] == "open"
    declined = answer(cy, game_id, "decline")
    assert declined.status_code == 200, declined.content
    assert declined.json()["status"] == "declined"
    assert [a["answer"] for a in declined.json()["answers"]] == ["accepted", "accepted", "declined"]
    assert Game.objects.count() == tables
    assert_error(answer(cy, game_id, "accept"), 409, "rematch_closed")
    assert_error(propose(ann, game_id), 409, "rematch_closed")
    shown = ann.get(game_url(game_id, "/rematch")).json()
    assert shown["status"] == "declined" and shown["next_game_id"] is None
    assert ann.get(table_url(game_id)).json()["rematch"]["status"] == "declined"


def test_all_accept_starts_the_same_seats_rules_and_the_next_dealer_linked_both_ways(clients):
    ann, ben, _ = clients
    game_id = finished_match(ann, ben, bots=[HARD])
    before = started(game_id)
    assert propose(ann, game_id).json()["answers"][1]["answer"] == "pending"
    done = answer(ben, game_id, "accept")
    assert done.status_code == 200, done.content
    body = done.json()
    assert body["status"] == "started" and body["next_game_id"]
    new_id = body["next_game_id"]
    table = ben.get(table_url(new_id)).json()
    assert table["status"] == "active" and table["rematch_of"] == game_id
    assert table["rematch"] is None
    assert [(s["seat"], s["kind"], s.get("user_id"), s.get("level")) for s in table["seats"]] == [
        (0, "user", ann.user.pk, None),
        (1, "user", ben.user.pk, None),
        (2, "bot", None, "hard"),
    ]
    assert table["rules"] == ann.get(table_url(game_id)).json()["rules"]
    assert (table["rated"], table["buy_in"]) == (True, 0)
    again = started(new_id)
    assert again["seats"] == before["seats"] and again["rules"] == before["rules"]
    assert again["first_dealer"] == (before["first_dealer"] + 1) % 3
    old = ann.get(table_url(game_id)).json()
    assert old["rematch"]["next_game_id"] == new_id and old["rematch"]["status"] == "started"
    assert old["rematch_of"] is None
    assert ann.get(game_url(game_id, "/rematch")).json()["next_game_id"] == new_id
    assert_error(answer(ann, game_id, "accept"), 409, "rematch_closed")
    assert_error(propose(ben, game_id), 409, "rematch_closed")
    # The next match is a match like any: the people play it (here: at once to its end) and
    # may play it again too.
    assert ann.get(game_url(new_id)).json()["status"] == "active"
    assert_error(propose(ann, new_id), 409, "match_not_over")


def test_one_person_and_two_bots_play_again_at_once(auth_client):
    game_id = finished_match(auth_client, bots=[EASY, HARD])
    proposed = propose(auth_client, game_id)
    assert proposed.status_code == 201
    assert proposed.json()["status"] == "started"
    new_id = proposed.json()["next_game_id"]
    seats = started(new_id)["seats"]
    assert seats == [
        {"kind": "user", "user_id": auth_client.user.pk},
        {"kind": "bot", "level": "easy"},
        {"kind": "bot", "level": "hard"},
    ]


def test_conflicts_and_who_may(clients, auth_client_factory):
    ann, ben, cy = clients
    stranger = auth_client_factory()
    waiting = ann.post(
        TABLES, {"seats": [{"kind": "user"}, {"kind": "open"}, EASY]}, "json"
    ).json()["id"]
    assert_error(propose(ann, waiting), 409, "match_not_over")
    running = ann.post(TABLES, {"rules": SHORT, "seats": [{"kind": "user"}, EASY, EASY]}, "json")
    assert_error(propose(ann, running.json()["id"]), 409, "match_not_over")
    game_id = finished_match(ann, ben, cy)
    assert_error(ann.get(game_url(game_id, "/rematch")), 409, "no_rematch")
    assert_error(answer(ben, game_id, "accept"), 409, "no_rematch")
    assert_error(propose(stranger, game_id), 403, "not_a_player")
    assert_error(stranger.get(game_url(game_id, "/rematch")), 403, "not_a_player")
    assert_error(propose(ann, "00000000-0000-0000-0000-000000000000"), 404, "not_found")
    assert propose(ann, game_id).status_code == 201
    assert_error(propose(ben, game_id), 409, "rematch_open")
    assert_error(answer(ann, game_id, "accept"), 409, "already_answered")  # the proposer
    assert_error(answer(stranger, game_id, "accept"), 403, "not_a_player")
    assert answer(ben, game_id, "accept").status_code == 200
    assert_error(answer(ben, game_id, "decline"), 409, "already_answered")
    for bad in (True, 1, "yes", None, ["accept"]):
        assert_error(answer(cy, game_id, bad), 400, "invalid")
    assert Rematch.objects.get(game_id=game_id).status == "open"


def test_a_proposal_lapses(clients, settings):
    ann, ben, cy = clients
    game_id = finished_match(ann, ben, cy)
    settings.TONGITS_REMATCH_SECONDS = 60
    body = propose(cy, game_id).json()
    assert body["status"] == "open"
    Rematch.objects.filter(game_id=game_id).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert ann.get(game_url(game_id, "/rematch")).json()["status"] == "lapsed"
    assert ann.get(table_url(game_id)).json()["rematch"]["status"] == "lapsed"
    assert_error(answer(ann, game_id, "accept"), 409, "rematch_closed")
    assert Rematch.objects.get(game_id=game_id).status == "lapsed"  # marked by that write
    assert_error(propose(ben, game_id), 409, "rematch_closed")
    assert Game.objects.filter(created_by=cy.user).count() == 0


def test_accepting_asks_for_the_buy_in(clients):
    ann, ben, _ = clients
    game_id = finished_match(ann, ben, bots=[EASY], buy_in=100)
    settle(game_id)
    available = ben.get("/api/v1/me/wallet").json()["available"]
    chips.adjust(user_id=ben.user.pk, amount=-(available - 50), reason="test", staff_id=None)
    assert propose(ann, game_id).status_code == 201
    refused = assert_error(answer(ben, game_id, "accept"), 409, "insufficient_chips")
    assert refused["seat"] == 1
    rematch = Rematch.objects.get(game_id=game_id)
    assert rematch.status == "open" and str(ben.user.pk) not in rematch.answers
    chips.adjust(user_id=ben.user.pk, amount=100, reason="test", staff_id=None)
    done = answer(ben, game_id, "accept")
    assert done.status_code == 200 and done.json()["status"] == "started"
    new_id = done.json()["next_game_id"]
    assert ben.get(table_url(new_id)).json()["buy_in"] == 100
    assert ben.get("/api/v1/me/wallet").json()["in_play"] == 100
    assert ann.get("/api/v1/me/wallet").json()["in_play"] == 100
    assert escrow_balance(new_id) == 300  # the bot's buy-in from the house, as at any start
    assert_sound()  # entries sum to zero, no balance below zero, each cause posted once


def test_a_deleted_player_means_no_rematch(clients):
    ann, ben, cy = clients
    game_id = finished_match(ann, ben, cy)
    cy.user.is_active = False
    cy.user.save(update_fields=["is_active"])
    assert_error(propose(ann, game_id), 409, "player_unavailable")
