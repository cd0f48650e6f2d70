"""Blocks through the API and what they do elsewhere: the friendship and its requests end, chat
hides each from the other both ways, a named seat is refused as an unknown name, mutes stay as
they are; and the selectors the matchmaker keeps people apart with (docs/friends.md)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chat.models import Mute
from social import selectors
from social.models import Block, Friendship
from tests.api.games_support import TABLES, assert_error, start_game
from tests.social.support import BLOCKS, FRIENDS, ask, befriend, block, listed

pytestmark = pytest.mark.usefixtures("fast_hashing")
QUICK = {"preset": "standard", "wins_to_match": 1, "turn_seconds": 0}


@pytest.fixture
def fast_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def people(auth_client_factory, user_factory):
    return [
        auth_client_factory(user_factory(username=name)) for name in ("ana", "ben", "cora", "dan")
    ]


def test_blocking_answers_201_then_200_and_lists_the_blocked_newest_first(people):
    ana, ben, cora, _ = people
    first = block(ana, "BEN", 201)
    assert first["username"] == "ben" and first["display_name"] == "ben" and first["avatar"]
    assert block(ana, "ben", 200)["created_at"] == first["created_at"]
    block(ana, "cora")
    assert [b["username"] for b in ana.get(BLOCKS).json()["results"]] == ["cora", "ben"]
    assert ben.get(BLOCKS).json()["results"] == []
    assert ana.delete(f"{BLOCKS}/ben").status_code == 204
    assert ana.delete(f"{BLOCKS}/ben").status_code == 204
    assert [b["username"] for b in ana.get(BLOCKS).json()["results"]] == ["cora"]


def test_names_nobody_has_bots_and_oneself_cannot_be_blocked(people):
    ana = people[0]
    assert_error(ana.post(BLOCKS, {"username": "nobody"}, "json"), 400, "unknown_user")
    assert_error(ana.post(BLOCKS, {"username": "bot-hard"}, "json"), 400, "unknown_user")
    assert_error(ana.post(BLOCKS, {"username": "ana"}, "json"), 400, "cannot_block_self")
    assert_error(ana.post(BLOCKS, {"username": ["ben"]}, "json"), 400, "invalid")
    assert_error(ana.delete(f"{BLOCKS}/nobody"), 404, "not_found")
    assert Block.objects.count() == 0


def test_a_block_ends_the_friendship_and_the_requests_and_someone_blocked_may_block_back(
    people,
):
    ana, ben, cora, _ = people
    befriend(ana, ben)
    ask(cora, "ana", 201)
    block(ben, "ana")
    block(ana, "cora")
    assert Friendship.objects.count() == 0
    assert listed(ana) == {"friends": [], "received": [], "sent": []}
    block(ana, "ben", 201)  # blocked by ben, and blocking him too: nothing tells her either way
    # Unblocking brings nothing back, and the other's block still holds.
    ana.delete(f"{BLOCKS}/ben")
    assert_error(ana.post(FRIENDS, {"username": "ben"}, "json"), 400, "unknown_user")
    ben.delete(f"{BLOCKS}/ana")
    assert ask(ana, "ben", 201)["state"] == "sent"


def test_a_blocked_person_is_refused_a_seat_by_name_as_a_name_nobody_has(people):
    ana, ben, cora, _ = people
    block(ana, "ben")

    def invite(client, name):
        seats = [{"kind": "user"}, {"kind": "user", "username": name}, {"kind": "open"}]
        return client.post(TABLES, {"rules": QUICK, "seats": seats}, "json")

    unknown = assert_error(invite(ben, "nobody"), 400, "unknown_user")
    for client, name in ((ben, "ana"), (ana, "ben")):
        refused = assert_error(invite(client, name), 400, "unknown_user")
        assert refused == {**unknown, "detail": unknown["detail"].replace("nobody", name)}
    assert invite(cora, "ana").status_code == 201
    ana.delete(f"{BLOCKS}/ben")
    assert invite(ben, "ana").status_code == 201


def test_chat_hides_each_from_the_other_both_ways_and_mutes_stay(people):
    ana, ben, cora, _ = people
    game_id = start_game([ana, ben, cora], QUICK)
    url = f"/api/v1/games/{game_id}/chat"
    for client, text in ((ana, "from ana"), (ben, "from ben"), (cora, "from cora")):
        assert client.post(url, {"text": text}, "json").status_code == 201
    assert cora.put("/api/v1/me/mutes/ana").status_code == 200
    block(ana, "ben")

    def read(client) -> list[str]:
        return [m["text"] for m in client.get(url).json()["messages"]]

    assert read(ana) == ["from ana", "from cora"]
    assert read(ben) == ["from ben", "from cora"]
    assert read(cora) == ["from ben", "from cora"]  # her mute of ana, as before
    assert Mute.objects.count() == 1
    ana.delete(f"{BLOCKS}/ben")
    assert read(ana) == ["from ana", "from ben", "from cora"]


def test_the_matchmakers_selectors(people):
    ana, ben, cora, dan = people
    ids = [c.user.pk for c in people]
    befriend(ana, ben)
    befriend(ana, cora)
    ask(dan, "ana", 201)
    block(ben, "cora")
    block(dan, "ben")
    block(cora, "ben")  # both ways: still one pair
    with CaptureQueriesContext(connection) as captured:
        pairs = selectors.blocked_pairs(ids)
    assert len(captured) == 1
    assert pairs == {
        frozenset({ben.user.pk, cora.user.pk}),
        frozenset({ben.user.pk, dan.user.pk}),
    }
    assert selectors.blocked_pairs([ana.user.pk, ben.user.pk, cora.user.pk]) == {
        frozenset({ben.user.pk, cora.user.pk})
    }
    assert selectors.blocked_between(cora.user.pk, ben.user.pk)
    assert selectors.blocked_between(ben.user.pk, dan.user.pk)
    assert not selectors.blocked_between(ana.user.pk, ben.user.pk)
    assert selectors.are_friends(ben.user.pk, ana.user.pk)
    assert not selectors.are_friends(ana.user.pk, dan.user.pk)  # a request only
    assert selectors.friend_ids(ana.user.pk) == {ben.user.pk, cora.user.pk}
    assert selectors.friend_ids(dan.user.pk) == set()


def test_a_body_that_is_not_json_is_refused_with_415(people):
    ana = people[0]
    for url in (FRIENDS, BLOCKS):
        response = ana.post(url, "username=ben", content_type="text/plain")
        assert_error(response, 415, "unsupported_media_type")
