"""Drivers for whole matches (over HTTP, or through the services for bot seats) and a second,
independent reading of the event log that the projections are checked against."""

from __future__ import annotations

import random
from typing import Any

from openskill.models import PlackettLuce
from rest_framework.test import APIClient

from accounts.tasks import settle_match_now
from games import lobby, play, store
from games.models import Event, Game
from games.rules import legal_commands, player_view
from games.rules.bots import get_bot
from tests.api.games_support import TABLES, choose, get_view, post_command, table_url
from tests.conftest import DEFAULT_PASSWORD

MAX_COMMANDS = 5000
REGISTER = "/api/v1/auth/register"


def register(username: str) -> APIClient:
    """A new account through the API; the client sends its token (``client.username`` set)."""
    client = APIClient()
    response = client.post(REGISTER, {"username": username, "password": DEFAULT_PASSWORD}, "json")
    assert response.status_code == 201, response.content
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    client.username = username
    client.user_id = response.json()["user"]["id"]
    return client


def play_over_http(clients: list[APIClient], rules: Any = "standard") -> str:
    """Three humans: clients[0] opens a table seating the others, starts it, and every seat
    plays the server's legal commands (a greedy pick) until the match ends. Returns its id."""
    owner, *others = clients
    seats = [{"kind": "user"}] + [{"kind": "user", "username": c.username} for c in others]
    response = owner.post(TABLES, {"rules": rules, "seats": seats}, "json")
    assert response.status_code == 201, response.content
    game_id = response.json()["id"]
    for other in others:
        answer = other.post(table_url(game_id, "/invitation"), {"answer": "accept"}, "json")
        assert answer.status_code == 200, answer.content
    if response.json()["status"] == "waiting":
        assert owner.post(table_url(game_id, "/start")).status_code == 200
    payload = get_view(owner, game_id)
    for _ in range(MAX_COMMANDS):
        if payload["status"] == "finished":
            return game_id
        client = clients[payload["view"]["turn"]]
        if payload["seat"] != payload["view"]["turn"]:
            payload = get_view(client, game_id)
        response = post_command(client, game_id, choose(payload), payload["version"])
        assert response.status_code == 200, response.content
        payload = response.json()["game"]
    raise AssertionError("the match does not end")


def play_quick_over_http(client: APIClient, seats: list[dict[str, Any]], rules: Any) -> str:
    """A quick-play table (the caller and bots, started at once) played to the end: the caller
    over HTTP, the bots by ``play.play_bot_turn``, the very service the bot task runs."""
    response = client.post(TABLES, {"rules": rules, "seats": seats}, "json")
    assert response.status_code == 201, response.content
    game_id = response.json()["id"]
    assert response.json()["status"] == "active"  # quick play
    for _ in range(MAX_COMMANDS):
        payload = get_view(client, game_id)
        if payload["status"] == "finished":
            return game_id
        if payload["seat"] == payload["view"]["turn"]:
            response = post_command(client, game_id, choose(payload), payload["version"])
            assert response.status_code == 200, response.content
        else:
            outcome = play.play_bot_turn(game_id=game_id, expected_version=payload["version"])
            assert outcome == play.Outcome.DONE, outcome
    raise AssertionError("the match does not end")


def play_with_bots(user: Any, seats: list[dict[str, Any]], rules: Any, seed: int) -> str:
    """A table of ``user`` and bots; bot seats move through ``submit_command(seat=...)`` (the
    same door the bot task uses), the user plays a normal bot's choices as themselves."""
    table = lobby.table_create(user=user, rules=rules, seats=seats)
    if Game.objects.get(pk=table.pk).status == Game.Status.WAITING:
        lobby.table_start(game_id=table.pk, user=user)
    rng = random.Random(seed)
    for _ in range(MAX_COMMANDS):
        state = store.load(table.pk)
        if state.phase == "match_over":
            return str(table.pk)
        seat = state.turn
        spec = state.seats[seat]
        bot = get_bot(spec.get("level", "normal") if spec["kind"] == "bot" else "normal")
        command = bot.choose(player_view(state, seat), legal_commands(state, seat), rng)
        if spec["kind"] == "bot":
            play.submit_command(
                game_id=table.pk, seat=seat, command=command, expected_version=state.version
            )
        else:
            play.submit_command(
                game_id=table.pk, user=user, command=command, expected_version=state.version
            )
    raise AssertionError("the match does not end")


def settle(game_id: str) -> None:
    """What the settle_match task does: settle the game and project the match."""
    settle_match_now(str(game_id))


# ---------------------------------------------------------------- the log, read again


def expected_seats(game_id: str) -> list[dict[str, Any]]:
    """Per seat, straight from the events: chips, rounds won and lost by reason, burns, Draw
    calls, deadwood; then the placement (winner first, then round wins, then chips)."""
    rows = list(Event.objects.filter(game_id=game_id).order_by("seq"))
    seats = [
        {
            "wins": {},
            "losses": {},
            "burned": 0,
            "chips": 0,
            "deadwood": 0,
            "rounds": 0,
            "calls": 0,
            "calls_won": 0,
            "nobody": 0,
        }
        for _ in range(3)
    ]
    caller = None
    for row in rows:
        data = row.data
        if row.type == "game_started":
            for seat, spec in zip(seats, data["seats"], strict=True):
                seat["spec"] = spec
        elif row.type == "draw_called":
            caller = data["seat"]
            seats[caller]["calls"] += 1
        elif row.type == "round_ended":
            how = "stock_out" if data["reason"] == "turn_cap" else data["reason"]
            for index, seat in enumerate(seats):
                seat["rounds"] += 1
                seat["chips"] += data["payouts"][index]
                seat["deadwood"] += data["deadwood"][index]
                seat["burned"] += index in data["burned"]
                if data["winner"] is None:
                    seat["nobody"] += 1
                else:
                    side = "wins" if data["winner"] == index else "losses"
                    seat[side][how] = seat[side].get(how, 0) + 1
            if caller is not None and data["winner"] == caller:
                seats[caller]["calls_won"] += 1
            caller = None
        elif row.type == "match_ended":
            for index, seat in enumerate(seats):
                seat["won"] = data["winner"] == index
                seat["rounds_won"] = data["round_wins"][index]
                seat["end_id"] = row.id
    assert sum(s["chips"] for s in seats) == 0
    for seat in seats:
        mine = (seat["rounds_won"], seat["chips"])
        better = [(o["rounds_won"], o["chips"]) for o in seats if o is not seat and not o["won"]]
        seat["placement"] = 1 if seat["won"] else 2 + sum(b > mine for b in better)
    return seats


def expected_ratings(game_ids: list[str], player_of) -> dict[Any, tuple[float, float]]:
    """openskill ratings after these matches, applied in match_ended order."""
    model = PlackettLuce()
    ratings: dict[Any, Any] = {}
    ended = sorted(game_ids, key=lambda g: expected_seats(g)[0]["end_id"])
    for game_id in ended:
        seats = expected_seats(game_id)
        players = [player_of(s["spec"]) for s in seats]
        teams = [[ratings.get(p) or model.rating()] for p in players]
        rated = model.rate(teams, ranks=[s["placement"] for s in seats])
        for player, team in zip(players, rated, strict=True):
            ratings[player] = team[0]
    return {p: (r.mu, r.sigma) for p, r in ratings.items()}
