"""The table chat through the API and its services: the text's limits, the channels, the rate
limit, mutes, reports, staff hides (and the log of who), the keep time after the match, the
export and an account's deletion (docs/chat.md)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import DatabaseError, transaction

from chat import services
from chat.models import Hidden, Message, MessageText, Mute, Report
from games.models import Event, Game
from tests.api.games_support import (
    TABLES,
    assert_error,
    choose,
    get_view,
    post_command,
    start_game,
)
from tests.conftest import DEFAULT_PASSWORD

pytestmark = pytest.mark.usefixtures("fast_hashing")
QUICK = {"preset": "standard", "wins_to_match": 1, "turn_seconds": 0}


@pytest.fixture
def fast_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def chat_url(game_id: str, suffix: str = "") -> str:
    return f"/api/v1/games/{game_id}/chat{suffix}"


@pytest.fixture
def table(auth_client_factory):
    """Three players at a started table: (game id, [a, b, c])."""
    clients = [auth_client_factory() for _ in range(3)]
    return start_game(clients, QUICK), clients


@pytest.fixture
def staff(auth_client_factory, user_factory):
    return auth_client_factory(user_factory(is_staff=True))


def say(client, game_id: str, text: str, **body) -> dict:
    response = client.post(chat_url(game_id), {"text": text, **body}, "json")
    assert response.status_code == 201, response.content
    return response.json()


def texts(client, game_id: str, **query) -> list[str | None]:
    response = client.get(chat_url(game_id), query)
    assert response.status_code == 200, response.content
    return [m["text"] for m in response.json()["messages"]]


def finish(clients: list, game_id: str) -> None:
    payload = get_view(clients[0], game_id)
    for _ in range(3000):
        if payload["status"] == "finished":
            return
        client = clients[payload["view"]["turn"]]
        if payload["seat"] != payload["view"]["turn"]:
            payload = get_view(client, game_id)
        response = post_command(client, game_id, choose(payload), payload["version"])
        assert response.status_code == 200, response.content
        payload = response.json()["game"]
    raise AssertionError("the match does not end")


# ---------------------------------------------------------------- posting and reading


def test_players_write_and_read_the_players_channel_and_no_game_event_is_written(table):
    game_id, (a, b, c) = table
    version = Game.objects.get(pk=game_id).version
    events = Event.objects.filter(game_id=game_id).count()
    message = say(a, game_id, "  Good luck, all!  ")
    assert message["text"] == "Good luck, all!"  # stripped
    assert message["channel"] == "players" and message["username"] == a.user.username
    assert message["user_id"] == a.user.pk and message["hidden"] is None
    say(b, game_id, "you too")
    page = c.get(chat_url(game_id)).json()
    assert page["channels"] == ["players"] and page["writes"] == "players"
    assert page["closes_at"] is None and page["more"] is False
    assert [m["text"] for m in page["messages"]] == ["Good luck, all!", "you too"]
    assert texts(c, game_id, after=message["id"]) == ["you too"]
    # Chat changes no state: not one event, the hash chain and version as they were.
    game = Game.objects.get(pk=game_id)
    assert game.version == version and Event.objects.filter(game_id=game_id).count() == events


def test_who_may_not_read_the_game_may_not_chat_and_nothing_before_the_start(
    table, auth_client_factory
):
    game_id, (a, b, c) = table
    stranger = auth_client_factory()
    assert_error(stranger.post(chat_url(game_id), {"text": "hi"}, "json"), 403, "not_a_player")
    assert_error(stranger.get(chat_url(game_id)), 403, "not_a_player")
    seats = [{"kind": "user"}, {"kind": "open"}, {"kind": "open"}]
    waiting = a.post(TABLES, {"rules": QUICK, "seats": seats}, "json").json()["id"]
    assert_error(a.post(chat_url(waiting), {"text": "hi"}, "json"), 409, "not_started")
    assert_error(a.get(chat_url(waiting)), 409, "not_started")
    missing = "00000000-0000-4000-8000-000000000000"
    assert_error(a.get(chat_url(missing)), 404, "not_found")
    assert_error(a.post(chat_url(missing), {"text": "hi"}, "json"), 404, "not_found")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "x" * 201,
        "two\nlines",
        "tab\there",
        "bell\x07",
        "rtl\u202eoverride",
        "zw\u200bsp",
    ],
)
def test_empty_long_and_control_characters_are_refused(table, text):
    game_id, (a, _, _) = table
    body = assert_error(a.post(chat_url(game_id), {"text": text}, "json"), 400, "invalid")
    assert "text" in body["fields"]
    assert not Message.objects.filter(game_id=game_id).exists()


def test_the_limit_is_the_setting_and_counts_characters_after_stripping(table, settings):
    game_id, (a, _, _) = table
    assert len(say(a, game_id, " " + "é" * 200 + " ")["text"]) == 200
    settings.TONGITS_CHAT_MAX_LENGTH = 5
    assert_error(a.post(chat_url(game_id), {"text": "123456"}, "json"), 400, "invalid")
    say(a, game_id, "12345")
    assert_error(a.post(chat_url(game_id), {"text": 12345}, "json"), 400, "invalid")
    assert_error(a.post(chat_url(game_id), {}, "json"), 400, "invalid")
    assert_error(a.post(chat_url(game_id), {"text": "x", "channel": "all"}, "json"), 400, "invalid")
    assert_error(a.get(chat_url(game_id), {"after": "-1"}), 400, "invalid")


def test_players_may_not_write_to_the_spectators_and_staff_read_both(table, staff):
    game_id, (a, _, _) = table
    body = {"text": "psst", "channel": "spectators"}
    assert_error(a.post(chat_url(game_id), body, "json"), 403, "channel_not_allowed")
    say(a, game_id, "hello")
    page = staff.get(chat_url(game_id)).json()
    assert page["channels"] == ["players", "spectators"]
    assert [m["text"] for m in page["messages"]] == ["hello"]
    # Staff without a seat are not players; without spectator chat they write nowhere.
    assert page["writes"] is None
    assert_error(staff.post(chat_url(game_id), {"text": "hi"}, "json"), 403, "channel_not_allowed")


def test_chat_has_a_rate_limit_of_its_own(table, settings):
    game_id, (a, b, _) = table
    settings.TONGITS_THROTTLE_RATES = {**settings.TONGITS_THROTTLE_RATES, "chat": "2/m"}
    say(a, game_id, "one")
    say(a, game_id, "two")
    response = a.post(chat_url(game_id), {"text": "three"}, "json")
    body = assert_error(response, 429, "throttled")
    assert body["retry_after"] >= 1 and int(response["Retry-After"]) >= 1
    assert texts(a, game_id) == ["one", "two"]  # reading is not counted as chatting
    say(b, game_id, "mine counts apart")  # per user


# ---------------------------------------------------------------- mutes


def test_a_mute_withholds_one_way_everywhere_until_lifted(table):
    game_id, (a, b, c) = table
    name = b.user.username
    response = a.put(f"/api/v1/me/mutes/{name.upper()}")  # names ignore case
    assert response.status_code == 200, response.content
    assert response.json()["username"] == name
    assert a.put(f"/api/v1/me/mutes/{name}").status_code == 200  # again: nothing changes
    assert Mute.objects.filter(user=a.user).count() == 1
    assert [m["username"] for m in a.get("/api/v1/me/mutes").json()["results"]] == [name]
    say(b, game_id, "from b")
    say(a, game_id, "from a")
    assert texts(a, game_id) == ["from a"]  # the muter no longer gets b's
    assert texts(b, game_id) == ["from b", "from a"]  # b still reads a: a mute is one way
    assert texts(c, game_id) == ["from b", "from a"]
    assert a.delete(f"/api/v1/me/mutes/{name}").status_code == 204
    assert a.delete(f"/api/v1/me/mutes/{name}").status_code == 204
    assert texts(a, game_id) == ["from b", "from a"]
    assert a.get("/api/v1/me/mutes").json()["results"] == []
    assert_error(a.put(f"/api/v1/me/mutes/{a.user.username}"), 400, "cannot_mute_self")
    assert_error(a.put("/api/v1/me/mutes/nobody-at-all"), 404, "not_found")
    assert_error(a.delete("/api/v1/me/mutes/nobody-at-all"), 404, "not_found")


# ---------------------------------------------------------------- reports and hides


def test_a_message_is_reported_once_and_never_ones_own(table):
    game_id, (a, b, _) = table
    message = say(a, game_id, "rude words")
    url = chat_url(game_id, f"/{message['id']}/report")
    response = b.post(url, {"reason": "abuse"}, "json")
    assert response.status_code == 201, response.content
    assert response.json()["message_id"] == message["id"] and response.json()["reason"] == "abuse"
    assert_error(b.post(url, {}, "json"), 409, "already_reported")
    assert_error(a.post(url, {}, "json"), 400, "own_message")
    assert_error(b.post(url, {"reason": "boring"}, "json"), 400, "invalid")
    assert_error(b.post(chat_url(game_id, "/999999999/report"), {}, "json"), 404, "not_found")
    assert list(Report.objects.values_list("user_id", "reason")) == [(b.user.pk, "abuse")]


def test_staff_hide_a_message_the_log_keeps_who_and_nobody_else_may(table, staff):
    game_id, (a, b, c) = table
    kept = say(a, game_id, "fine")
    bad = say(a, game_id, "not fine")
    url = chat_url(game_id, f"/{bad['id']}/hide")
    assert_error(b.post(url, {}, "json"), 403, "permission_denied")
    response = staff.post(url, {"reason": "abuse"}, "json")
    assert response.status_code == 200, response.content
    hidden = response.json()["hidden"]
    assert hidden["by"] == staff.user.username and hidden["reason"] == "abuse"
    row = Hidden.objects.get(message_id=bad["id"])
    assert row.by_id == staff.user.pk and row.at is not None
    assert texts(b, game_id) == ["fine"] and texts(a, game_id) == ["fine"]  # withheld
    staff_view = staff.get(chat_url(game_id)).json()["messages"]
    assert [(m["id"], m["hidden"] is not None) for m in staff_view] == [
        (kept["id"], False),
        (bad["id"], True),
    ]
    assert_error(staff.post(url, {}, "json"), 409, "already_hidden")
    other = start_game([c, a, b], QUICK)
    assert_error(staff.post(chat_url(other, f"/{kept['id']}/hide"), {}, "json"), 404, "not_found")
    assert Message.objects.filter(pk=bad["id"]).exists()  # the log keeps the message


def test_the_log_is_append_only_in_the_database(table):
    game_id, (a, _, _) = table
    message = Message.objects.get(pk=say(a, game_id, "forever")["id"])
    for change in (
        lambda: Message.objects.filter(pk=message.pk).update(channel="spectators"),
        lambda: Message.objects.filter(pk=message.pk).delete(),
        lambda: MessageText.objects.filter(message=message).update(text="edited"),
    ):
        with pytest.raises(DatabaseError), transaction.atomic():
            change()
    services.hide(message, by=a.user, reason="test")
    with pytest.raises(DatabaseError), transaction.atomic():
        Hidden.objects.filter(message=message).delete()
    assert MessageText.objects.get(message=message).text == "forever"


def test_the_admin_lists_messages_and_its_hide_action_records_who(table, user_factory, client):
    game_id, (a, _, _) = table
    message = say(a, game_id, "spam spam")
    admin = user_factory(is_staff=True, is_superuser=True)
    client.force_login(admin)
    listing = client.get("/admin/chat/message/")
    assert listing.status_code == 200 and b"spam spam" in listing.content
    response = client.post(
        "/admin/chat/message/", {"action": "hide_messages", "_selected_action": [message["id"]]}
    )
    assert response.status_code == 302
    assert Hidden.objects.get(message_id=message["id"]).by_id == admin.pk
    assert client.get("/admin/chat/report/").status_code == 200
    assert client.get("/admin/chat/hidden/").status_code == 200
    assert client.get(f"/admin/chat/message/{message['id']}/change/").status_code == 200


# ---------------------------------------------------------------- after the match


def test_chat_stays_open_after_the_match_until_the_keep_time(table, settings):
    game_id, clients = table
    a = clients[0]
    say(a, game_id, "during")
    finish(clients, game_id)
    game = Game.objects.get(pk=game_id)
    assert game.finished_at is not None
    say(clients[1], game_id, "gg")
    page = a.get(chat_url(game_id)).json()
    assert [m["text"] for m in page["messages"]] == ["during", "gg"]
    closes = game.finished_at + timedelta(seconds=settings.TONGITS_CHAT_KEEP_SECONDS)
    assert page["closes_at"] == closes.isoformat().replace("+00:00", "Z")
    settings.TONGITS_CHAT_KEEP_SECONDS = 0  # the keep time is over
    assert_error(a.get(chat_url(game_id)), 409, "chat_closed")
    assert_error(a.post(chat_url(game_id), {"text": "late"}, "json"), 409, "chat_closed")
    url = chat_url(game_id, f"/{Message.objects.first().pk}/report")
    assert_error(clients[1].post(url, {}, "json"), 409, "chat_closed")


# ---------------------------------------------------------------- export and deletion


def test_the_export_holds_my_messages_mutes_and_reports(table):
    game_id, (a, b, _) = table
    mine = say(a, game_id, "my words")
    theirs = say(b, game_id, "their words")
    a.put(f"/api/v1/me/mutes/{b.user.username}")
    a.post(chat_url(game_id, f"/{theirs['id']}/report"), {"reason": "spam"}, "json")
    response = a.get("/api/v1/me/export")
    assert response.status_code == 200, response.content
    chat = response.json()["chat"]
    assert [(m["id"], m["text"], m["game_id"]) for m in chat["messages"]] == [
        (mine["id"], "my words", game_id)
    ]
    assert chat["messages"][0]["hidden"] is False and chat["messages"][0]["channel"] == "players"
    assert [m["username"] for m in chat["mutes"]] == [b.user.username]
    assert [(r["message_id"], r["reason"]) for r in chat["reports"]] == [(theirs["id"], "spam")]


def test_deleting_an_account_removes_its_texts_and_the_log_keeps_that_it_wrote(table, staff):
    game_id, (a, b, c) = table
    gone = say(a, game_id, "remember me?")
    say(b, game_id, "still here")
    b.put(f"/api/v1/me/mutes/{a.user.username}")
    a.put(f"/api/v1/me/mutes/{c.user.username}")
    response = a.delete("/api/v1/me", {"password": DEFAULT_PASSWORD}, "json")
    assert response.status_code == 204, response.content
    assert Message.objects.filter(pk=gone["id"], user_id=a.user.pk).exists()
    assert not MessageText.objects.filter(message_id=gone["id"]).exists()
    assert MessageText.objects.filter(message__user=b.user).exists()
    assert not Mute.objects.filter(user_id=a.user.pk).exists()
    assert not Mute.objects.filter(muted_id=a.user.pk).exists()
    assert texts(c, game_id) == ["still here"]  # nothing left to show of it
    row = next(m for m in staff.get(chat_url(game_id)).json()["messages"] if m["id"] == gone["id"])
    assert row["text"] is None and row["username"] == "deleted player"
