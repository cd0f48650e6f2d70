"""Spectators on GET /games/{id}/stream against a real ASGI server: a whole match watched live
and with a delay (never a hidden card, never ahead of the delay), and the spectator count."""

from __future__ import annotations

import json
import time

import pytest

from accounts.tasks import settle_match_now
from games.models import Event
from tests.api.games_support import card_strings, secrets, states_by_version
from tests.live.support import RULES, TABLES, Live, Player

MAX_COMMANDS = 3000


def stream_path(game_id: str) -> str:
    return f"/api/v1/games/{game_id}/stream"


def watchable_table(live: Live, players: list[Player], **options) -> str:
    owner, *others = players
    seats = [{"kind": "user"}] + [{"kind": "user", "username": p.user.username} for p in others]
    response = owner.http.post(TABLES, json={"rules": RULES, "seats": seats, **options})
    assert response.status_code == 201, response.text
    game_id = response.json()["id"]
    for other in others:
        response = other.http.post(f"{TABLES}/{game_id}/invitation", json={"answer": "accept"})
        assert response.status_code == 200, response.text
    assert owner.http.post(f"{TABLES}/{game_id}/start").status_code == 200
    return game_id


@pytest.mark.parametrize("delay", [0, 4])
def test_a_spectator_streams_a_whole_match_and_never_a_hidden_card(live: Live, delay) -> None:
    players = [live.player() for _ in range(3)]
    watcher = live.player()
    game_id = watchable_table(live, players, visibility="public", spectator_delay=delay)
    version = live.view(players[0], game_id)["version"]
    seat_reader = live.stream(stream_path(game_id), players[0])
    reader = live.stream(stream_path(game_id), watcher)
    assert reader.status == 200 and seat_reader.status == 200
    got: list[int] = []
    commands = 0
    before = 0
    while True:
        # The spectator is exactly ``delay`` events behind (never a frame ahead of it); its
        # events are the very bytes /events gives it, which is behind by as much.
        shown = max(1, version - delay)
        if shown == before:  # nothing new to see yet: nothing is sent
            with pytest.raises(AssertionError, match="no frame"):
                reader.next(timeout=0.3)
            seat_reader.until_view(version)
            result = live.play_one(players, game_id)
            assert result is not None
            version = result["version"]
            continue
        before = shown
        frames = reader.until_view(shown)
        events = [f for f in frames if f.id is not None]
        got.extend(f.id for f in events)
        view = frames[-1].json
        assert view["seat"] is None and view["view"]["hand"] == [] and not view["legal_commands"]
        assert view["status"] == "active" and (not delay or view["turn_deadline"] is None)
        if events:
            body = watcher.http.get(
                f"/api/v1/games/{game_id}/events", params={"after": events[0].id - 1}
            )
            assert body.json()["version"] == shown
            for frame in events:
                assert frame.data in body.content
        seat_reader.until_view(version)  # the players' own streams are live
        result = live.play_one(players, game_id)
        assert result is not None
        commands += 1
        assert commands < MAX_COMMANDS
        version = result["version"]
        if result["game"]["status"] == "finished":
            break
    # The match is over: whatever was held back arrives, with everything revealed.
    frames = reader.until_view(version)
    got.extend(f.id for f in frames if f.id is not None)
    assert got == list(range(1, version + 1))
    assert "revealed" in frames[-1].json
    settle_match_now(str(game_id))
    frames = reader.until_view(version)
    assert frames[-1].json["settled"] is True
    end = reader.next()
    assert (end.event, end.json) == ("end", {"reason": "settled"})
    assert reader.ended.wait(5)

    rows = list(
        Event.objects.filter(game_id=game_id).order_by("seq").values_list("data", flat=True)
    )
    states = states_by_version(rows)
    scanned = 0
    # The frames sent with the first view of the finished match are revealed by design (the
    # events a delay held back come in that batch, before its view): only the frames up to the
    # last view of the running match are scanned.
    views = [f.json["status"] for f in reader.all if f.event == "view"]
    last_active = max(
        i for i, f in enumerate(reader.all) if f.event == "view" and f.json["status"] == "active"
    )
    before_the_end = reader.all[: last_active + 1]
    assert views[-1] == "finished" and len(before_the_end) < len(reader.all)
    for frame in before_the_end:
        if frame.data is None or frame.event == "end":
            continue
        at = frame.id if frame.id is not None else frame.json.get("version")
        if at is None or states[at] is None or states[at].phase == "match_over":
            continue
        leaked = set(card_strings(json.loads(frame.data))) & secrets(states[at], None)
        assert not leaked, (frame.raw[:300], leaked)
        scanned += 1
    assert scanned > commands


def test_the_spectators_are_counted_on_the_table(live: Live) -> None:
    players = [live.player() for _ in range(3)]
    watchers = [live.player() for _ in range(2)]
    game_id = watchable_table(live, players, visibility="public")

    def spectators(expected: int) -> dict:
        deadline = time.monotonic() + 12
        while True:
            table = players[0].http.get(f"{TABLES}/{game_id}").json()
            if table["spectators"] == expected or time.monotonic() > deadline:
                assert table["spectators"] == expected, table["spectators"]
                return table
            time.sleep(0.2)

    spectators(0)
    readers = [live.stream(stream_path(game_id), w) for w in watchers]
    readers.append(live.stream(stream_path(game_id), watchers[0]))
    player_reader = live.stream(stream_path(game_id), players[1])  # a player is not a spectator
    for reader in [*readers, player_reader]:
        reader.next()
    spectators(3)
    listed = players[0].http.get(TABLES, params={"watch": 1}).json()
    assert [(t["id"], t["spectators"]) for t in listed if t["id"] == game_id] == [(game_id, 3)]
    readers[0].close()
    spectators(2)
    for reader in readers[1:]:
        reader.close()
    spectators(0)


def test_a_private_tables_stream_is_for_its_players(live: Live) -> None:
    players = [live.player() for _ in range(3)]
    game_id = watchable_table(live, players)
    reader = live.stream(stream_path(game_id), live.player())
    assert reader.status == 403 and json.loads(reader.error_body)["code"] == "not_a_player"
