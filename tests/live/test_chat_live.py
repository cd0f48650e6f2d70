"""Table chat on a real server's game streams: a message reaches the other players' streams at
once, never a muter's, and a message staff hide is taken back (``chat_hidden``)."""

from __future__ import annotations

import time

from tests.live.support import Live, SseReader


def chat_events(reader: SseReader, count: int, timeout: float = 10.0) -> list:
    """The next ``count`` chat frames of a stream (its events and views are skipped)."""
    got: list = []
    deadline = time.monotonic() + timeout
    while len(got) < count:
        frame = reader.next(max(0.1, deadline - time.monotonic()))
        if frame.event in ("chat", "chat_hidden"):
            assert frame.id is None  # Last-Event-ID stays the game's seq
            got.append(frame)
    return got


def test_a_message_reaches_the_other_players_not_a_muter_and_a_hidden_one_is_withdrawn(
    live: Live,
) -> None:
    ana, ben, cora = live.player(), live.player(), live.player()
    moderator = live.player(is_staff=True)
    game_id = live.table([ana, ben, cora])
    assert cora.http.put(f"/api/v1/me/mutes/{ana.user.username}").status_code == 200
    url = f"/api/v1/games/{game_id}/stream"
    streams = {p.user.pk: live.stream(url, p) for p in (ana, ben, cora)}
    for reader in streams.values():
        assert reader.next().event in ("game_started", "view", "round_started")
    chat = f"/api/v1/games/{game_id}/chat"

    sent = time.monotonic()
    response = ana.http.post(chat, json={"text": "hello table"})
    assert response.status_code == 201, response.text
    hello = response.json()
    (frame,) = chat_events(streams[ben.user.pk], 1, timeout=5)
    assert time.monotonic() - sent < 2.0
    assert frame.event == "chat" and frame.json == hello
    assert frame.json["text"] == "hello table" and frame.json["username"] == ana.user.username
    (own,) = chat_events(streams[ana.user.pk], 1)  # the writer's other streams get it too
    assert own.json["id"] == hello["id"]

    # Cora mutes Ana: Ben's message is the first chat frame her stream sends.
    response = ben.http.post(chat, json={"text": "hi both"})
    assert response.status_code == 201, response.text
    (first,) = chat_events(streams[cora.user.pk], 1)
    assert first.json["text"] == "hi both"
    assert [f.json["text"] for f in chat_events(streams[ana.user.pk], 1)] == ["hi both"]
    assert [f.json["text"] for f in chat_events(streams[ben.user.pk], 1)] == ["hi both"]

    # Staff hide Ana's message: the streams that got it take it back.
    response = moderator.http.post(f"{chat}/{hello['id']}/hide", json={"reason": "test"})
    assert response.status_code == 200, response.text
    (withdrawn,) = chat_events(streams[ben.user.pk], 1)
    assert withdrawn.event == "chat_hidden" and withdrawn.json == {"id": hello["id"]}
    assert chat_events(streams[ana.user.pk], 1)[0].json == {"id": hello["id"]}
    # Later messages still flow. Cora never got Ana's message: its take-back may reach her
    # (a client ignores an id it does not hold), never the message.
    response = ben.http.post(chat, json={"text": "moving on"})
    assert response.status_code == 201, response.text
    got = chat_events(streams[cora.user.pk], 2)
    assert [f.event for f in got] == ["chat_hidden", "chat"]
    assert got[1].json["text"] == "moving on"
    assert all(
        f.json.get("text") != "hello table" for f in streams[cora.user.pk].all if f.event == "chat"
    )
    assert [f.json["text"] for f in chat_events(streams[ben.user.pk], 1)] == ["moving on"]
    listed = ben.http.get(chat).json()["messages"]
    assert [m["text"] for m in listed] == ["hi both", "moving on"]
