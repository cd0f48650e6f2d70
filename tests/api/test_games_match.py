"""A whole match by three registered users through the API alone, with a leak scan of every
response, then replay, audit and the snapshot checked against a fold from zero."""

from __future__ import annotations

import time

import pytest

from games import store
from games.models import Event, Game
from games.rules import state_to_dict
from tests.api.games_support import (
    card_strings,
    choose,
    fast_password_hashing,  # noqa: F401 (a fixture)
    game_url,
    get_view,
    post_command,
    secrets,
    start_game,
    states_by_version,
)
from tests.conftest import DEFAULT_PASSWORD

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

MAX_COMMANDS = 5000


def register(api_client, username: str):
    from rest_framework.test import APIClient

    response = api_client.post(
        "/api/v1/auth/register", {"username": username, "password": DEFAULT_PASSWORD}, "json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {body['token']}")
    client.user = type("U", (), {"username": username, "pk": body["user"]["id"]})
    return client


def play_match(clients, game_id, record):
    """Drive every seat with the commands the server lists until match_ended (HTTP only)."""
    last_seq = [0, 0, 0]
    payload = get_view(clients[0], game_id)
    record(0, payload)
    commands = 0
    while payload["status"] != "finished":
        seat = payload["view"]["turn"]
        client = clients[seat]
        if payload["seat"] != seat:
            # Catch up on the events since this seat last looked, then look at the table.
            feed = client.get(game_url(game_id, "/events"), {"after": last_seq[seat]}).json()
            record(seat, feed)
            if feed["events"]:
                last_seq[seat] = feed["events"][-1]["seq"]
            payload = get_view(client, game_id)
            record(seat, payload)
        command = choose(payload)
        response = post_command(client, game_id, command, payload["version"])
        assert response.status_code == 200, (command, response.content)
        body = response.json()
        record(seat, body)
        last_seq[seat] = body["version"]
        payload = body["game"]
        commands += 1
        assert commands < MAX_COMMANDS, "the match does not end"
    return commands


@pytest.mark.parametrize("rules", ["standard", "house", "h19"])
def test_three_users_play_a_whole_match_over_http(api_client, rules):
    started = time.monotonic()
    clients = [register(api_client, name) for name in ("ana", "ben", "cora")]
    game_id = start_game(clients, rules=rules)
    responses: list[tuple[int, dict]] = []
    commands = play_match(clients, game_id, lambda seat, body: responses.append((seat, body)))

    game = Game.objects.get(pk=game_id)
    assert game.status == Game.Status.FINISHED
    assert game.finished_at is not None and game.current_seat is None
    types = list(Event.objects.filter(game=game).order_by("seq").values_list("type", flat=True))
    assert types[0] == "game_started" and types[1] == "round_started"
    assert types[-1] == "match_ended"
    assert game.version == len(types)
    wins = game.snapshot["round_wins"]
    assert max(wins) == 3 and game.winner_seat == wins.index(3)

    # The snapshot the moves used agrees with a fold of the whole stream from zero.
    assert state_to_dict(store.fold_from_zero(game_id)) == game.snapshot
    assert store.verify_chain(game_id) is None

    # No leak: no response during the match showed a card of another hand, of the stock, or of
    # another's secret set, as they stood at that moment (the event's seq, or the body's version).
    rows = list(Event.objects.filter(game=game).order_by("seq").values_list("data", flat=True))
    states = states_by_version(rows)
    scanned = controls = 0
    for seat, body in responses:
        version = body.get("version") or body["game"]["version"]
        if states[version].phase == "match_over":
            continue  # the match is over: everything is revealed by design
        for item in body.get("events", []):
            leaked = set(card_strings(item)) & secrets(states[item["seq"]], seat)
            assert not leaked, (seat, item, leaked)
            scanned += 1
        rest = {k: v for k, v in body.items() if k != "events"}
        leaked = set(card_strings(rest)) & secrets(states[version], seat)
        assert not leaked, (seat, version, leaked)
        # Control: the same scan, applied as if another seat had got this body, does catch
        # the hand in it, so a clean result above means something.
        hand = (rest.get("game") or rest).get("view", {}).get("hand")
        if hand:
            assert set(hand) <= secrets(states[version], (seat + 1) % 3)
            controls += 1
    assert scanned > len(types)  # every event was seen by someone, most by all three
    assert controls > commands / 2

    # After the match: replay and audit reveal everything and check out.
    final = get_view(clients[1], game_id)
    assert final["status"] == "finished" and final["view"]["phase"] == "match_over"
    assert sorted(len(h) for h in final["revealed"]["hands"]) == sorted(
        len(h) for h in final["view"]["hands"]
    )
    replay = clients[2].get(game_url(game_id, "/replay"), {"at": 2}).json()
    assert replay["revealed"] is True
    assert sum(len(h) for h in replay["view"]["hands"]) + len(replay["view"]["stock"]) == 52
    audit = clients[0].get(game_url(game_id, "/audit")).json()
    assert audit["chain_ok"] is True and audit["first_broken_seq"] is None
    assert audit["commitments_ok"] is True and audit["snapshot_ok"] is True
    assert len(audit["rounds"]) == types.count("round_started")
    assert all(r["salt"] and len(r["stock"]) == 15 for r in audit["rounds"])
    print(f"match: {commands} commands, {len(types)} events, {time.monotonic() - started:.1f}s")
