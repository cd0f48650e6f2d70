"""Friends through the API: asking and accepting by the same call, the lists either way, ending a
friendship or a request, the answers for names nobody has, bots and oneself, the limits, the
friend_request notification, presence in the list and who sees it, the export and an account's
deletion (docs/friends.md)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts import services as account_services
from games import lobby, players
from games.models import Game
from notifications.models import Kind, Notification
from ops import stream_slots
from social import presence
from social.models import Block, Friendship, Presence
from tests.api.games_support import assert_error
from tests.conftest import DEFAULT_PASSWORD
from tests.social.support import BLOCKS, FRIENDS, ask, befriend, block, listed, names

pytestmark = pytest.mark.usefixtures("fast_hashing")
BOTS = [{"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}]


@pytest.fixture
def fast_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def people(auth_client_factory, user_factory):
    """Ana, Ben and Cora, signed in."""
    return [
        auth_client_factory(user_factory(username=name, display_name=name.title()))
        for name in ("ana", "ben", "cora")
    ]


@pytest.fixture
def no_watchers(monkeypatch) -> None:
    """Streams taken by the test itself are looked at by the test (``presence.look``)."""
    monkeypatch.setattr(stream_slots, "WATCHERS", [])


# ---------------------------------------------------------------- asking and accepting


def test_the_same_call_by_the_other_person_accepts_the_request(people):
    ana, ben, _ = people
    sent = ask(ana, "BEN", 201)  # any case
    assert (sent["username"], sent["state"], sent["presence"]) == ("ben", "sent", None)
    assert sent["display_name"] == "Ben" and sent["avatar"]
    assert names(listed(ana)["sent"]) == ["ben"] and listed(ana)["friends"] == []
    received = listed(ben)["received"]
    assert names(received) == ["ana"] and received[0]["state"] == "received"
    assert received[0]["user_id"] == ana.user.pk and received[0]["presence"] is None

    accepted = ask(ben, "ana", 201)
    assert accepted["state"] == "friends" and accepted["presence"]["status"] == "offline"
    for me, other in ((ana, "ben"), (ben, "ana")):
        mine = listed(me)
        assert names(mine["friends"]) == [other] and mine["sent"] == mine["received"] == []
    assert Friendship.objects.count() == 1


def test_asking_again_or_a_friend_changes_nothing_and_answers_200_with_the_state(people):
    ana, ben, _ = people
    ask(ana, "ben", 201)
    assert ask(ana, "ben", 200)["state"] == "sent"
    ask(ben, "ana", 201)
    assert ask(ana, "ben", 200)["state"] == "friends"
    assert ask(ben, "ana", 200)["state"] == "friends"
    assert Notification.objects.filter(kind=Kind.FRIEND_REQUEST).count() == 1


def test_a_request_tells_the_person_asked_who_asks(people):
    ana, ben, _ = people
    ask(ana, "ben", 201)
    inbox = ben.get("/api/v1/me/notifications").json()["results"]
    assert [(n["kind"], n["data"]) for n in inbox] == [
        ("friend_request", {"by_user_id": ana.user.pk})
    ]
    assert inbox[0]["body"] == "ana wants to be your friend"
    assert ana.get("/api/v1/me/notifications").json()["results"] == []


def test_delete_ends_a_friendship_withdraws_or_declines_a_request(people):
    ana, ben, cora = people
    befriend(ana, ben)
    ask(ana, "cora", 201)
    ask(cora, "ben", 201)
    assert ana.delete(f"{FRIENDS}/ben").status_code == 204
    assert ana.delete(f"{FRIENDS}/cora").status_code == 204  # withdrawn
    assert ben.delete(f"{FRIENDS}/CORA").status_code == 204  # declined
    assert ana.delete(f"{FRIENDS}/ben").status_code == 204  # nothing left: the same answer
    assert Friendship.objects.count() == 0
    assert listed(ben) == {"friends": [], "received": [], "sent": []}
    assert_error(ana.delete(f"{FRIENDS}/nobody-here"), 404, "not_found")
    # A request declined may be sent again, and tells them again.
    ask(cora, "ben", 201)
    from_cora = Notification.objects.filter(user=ben.user, data__by_user_id=cora.user.pk)
    assert from_cora.count() == 2


def test_names_nobody_has_bots_and_oneself_are_refused(people):
    ana, _, _ = people
    body = assert_error(ana.post(FRIENDS, {"username": "nobody"}, "json"), 400, "unknown_user")
    assert body["detail"] == "No user named 'nobody'."
    assert_error(ana.post(FRIENDS, {"username": "bot-easy"}, "json"), 400, "unknown_user")
    assert_error(ana.post(FRIENDS, {"username": "ANA"}, "json"), 400, "cannot_befriend_self")
    for bad in ({}, {"username": ""}, {"username": 7}, {"username": "x" * 151}):
        assert_error(ana.post(FRIENDS, bad, "json"), 400, "invalid")
    assert Friendship.objects.count() == 0


def test_a_block_either_way_is_answered_as_a_name_nobody_has(people, user_factory):
    ana, ben, cora = people
    block(ben, "ana")
    block(ana, "cora")
    unknown = ana.post(FRIENDS, {"username": "nobody"}, "json").json()
    for client, name in ((ana, "ben"), (ben, "ana"), (ana, "cora"), (cora, "ana")):
        body = assert_error(client.post(FRIENDS, {"username": name}, "json"), 400, "unknown_user")
        assert body == {**unknown, "detail": unknown["detail"].replace("nobody", name)}
    assert Friendship.objects.count() == 0 and Notification.objects.count() == 0


def test_a_deleted_account_is_a_name_nobody_has(people):
    ana, ben, _ = people
    account_services.account_delete(user=ben.user, password=DEFAULT_PASSWORD)
    assert_error(ana.post(FRIENDS, {"username": "ben"}, "json"), 400, "unknown_user")


# ---------------------------------------------------------------- limits


def test_the_friends_limit_holds_for_both_people_of_a_friendship(
    people, auth_client_factory, settings
):
    settings.TONGITS_MAX_FRIENDS = 1
    ana, ben, cora = people
    dave = auth_client_factory()
    ask(ben, dave.user.username, 201)
    befriend(ana, ben)
    body = assert_error(ana.post(FRIENDS, {"username": "cora"}, "json"), 409, "too_many_friends")
    assert body["detail"] == "You have the most friends there may be (1): remove one first."
    ask(cora, "ana", 201)  # a request to someone with no room left is still sent...
    assert_error(ana.post(FRIENDS, {"username": "cora"}, "json"), 409, "too_many_friends")
    body = assert_error(dave.post(FRIENDS, {"username": "ben"}, "json"), 409, "too_many_friends")
    assert body["detail"] == "ben has the most friends there may be (1)."
    ana.delete(f"{FRIENDS}/ben")
    assert ask(ana, "cora", 201)["state"] == "friends"  # ...and accepted once there is room
    assert ask(dave, "ben", 201)["state"] == "friends"


def test_the_requests_limit_holds_for_requests_sent_and_received(
    people, auth_client_factory, settings
):
    settings.TONGITS_MAX_FRIEND_REQUESTS = 1
    ana, ben, cora = people
    ask(ana, "ben", 201)
    assert_error(ana.post(FRIENDS, {"username": "cora"}, "json"), 409, "too_many_friend_requests")
    body = assert_error(
        cora.post(FRIENDS, {"username": "ben"}, "json"), 409, "too_many_friend_requests"
    )
    assert "ben" in body["detail"]
    ask(ben, "ana", 201)  # accepting is not a new request
    assert ask(ana, "cora", 201)["state"] == "sent"


# ---------------------------------------------------------------- presence in the list


def test_friends_see_presence_and_nobody_sees_it_once_hidden(people, no_watchers):
    ana, ben, cora = people
    befriend(ana, ben)
    ask(cora, "ben", 201)
    assert listed(ana)["friends"][0]["presence"] == {
        "status": "offline",
        "game_id": None,
        "last_seen": None,
    }
    slot = stream_slots.take(ben.user.pk)
    assert presence.look(ben.user.pk) is True
    assert listed(ana)["friends"][0]["presence"]["status"] == "online"
    assert listed(ben)["received"][0]["presence"] is None  # a request shows none
    stream_slots.release(slot)
    assert presence.look(ben.user.pk) is True
    seen = listed(ana)["friends"][0]["presence"]
    assert seen["status"] == "offline" and seen["last_seen"] is not None

    response = ben.patch("/api/v1/me", {"show_presence": False}, "json")
    assert response.status_code == 200 and response.json()["show_presence"] is False
    assert listed(ana)["friends"][0]["presence"] is None
    assert ben.get("/api/v1/me").json()["show_presence"] is False
    assert_error(ben.patch("/api/v1/me", {"show_presence": 0}, "json"), 400, "invalid")
    ben.patch("/api/v1/me", {"show_presence": True}, "json")
    assert listed(ana)["friends"][0]["presence"]["status"] == "offline"


@pytest.mark.parametrize("visibility", ["public", "private"])
def test_a_friend_at_a_table_in_play_is_playing_with_its_id_only_when_public(people, visibility):
    ana, ben, _ = people
    befriend(ana, ben)
    game = lobby.table_create(user=ben.user, seats=[{"kind": "user"}, *BOTS], visibility=visibility)
    assert game.status == Game.Status.ACTIVE
    shown = listed(ana)["friends"][0]["presence"]
    assert shown["status"] == "playing"
    assert shown["game_id"] == (str(game.pk) if visibility == "public" else None)


def test_the_list_costs_the_same_queries_for_many_friends_as_for_few(
    people, user_factory, no_watchers
):
    ana, ben, cora = people
    befriend(ana, ben)
    befriend(ana, cora)
    stream_slots.take(ben.user.pk)

    def queries() -> int:
        players.clear()  # names looked up each time, not remembered from the last
        with CaptureQueriesContext(connection) as captured:
            listed(ana)
        return len(captured)

    few = queries()
    others = [user_factory() for _ in range(40)]
    Friendship.objects.bulk_create(
        Friendship(
            user_low_id=min(ana.user.pk, other.pk),
            user_high_id=max(ana.user.pk, other.pk),
            requested_by_id=other.pk,
            accepted_at=timezone.now(),
        )
        for other in others
    )
    lobby.table_create(user=others[0], seats=[{"kind": "user"}, *BOTS])
    assert queries() == few
    statuses = [f["presence"]["status"] for f in listed(ana)["friends"]]
    assert len(statuses) == 42 and sorted(set(statuses)) == ["offline", "online", "playing"]


# ---------------------------------------------------------------- your data


def test_the_export_lists_friends_requests_and_blocks(people):
    ana, ben, cora = people
    befriend(ana, ben)
    ask(cora, "ana", 201)
    block(ana, "cora")  # ends cora's request
    ask(ana, "ben", 200)
    section = ana.get("/api/v1/me/export").json()["social"]
    assert section["show_presence"] is True
    assert [(f["username"], f["user_id"]) for f in section["friends"]] == [("ben", ben.user.pk)]
    assert section["requests_received"] == section["requests_sent"] == []
    assert [b["username"] for b in section["blocks"]] == ["cora"]


def test_an_accounts_deletion_removes_its_friendships_requests_blocks_and_presence(people):
    ana, ben, cora = people
    befriend(ana, ben)
    ask(ana, "cora", 201)
    block(cora, "ben")
    block(ana, "cora")
    presence.touch([ana.user.pk])
    account_services.account_delete(user=ana.user, password=DEFAULT_PASSWORD)
    assert Friendship.objects.count() == 0
    assert list(Block.objects.values_list("user__username", "blocked__username")) == [
        ("cora", "ben")
    ]
    assert not Presence.objects.filter(user=ana.user).exists()
    assert listed(ben)["friends"] == []
    assert ben.get(BLOCKS).json()["results"] == []
