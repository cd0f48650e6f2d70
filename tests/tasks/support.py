"""Helpers of the task tests: waiting, racing threads, quick-play tables and a human player."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import connections
from rest_framework.test import APIClient

from games import play, store
from games.models import Game
from games.rules import legal_commands, player_view
from games.rules.bots import GreedyBot

TABLES = "/api/v1/tables"
_greedy = GreedyBot()


def wait_for(predicate: Callable[[], Any], timeout: float, interval: float = 0.01) -> Any:
    """Poll until ``predicate()`` is truthy (its value) or ``timeout`` seconds pass (None)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def in_threads(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls at the same moment, one thread each; their results or raised exceptions."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(i: int, call: Callable[[], Any]) -> None:
        barrier.wait()
        try:
            results[i] = call()
        except Exception as exc:  # returned, so the test can assert on it
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def game_url(game_id: str, suffix: str = "") -> str:
    return f"/api/v1/games/{game_id}{suffix}"


def quick_table(client: APIClient, rules: dict[str, Any], human_seat: int = 0, bot="normal") -> str:
    """POST /tables with the caller and two bots: it starts at once (quick play)."""
    seats: list[dict[str, Any]] = [{"kind": "bot", "level": bot} for _ in range(3)]
    seats[human_seat] = {"kind": "user"}
    rated = not 0 < rules.get("turn_seconds", 20) < 10  # turns this fast are casual only
    response = client.post(TABLES, {"rules": rules, "seats": seats, "rated": rated}, "json")
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "active"
    return response.json()["id"]


def view(client: APIClient, game_id: str) -> dict[str, Any]:
    response = client.get(game_url(game_id))
    assert response.status_code == 200, response.content
    return response.json()


def greedy(payload: dict[str, Any]) -> dict[str, Any]:
    """A simple greedy choice among the legal commands the server listed."""
    return _greedy.choose(payload["view"], payload["legal_commands"], random.Random(0))


def drive(game_id: str, user: Any, until: Callable[[Game], bool], limit: int = 2000) -> Game:
    """Play a table from the test thread, without a worker: the user greedily, bots through
    ``play.play_bot_turn``, deals through ``play.deal_next_round``, until ``until``."""
    for _ in range(limit):
        game = Game.objects.get(pk=game_id)
        if until(game):
            return game
        if game.awaiting == Game.Awaiting.BOT:
            outcome = play.play_bot_turn(game_id=game_id, expected_version=game.version)
            assert outcome == play.Outcome.DONE, outcome
        elif game.awaiting == Game.Awaiting.DEAL:
            outcome = play.deal_next_round(game_id=game_id, expected_version=game.version)
            assert outcome == play.Outcome.DONE, outcome
        elif game.awaiting == Game.Awaiting.USER:
            state = store.state_of(game)
            seat = state.turn
            command = _greedy.choose(
                player_view(state, seat), legal_commands(state, seat), random.Random(0)
            )
            play.submit_command(
                game_id=game_id, user=user, command=command, expected_version=game.version
            )
        else:
            raise AssertionError(f"{game} cannot be driven further ({game.awaiting!r})")
    raise AssertionError(f"{game_id}: not there after {limit} steps")
