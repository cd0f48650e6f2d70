"""Presence on the real server: a friend's stream opening and closing, a match of theirs, their
hiding it and the friendship's end reach the other's /me/stream as ``presence`` frames, and
nobody else's (docs/friends.md)."""

from __future__ import annotations

from games import lobby
from tests.conftest import TEST_CACHE_URL
from tests.live.support import Live, SseReader

FRIENDS = "/api/v1/me/friends"
BOTS = [{"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}]
QUICK = {"preset": "standard", "wins_to_match": 1, "turn_seconds": 0}


def _next_presence(reader: SseReader, timeout: float = 10.0) -> dict:
    while True:
        frame = reader.next(timeout)
        if frame.event == "presence":
            return frame.json


def _presence_of(player, username: str) -> dict | None:
    answer = player.http.get(FRIENDS)
    assert answer.status_code == 200, answer.text
    return next(f for f in answer.json()["friends"] if f["username"] == username)["presence"]


def test_a_friend_coming_going_playing_hiding_and_leaving_reaches_the_friends_stream(
    live: Live,
) -> None:
    ana, ben, stranger = live.player(), live.player(), live.player()
    for asker, asked in ((ana, ben), (ben, ana)):
        answer = asker.http.post(FRIENDS, json={"username": asked.user.username})
        assert answer.status_code == 201, answer.text
    bens = live.stream("/api/v1/me/stream", ben)
    theirs = live.stream("/api/v1/me/stream", stranger)
    assert bens.next().event == "games" and theirs.next().event == "games"
    name = ana.user.username

    anas = live.stream("/api/v1/me/stream", ana)
    assert anas.next().event == "games"
    frame = _next_presence(bens)
    assert (frame["username"], frame["user_id"], frame["friend"]) == (name, ana.user.pk, True)
    assert frame["presence"] == {"status": "online", "game_id": None, "last_seen": None}
    assert _presence_of(ben, name)["status"] == "online"

    anas.close()
    frame = _next_presence(bens)
    assert frame["presence"]["status"] == "offline" and frame["presence"]["last_seen"]
    assert _presence_of(ben, name) == frame["presence"]

    game = lobby.table_create(
        user=ana.user, rules=QUICK, seats=[{"kind": "user"}, *BOTS], visibility="public"
    )
    frame = _next_presence(bens)
    assert frame["presence"] == {"status": "playing", "game_id": str(game.pk), "last_seen": None}

    hidden = ana.http.patch("/api/v1/me", json={"show_presence": False})
    assert hidden.status_code == 200, hidden.text
    frame = _next_presence(bens)
    assert (frame["username"], frame["friend"], frame["presence"]) == (name, True, None)

    assert ana.http.delete(f"{FRIENDS}/{ben.user.username}").status_code == 204
    frame = _next_presence(bens)
    assert (frame["username"], frame["friend"], frame["presence"]) == (name, False, None)
    assert all(f.event != "presence" for f in theirs.all)


def test_on_redis_a_friend_on_another_machine_hears_the_stream_come_and_go(
    live: Live, live_servers
) -> None:
    """Two servers sharing their stream places in Redis, as two machines do: Ana's stream on
    one, Ben's on the other."""
    ana, ben = live.player(), live.player()
    for asker, asked in ((ana, ben), (ben, ana)):
        answer = asker.http.post(FRIENDS, json={"username": asked.user.username})
        assert answer.status_code == 201, answer.text
    with (
        live_servers({"CACHE_URL": TEST_CACHE_URL}) as one,
        live_servers({"CACHE_URL": TEST_CACHE_URL}) as other,
    ):
        bens = SseReader(f"{other}/api/v1/me/stream", {"Authorization": f"Token {ben.token}"})
        anas = SseReader(f"{one}/api/v1/me/stream", {"Authorization": f"Token {ana.token}"})
        live.readers += [bens, anas]
        assert bens.next().event == "games" and anas.next().event == "games"
        assert _next_presence(bens)["presence"]["status"] == "online"
        anas.close()
        assert _next_presence(bens)["presence"]["status"] == "offline"
        bens.close()
