"""Helpers for the chips tests: wallets, tables played for chips, and the ledger's verdict."""

from __future__ import annotations

import random
from typing import Any

from django.db import connection

from accounts.tasks import settle_match_now
from chips import ledger
from chips.models import Balance, Entry
from games import lobby, play, stakes, store
from games.models import Game
from games.rules import legal_commands, player_view
from games.rules.bots import get_bot

MAX_COMMANDS = 5000
ONE_ROUND = {"preset": "standard", "wins_to_match": 1}


def available(user: Any) -> int:
    """The user's wallet (what a buy-in can take); 0 before it is opened."""
    wallet = ledger.wallet_of(user.pk)
    if wallet is None:
        return 0
    return Balance.objects.get(account_id=wallet).balance


def in_play(user: Any) -> int:
    wallet = ledger.wallet_of(user.pk)
    return 0 if wallet is None else Balance.objects.get(account_id=wallet).in_play


def escrow_balance(game_id: Any) -> int | None:
    escrow = ledger.escrow_of(game_id)
    return None if escrow is None else Balance.objects.get(account_id=escrow).balance


def entries_of(game_id: Any) -> list[tuple[str, str]]:
    return list(Entry.objects.filter(game_id=game_id).order_by("id").values_list("cause", "key"))


def assert_sound() -> None:
    """Every invariant ``manage.py verify_ledger`` checks holds."""
    found = stakes.verify_ledger()
    assert found.problems == [], found.problems


def play_to_the_end(game_id: Any, users: dict[int, Any], seed: int = 0) -> None:
    """Every seat plays a normal bot's choice through the door (a user seat as its user, a bot
    seat as the bot driver), until the match is over."""
    rng = random.Random(seed)
    for _ in range(MAX_COMMANDS):
        state = store.load(game_id)
        if state.phase == "match_over":
            return
        seat = state.turn
        command = get_bot("normal").choose(
            player_view(state, seat), legal_commands(state, seat), rng
        )
        if state.seats[seat]["kind"] == "bot":
            play.submit_command(
                game_id=game_id, seat=seat, command=command, expected_version=state.version
            )
        else:
            play.submit_command(
                game_id=game_id,
                user=users[seat],
                command=command,
                expected_version=state.version,
            )
    raise AssertionError("the match does not end")


def quick_table(user: Any, buy_in: int, rules: Any = ONE_ROUND, level: str = "easy") -> Game:
    seats = [{"kind": "user"}, {"kind": "bot", "level": level}, {"kind": "bot", "level": level}]
    return lobby.table_create(user=user, rules=rules, seats=seats, rated=False, buy_in=buy_in)


def settle(game_id: Any) -> str:
    return settle_match_now(str(game_id))


def raw(sql: str, params: list | None = None) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return cursor.fetchall() if cursor.description else []
