"""GET /games/{id}/stream against a real ASGI server: three players follow a whole match."""

from __future__ import annotations

import json
import random

import psycopg
from django.conf import settings

from accounts.tasks import settle_match_now
from games.models import Event
from ops.ensure_db import server_params
from tests.api.games_support import card_strings, secrets, states_by_version
from tests.live.support import Live, SseReader

MAX_COMMANDS = 3000


def stream_path(game_id: str, suffix: str = "") -> str:
    return f"/api/v1/games/{game_id}/stream{suffix}"


def test_three_players_stream_a_whole_match(live: Live) -> None:
    players = [live.player() for _ in range(3)]
    game_id = live.table(players)
    readers = [live.stream(stream_path(game_id), p) for p in players]
    for reader in readers:
        assert reader.status == 200
    streamed: list[list[bytes]] = [[], [], []]  # per seat: each event frame's data
    version = players[0].http.get(f"/api/v1/games/{game_id}").json()["version"]
    before = 0
    commands = 0
    while True:
        # Every seat's stream reaches the version; its events are /events' items, byte for byte.
        for seat, reader in enumerate(readers):
            frames = reader.until_view(version)
            events = [f for f in frames if f.id is not None]
            assert [f.id for f in events] == list(range(before + 1, version + 1)), seat
            body = players[seat].http.get(
                f"/api/v1/games/{game_id}/events", params={"after": before}
            )
            items = body.json()["events"]
            assert [i["seq"] for i in items] == [f.id for f in events]
            for frame, item in zip(events, items, strict=True):
                assert frame.data in body.content  # the very bytes of /events
                assert json.loads(frame.data) == item
                assert frame.event == item["type"]
                streamed[seat].append(frame.data)
            view = frames[-1].json
            assert view["seat"] == seat and "server_time" in view
            assert (
                view["legal_commands"]
                == (players[seat].http.get(f"/api/v1/games/{game_id}").json()["legal_commands"])
            )
        before = version
        result = live.play_one(players, game_id)
        if result is None:
            break
        commands += 1
        assert commands < MAX_COMMANDS
        version = result["version"]

    # Not settled yet (no worker here): the streams stay open until the settlement.
    assert not any(r.ended.wait(0.3) for r in readers)
    settle_match_now(str(game_id))  # what the settle_match task does; its NOTIFY wakes them
    for reader in readers:
        frames = reader.until_view(version)
        assert frames[-1].json["settled"] is True
        end = reader.next()
        assert (end.event, end.json) == ("end", {"reason": "settled"})
        assert reader.ended.wait(5), "the stream did not close after the settlement"

    # No card a seat may not see appears in the bytes it was streamed while the match ran.
    rows = list(
        Event.objects.filter(game_id=game_id).order_by("seq").values_list("data", flat=True)
    )
    states = states_by_version(rows)
    scanned = 0
    for seat, reader in enumerate(readers):
        for frame in reader.all:
            if frame.data is None:
                continue
            at = frame.id if frame.id is not None else frame.json.get("version")
            if at is None or states[at] is None or states[at].phase == "match_over":
                continue
            leaked = set(card_strings(frame.json)) & secrets(states[at], seat)
            assert not leaked, (seat, frame.raw[:300], leaked)
            scanned += 1
    assert scanned > 3 * commands


def test_reconnecting_at_random_points_loses_and_repeats_nothing(live: Live) -> None:
    rng = random.Random(11)
    players = [live.player() for _ in range(3)]
    game_id = live.table(
        players, rules={"preset": "standard", "wins_to_match": 5, "turn_seconds": 0}
    )
    reader_of = players[1]
    got: list[tuple[int, str, bytes]] = []
    last = 0
    for point in range(20):
        headers = {"Last-Event-ID": str(last)} if point else {}
        reader = live.stream(stream_path(game_id), reader_of, headers)
        assert reader.status == 200
        # Moves while connected, then leave in the middle of whatever arrives.
        for _ in range(rng.randint(0, 4)):
            assert live.play_one(players, game_id) is not None
        for _ in range(rng.randint(1, 12)):
            try:
                frame = reader.next(timeout=0.3)
            except AssertionError:
                break
            if frame.id is not None:
                got.append((frame.id, frame.event or "", frame.data or b""))
                last = frame.id
        reader.close()
        # Moves while disconnected.
        for _ in range(rng.randint(0, 3)):
            assert live.play_one(players, game_id) is not None
    version = players[0].http.get(f"/api/v1/games/{game_id}").json()["version"]
    reader = live.stream(stream_path(game_id), reader_of, {"Last-Event-ID": str(last)})
    for frame in reader.until_view(version):
        if frame.id is not None:
            got.append((frame.id, frame.event or "", frame.data or b""))
    body = reader_of.http.get(f"/api/v1/games/{game_id}/events")
    items = body.json()["events"]
    assert [seq for seq, _, _ in got] == list(range(1, version + 1))  # none lost, none twice
    assert [i["seq"] for i in items] == list(range(1, version + 1))
    for (seq, event, data), item in zip(got, items, strict=True):
        assert data in body.content and json.loads(data) == item and event == item["type"], seq


def test_resume_with_after_and_staff_reader(live: Live) -> None:
    players = [live.player() for _ in range(3)]
    game_id = live.table(players)
    for _ in range(3):
        live.play_one(players, game_id)
    version = players[0].http.get(f"/api/v1/games/{game_id}").json()["version"]
    reader = live.stream(stream_path(game_id, "?after=2"), players[2])
    frames = reader.until_view(version)
    assert [f.id for f in frames if f.id is not None] == list(range(3, version + 1))
    staff = live.player(is_staff=True)
    reader = live.stream(stream_path(game_id, f"?after={version}"), staff)
    (view,) = reader.until_view(version)
    assert view.json["seat"] is None and view.json["view"]["hand"] == []


def test_a_stream_survives_the_loss_of_the_listen_connection(live: Live) -> None:
    players = [live.player() for _ in range(3)]
    game_id = live.table(players)
    version = players[0].http.get(f"/api/v1/games/{game_id}").json()["version"]
    reader = live.stream(stream_path(game_id), players[0])
    reader.until_view(version)
    db = settings.DATABASES["default"]
    with psycopg.connect(**server_params(db, connect_timeout=5), autocommit=True) as conn:
        killed = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'tongits-live-listener' AND datname = %s",
            [db["NAME"]],
        ).fetchall()
    assert killed, "no listener connection found"
    # Committed while the listener is away or reconnecting: still delivered, once.
    result = live.play_one(players, game_id)
    frames = reader.until_view(result["version"], timeout=15)
    assert [f.id for f in frames if f.id is not None] == list(
        range(version + 1, result["version"] + 1)
    )


def test_stream_of_another_reader_is_independent(live: Live) -> None:
    """Two streams of one seat get the same bytes (one shared read, rendered once per seat)."""
    players = [live.player() for _ in range(3)]
    game_id = live.table(players)
    a = live.stream(stream_path(game_id), players[0])
    b = SseReader(live.url + stream_path(game_id), {"Authorization": f"Token {players[0].token}"})
    live.readers.append(b)
    result = live.play_one(players, game_id)
    fa = [f.raw for f in a.until_view(result["version"]) if f.id is not None]
    fb = [f.raw for f in b.until_view(result["version"]) if f.id is not None]
    assert fa == fb and fa
