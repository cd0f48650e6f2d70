"""A block on a real server's game streams: neither of the two receives the other's chat
messages live, both ways, while the third player receives both (docs/friends.md)."""

from __future__ import annotations

from tests.live.support import Live
from tests.live.test_chat_live import chat_events


def test_two_people_kept_apart_by_a_block_miss_each_others_chat_live(live: Live) -> None:
    ana, ben, cora = live.player(), live.player(), live.player()
    game_id = live.table([ana, ben, cora])
    blocked = ben.http.post("/api/v1/me/blocks", json={"username": ana.user.username})
    assert blocked.status_code == 201, blocked.text
    url = f"/api/v1/games/{game_id}/stream"
    streams = {p.user.pk: live.stream(url, p) for p in (ana, ben, cora)}
    for reader in streams.values():
        assert reader.next().event in ("game_started", "view", "round_started")
    chat = f"/api/v1/games/{game_id}/chat"

    for player, text in ((ana, "from ana"), (ben, "from ben"), (cora, "from cora")):
        response = player.http.post(chat, json={"text": text})
        assert response.status_code == 201, response.text
    # Each stream's chat frames in order: the other of the pair's message is never among them.
    assert [f.json["text"] for f in chat_events(streams[ana.user.pk], 2)] == [
        "from ana",
        "from cora",
    ]
    assert [f.json["text"] for f in chat_events(streams[ben.user.pk], 2)] == [
        "from ben",
        "from cora",
    ]
    assert [f.json["text"] for f in chat_events(streams[cora.user.pk], 3)] == [
        "from ana",
        "from ben",
        "from cora",
    ]
