"""Sanctions that hold on the live streams, against the real ASGI server: a suspension ends the
account's open streams at once (game stream and /me/stream, by header or by ticket), a log-out
ends that session's, and a ticket minted before either opens nothing after it."""

from __future__ import annotations

import httpx

from accounts.services import session_create
from tests.live.support import Live, Player, SseReader
from tests.live.test_live_api import assert_json_error


def _ticket(player: Player | httpx.Client, path: str) -> str:
    http = player if isinstance(player, httpx.Client) else player.http
    response = http.post(path)
    assert response.status_code == 201, response.text
    return response.json()["ticket"]


def _ends_with(reader: SseReader, reason: str) -> None:
    """The stream's next frames reach ``end`` with ``reason``, and then the server closes it."""
    while True:
        frame = reader.next(timeout=10)
        if frame.event == "end":
            assert frame.json == {"reason": reason}
            break
    assert reader.ended.wait(10), "the server kept the stream open after its end"


def _still_open(reader: SseReader) -> None:
    assert not reader.ended.is_set()
    assert all(frame.event != "end" for frame in reader.all), [f.event for f in reader.all]


def test_a_suspension_ends_the_accounts_open_streams_and_its_tickets(live: Live) -> None:
    suspended = live.player()
    game_id = live.table([suspended, live.player(), live.player()])
    version = live.view(suspended, game_id)["version"]
    game_path = f"/api/v1/games/{game_id}/stream"
    others = [live.player() for _ in range(3)]
    other_game = live.table(others)
    other_version = live.view(others[0], other_game)["version"]

    by_header = live.stream(game_path, suspended)
    me_ticket = _ticket(suspended, "/api/v1/me/stream-ticket")
    by_ticket = live.stream(f"/api/v1/me/stream?ticket={me_ticket}")
    spare_ticket = _ticket(suspended, f"{game_path}-ticket")  # minted before the suspension
    elsewhere = live.stream(f"/api/v1/games/{other_game}/stream", others[0])
    by_header.until_view(version)
    assert by_ticket.next().event == "games"
    elsewhere.until_view(other_version)

    # Any change of a user tells every process to check its streams again: no reason to end them.
    others[0].user.save()

    staff = live.player(is_staff=True)
    response = staff.http.post(
        "/api/v1/staff/suspensions",
        json={"username": suspended.user.username, "reason": "collusion", "until": None},
    )
    assert response.status_code == 201, response.text

    _ends_with(by_header, "suspended")
    _ends_with(by_ticket, "suspended")
    assert_json_error(live.stream(f"{game_path}?ticket={spare_ticket}"), 401, "invalid_ticket")

    # The changed account's stream goes on: the next move reaches it.
    live.play_one(others, other_game)
    elsewhere.until_view(other_version + 1)
    _still_open(elsewhere)


def test_a_log_out_ends_that_sessions_streams_only(live: Live) -> None:
    players = [live.player() for _ in range(3)]
    game_id = live.table(players)
    version = live.view(players[0], game_id)["version"]
    game_path = f"/api/v1/games/{game_id}/stream"
    # A second device of the first player, which logs out; the first stays logged in.
    _, token = session_create(user=players[0].user, device="leaving")
    leaving = httpx.Client(base_url=live.url, headers={"Authorization": f"Token {token}"})

    by_header = live.stream(game_path, headers={"Authorization": f"Token {token}"})
    game_ticket = _ticket(leaving, f"{game_path}-ticket")
    by_ticket = live.stream(f"{game_path}?ticket={game_ticket}")
    spare_ticket = _ticket(leaving, "/api/v1/me/stream-ticket")  # minted before the log-out
    staying = live.stream(game_path, players[0])
    for reader in (by_header, by_ticket, staying):
        reader.until_view(version)

    response = leaving.post("/api/v1/auth/logout")
    assert response.status_code in (200, 204), response.text
    leaving.close()

    _ends_with(by_header, "signed_out")
    _ends_with(by_ticket, "signed_out")
    spare = live.stream(f"/api/v1/me/stream?ticket={spare_ticket}")
    assert_json_error(spare, 401, "invalid_ticket")

    live.play_one(players, game_id)
    staying.until_view(version + 1)
    _still_open(staying)
