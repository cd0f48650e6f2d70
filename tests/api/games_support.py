"""Helpers for the games API tests: tables of three players, views, commands, leak scans."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import pytest

from games.rules import CARD_CODES, GameState, fold
from games.rules.bots import GreedyBot
from games.rules.cards import codes_of

TABLES = "/api/v1/tables"
CARD = re.compile(r"^(10|[A2-9TJQK])[CDHS]$")
_bot = GreedyBot()


def game_url(game_id: str, suffix: str = "") -> str:
    return f"/api/v1/games/{game_id}{suffix}"


def table_url(game_id: str, suffix: str = "") -> str:
    return f"{TABLES}/{game_id}{suffix}"


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, (response.status_code, response.content[:500])
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["code"] == code, body
    assert isinstance(body["detail"], str) and body["detail"]
    return body


def start_game(clients: list, rules: Any = "standard") -> str:
    """Three users at one table (the first creates it and invites the others, who accept),
    started."""
    owner, *others = clients
    seats = [{"kind": "user"}] + [{"kind": "user", "username": c.user.username} for c in others]
    response = owner.post(TABLES, {"rules": rules, "seats": seats}, "json")
    assert response.status_code == 201, response.content
    game_id = response.json()["id"]
    for other in others:
        response = other.post(table_url(game_id, "/invitation"), {"answer": "accept"}, "json")
        assert response.status_code == 200, response.content
    response = owner.post(table_url(game_id, "/start"))
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "active"
    return game_id


def get_view(client, game_id: str) -> dict:
    response = client.get(game_url(game_id))
    assert response.status_code == 200, response.content
    return response.json()


def post_command(client, game_id: str, command: dict, version: int, **headers):
    return client.post(
        game_url(game_id, "/commands"),
        {"command": command, "expected_version": version},
        "json",
        **headers,
    )


def choose(payload: dict) -> dict:
    """A greedy choice among the legal commands the server listed for this seat."""
    return _bot.choose(payload["view"], payload["legal_commands"], random.Random(0))


def client_for_turn(clients: list, payload: dict):
    return clients[payload["view"]["turn"]]


def card_strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value that is a card code."""
    if isinstance(value, str):
        if CARD.match(value):
            yield value.replace("10", "T")
    elif isinstance(value, dict):
        for item in value.values():
            yield from card_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from card_strings(item)


def states_by_version(event_dicts: list[dict]) -> list[GameState | None]:
    """states[v] = the state after the first v events (states[0] is None)."""
    states: list[GameState | None] = [None]
    state = None
    for data in event_dicts:
        state = fold([data], state)
        states.append(state)
    return states


def secrets(state: GameState | None, seat: int) -> set[str]:
    """Cards the seat may not see in this state: other hands, the stock, others' secret sets."""
    if state is None or state.phase in ("round_over", "match_over", "dealing"):
        return set()
    out: set[str] = {CARD_CODES[c] for c in state.stock}
    for other in range(3):
        if other != seat:
            out.update(codes_of(state.hands[other]))
    for meld in state.melds:
        if meld.hidden and meld.owner != seat:
            out.update(codes_of(meld.mask))
    return out


@pytest.fixture
def fast_password_hashing(settings):
    """These tests make many users; hashing each password with PBKDF2 would take most of the
    time. Accounts' own tests keep the real hasher."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
