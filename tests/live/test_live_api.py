"""Errors before a stream, stream tickets, the long-poll of /events and the player's own feed,
all against the real ASGI server."""

from __future__ import annotations

import statistics
import threading
import time
from datetime import timedelta

import httpx
from django.utils import timezone

from accounts.tasks import settle_match_now
from games.live.models import StreamTicket
from tests.live.support import Live, Player

JSON = "application/json"


def assert_json_error(reader_or_response, status: int, code: str) -> dict:
    if isinstance(reader_or_response, httpx.Response):
        got_status, headers, body = (
            reader_or_response.status_code,
            reader_or_response.headers,
            reader_or_response.content,
        )
    else:
        got_status, headers, body = reader_or_response.status, {}, reader_or_response.error_body
    assert got_status == status, (got_status, body)
    if headers:
        assert headers["content-type"].startswith(JSON)
    parsed = httpx.Response(200, content=body).json()
    assert parsed["code"] == code and parsed["detail"], parsed
    return parsed


# ---------------------------------------------------------------- errors before the stream


def test_errors_come_as_json_before_any_stream(live: Live) -> None:
    players = [live.player() for _ in range(3)]
    game_id = live.table(players)
    path = f"/api/v1/games/{game_id}/stream"
    sse = {"Accept": "text/event-stream"}
    stranger = live.player()
    with httpx.Client(base_url=live.url, timeout=5) as anon:
        assert_json_error(stranger.http.get(path, headers=sse), 403, "not_a_player")
        bad = {**sse, "Authorization": "Token not-a-token"}
        assert_json_error(anon.get(path, headers=bad), 401, "authentication_failed")
        assert_json_error(anon.get(path, headers=sse), 401, "not_authenticated")
        assert_json_error(anon.get("/api/v1/me/stream", headers=sse), 401, "not_authenticated")
    me = players[0].http
    version = me.get(f"/api/v1/games/{game_id}").json()["version"]
    for value in ("abc", "-1", "1.5", "1e3", str(version + 1), "99999999999"):
        response = me.get(path, headers={**sse, "Last-Event-ID": value})
        assert_json_error(response, 400, "invalid_last_event_id")
    body = assert_json_error(
        me.get(path, params={"after": version + 1}, headers=sse), 400, "invalid_last_event_id"
    )
    assert body["version"] == version
    waiting = live.table([players[0], live.player(), live.player()], start=False)
    assert_json_error(me.get(f"/api/v1/games/{waiting}/stream", headers=sse), 409, "not_started")
    # The header wins over ?after= (an EventSource resends its first URL when it reconnects).
    reader = live.stream(f"{path}?after=0", players[0], {"Last-Event-ID": str(version)})
    (view,) = reader.until_view(version)
    assert view.event == "view"


def _ticket(player: Player, path: str) -> str:
    response = player.http.post(path)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["expires_in"] == 60
    return body["ticket"]


def test_a_ticket_works_once_within_60_seconds_for_its_stream_only(live: Live) -> None:
    players = [live.player() for _ in range(3)]
    game_id = live.table(players)
    other_game = live.table([players[0], live.player(), live.player()])
    path = f"/api/v1/games/{game_id}/stream"
    version = players[0].http.get(f"/api/v1/games/{game_id}").json()["version"]

    ticket = _ticket(players[0], f"{path}-ticket")
    reader = live.stream(f"{path}?ticket={ticket}")  # no Authorization header at all
    assert reader.status == 200
    assert reader.until_view(version)[-1].json["seat"] == 0
    again = live.stream(f"{path}?ticket={ticket}")
    assert_json_error(again, 401, "invalid_ticket")

    expired = _ticket(players[0], f"{path}-ticket")
    StreamTicket.objects.filter(used_at=None).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert_json_error(live.stream(f"{path}?ticket={expired}"), 401, "invalid_ticket")

    elsewhere = _ticket(players[0], f"/api/v1/games/{other_game}/stream-ticket")
    assert_json_error(live.stream(f"{path}?ticket={elsewhere}"), 401, "invalid_ticket")
    me_ticket = _ticket(players[0], "/api/v1/me/stream-ticket")
    assert_json_error(live.stream(f"{path}?ticket={me_ticket}"), 401, "invalid_ticket")
    me_reader = live.stream(
        f"/api/v1/me/stream?ticket={_ticket(players[0], '/api/v1/me/stream-ticket')}"
    )
    assert me_reader.status == 200 and me_reader.next().event == "games"

    stranger = live.player()
    response = stranger.http.post(f"{path}-ticket")
    assert_json_error(response, 403, "not_a_player")
    assert not StreamTicket.objects.filter(user=stranger.user).exists()
    # Only digests are stored, never a ticket itself.
    assert not StreamTicket.objects.filter(digest=ticket).exists()


# ---------------------------------------------------------------- long-poll


def test_long_poll_answers_at_once_within_100_ms_of_an_append_or_empty(live: Live) -> None:
    players = [live.player() for _ in range(3)]
    game_id = live.table(players)
    events = f"/api/v1/games/{game_id}/events"
    me = players[0].http
    version = me.get(f"/api/v1/games/{game_id}").json()["version"]

    started = time.monotonic()
    body = me.get(events, params={"after": 0, "wait": 10}).json()
    assert time.monotonic() - started < 2 and len(body["events"]) == version  # at once
    # A long-poll's answer carries the view as a stream's view frame does; a plain read not.
    assert "game" not in me.get(events, params={"after": 0}).json()
    game = me.get(f"/api/v1/games/{game_id}").json()
    game.pop("server_time")
    assert body["game"] == game and body["game"]["settled"] is False

    started = time.monotonic()
    body = me.get(events, params={"after": version, "wait": 1}).json()
    took = time.monotonic() - started
    assert body["events"] == [] and body["version"] == version and 0.9 <= took < 3, took

    response = me.get(events, params={"after": version, "wait": 31})
    assert_json_error(response, 400, "invalid")

    delays = []
    for _ in range(5):
        answer: dict = {}

        def poll(after: int = version, answer: dict = answer) -> None:
            response = me.get(events, params={"after": after, "wait": 20})
            answer["at"] = time.monotonic()
            answer["body"] = response.json()

        thread = threading.Thread(target=poll)
        thread.start()
        time.sleep(0.3)  # the poll is waiting
        assert "body" not in answer
        result = live.play_one(players, game_id)
        appended = time.monotonic()  # the append has committed: its response came back
        thread.join(10)
        assert [e["seq"] for e in answer["body"]["events"]] == list(
            range(version + 1, result["version"] + 1)
        )
        delays.append(answer["at"] - appended)
        view = answer["body"]["game"]
        assert view["version"] == answer["body"]["version"] == result["version"]
        assert view["view"] == me.get(f"/api/v1/games/{game_id}").json()["view"]
        version = result["version"]
    # Within 100 ms of the append (timed from the command's answer, which comes after the commit).
    assert statistics.median(delays) <= 0.1, delays
    assert max(delays) < 1.0, delays


# ---------------------------------------------------------------- the player's own feed


def test_me_games_lists_waiting_and_active_tables_my_turn_first(live: Live) -> None:
    me, a, b = (live.player() for _ in range(3))
    waiting = live.table([a, me, b], start=False)
    playing = live.table([me, a, b])
    body = me.http.get("/api/v1/me/games").json()
    assert "server_time" in body
    listed = {g["game_id"]: g for g in body["games"]}
    assert set(listed) == {waiting, playing}
    assert listed[waiting]["status"] == "waiting" and not listed[waiting]["is_my_turn"]
    view = live.view(me, playing)
    mine = view["view"]["turn"] == view["seat"]
    assert listed[playing]["is_my_turn"] is mine
    assert listed[playing]["version"] == view["version"]
    if mine:
        assert body["games"][0]["game_id"] == playing


def test_me_stream_announces_seating_start_each_turn_end_and_settlement(live: Live) -> None:
    me, a, b = (live.player() for _ in range(3))
    reader = live.stream("/api/v1/me/stream", me)
    first = reader.next()
    assert first.event == "games" and first.json["games"] == []

    game_id = live.table([a, me, b], start=False)
    seated = reader.next()
    assert (seated.event, seated.json["game_id"]) == ("seated", game_id)
    assert reader.next().event == "games"
    response = a.http.post(f"/api/v1/tables/{game_id}/start")
    assert response.status_code == 200
    # (The invitations' answers may show as table_changed first, as the reads fall.)
    started = next(f for f in _until(reader, "match_started"))
    assert started.json["game_id"] == game_id

    players = [a, me, b]
    turns = announced = 0
    was_mine = False
    for _ in range(3000):
        view = live.view(me, game_id)
        if view["status"] == "finished":
            break
        mine = view["view"]["turn"] == 1 and view["view"]["phase"] in ("start", "play", "draw_call")
        if mine and not was_mine:
            turns += 1
            # Announced before anybody moves again, with the version the turn started at.
            notice = next(f for f in _until(reader, "your_turn"))
            assert notice.json["game_id"] == game_id and notice.json["version"] == view["version"]
            assert notice.json["draw_answer"] is (view["view"]["phase"] == "draw_call")
            announced += 1
        was_mine = mine
        live.play_one(players, game_id)
    else:
        raise AssertionError("the match did not end")
    assert turns == announced and turns > 2
    ended = next(f for f in _until(reader, "match_ended"))
    assert ended.json["game_id"] == game_id
    assert live.view(me, game_id)["settled"] is False  # finished, the result not yet booked
    settle_match_now(str(game_id))
    assert live.view(me, game_id)["settled"] is True
    settled = next(f for f in _until(reader, "settled"))
    assert settled.json["game_id"] == game_id
    last = reader.next()
    assert last.event == "games" and last.json["games"] == []


def test_me_stream_tells_the_players_of_a_waiting_table_it_changed(live: Live) -> None:
    """A seat taken or left at a waiting table is a table_changed notice to those seated, so a
    waiting room needs no polling to know the table is ready."""
    me, other = live.player(), live.player()
    reader = live.stream("/api/v1/me/stream", me)
    assert reader.next().event == "games"
    seats = [{"kind": "user"}, {"kind": "open"}, {"kind": "bot", "level": "easy"}]
    response = me.http.post("/api/v1/tables", json={"seats": seats})
    assert response.status_code == 201, response.text
    game_id = response.json()["id"]
    assert next(f for f in _until(reader, "seated")).json["game_id"] == game_id
    assert other.http.post(f"/api/v1/tables/{game_id}/join").status_code == 200
    changed = next(f for f in _until(reader, "table_changed"))
    assert changed.json["game_id"] == game_id and changed.json["seat"] == 0
    assert other.http.post(f"/api/v1/tables/{game_id}/leave").status_code == 200
    assert next(f for f in _until(reader, "table_changed")).json["game_id"] == game_id


def _until(reader, event: str):
    """The frames up to the first ``event`` (which comes last); no other turn notice before."""
    while True:
        frame = reader.next()
        assert frame.event != "your_turn" or event == "your_turn", frame.raw
        if frame.event == event:
            yield frame
            return
