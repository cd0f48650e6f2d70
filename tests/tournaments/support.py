"""Helpers of the tournament tests: staff, wallets, and tournaments played out in this process
(people and bots through the door, as the worker would)."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.utils import timezone

from chips import services as chips
from chips.models import Balance
from games import play, store
from games.models import Game
from games.rules import legal_commands, player_view
from games.rules.bots import get_bot
from tournaments import services
from tournaments.models import Table, Tournament

TOURNAMENTS = "/api/v1/tournaments"
MAX_STEPS = 5000


def url(tournament_id: Any, suffix: str = "") -> str:
    return f"{TOURNAMENTS}/{tournament_id}{suffix}"


def wallet(user: Any) -> int:
    """What the user's wallet holds (opened with its grant if need be)."""
    return Balance.objects.get(account_id=chips.open_wallet(user.pk)).balance


def create(staff: Any, **given: Any) -> Tournament:
    spec = {"name": "Friday", "rules": "standard", "wins_to_match": 1, "entrants": 3}
    return services.tournament_create(user=staff, **{**spec, **given})


def soon(seconds: float = 60) -> Any:
    return timezone.now() + timedelta(seconds=seconds)


def play_game(game_id: Any, seed: int = 0) -> None:
    """Play one table to its end: each seat a normal bot's choice through the door (a person's
    seat as that person), deals as the server."""
    rng = random.Random(seed)
    users = get_user_model().objects
    for _ in range(MAX_STEPS):
        game = Game.objects.get(pk=game_id)
        if game.status != Game.Status.ACTIVE:
            return
        if game.awaiting == Game.Awaiting.BOT:
            play.play_bot_turn(game_id=game_id, expected_version=game.version)
        elif game.awaiting == Game.Awaiting.DEAL:
            play.deal_next_round(game_id=game_id, expected_version=game.version)
        else:
            state = store.load(game_id)
            seat = state.turn
            user = users.get(pk=state.seats[seat]["user_id"])
            command = get_bot("normal").choose(
                player_view(state, seat), legal_commands(state, seat), rng
            )
            play.submit_command(
                game_id=game_id, user=user, command=command, expected_version=game.version
            )
    raise AssertionError(f"{game_id} did not end in {MAX_STEPS} steps")


def play_out(tournament: Tournament, *, now: Any = None, stop_before_prizes: bool = False) -> str:
    """Advance the tournament and play its tables until it is finished (or, with
    ``stop_before_prizes``, until its standings are fixed and its prizes unpaid)."""
    for _ in range(20):
        tournament.refresh_from_db()
        if tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
            return tournament.status
        if stop_before_prizes and tournament.standings is not None:
            return "paying"
        for table in Table.objects.filter(tournament=tournament, winner__isnull=True):
            play_game(table.game_id, seed=table.stage * 10 + table.index)
        services.advance(tournament.pk, now=now, pay=not stop_before_prizes)
    raise AssertionError("the tournament did not end")
