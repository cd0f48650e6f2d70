"""Bot-against-bot matches, the one loop that simulate, bench, tournaments and tests share."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from .bots import Bot, get_bot
from .engine import deal, decide, legal_commands, new_game
from .events import Event, RoundEnded
from .ruleset import RuleSet
from .state import DEALING, MATCH_OVER, ROUND_OVER, GameState, evolve, fold
from .views import player_view


@dataclass
class MatchRecord:
    state: GameState
    events: list[Event] = field(default_factory=list)
    rounds: list[RoundEnded] = field(default_factory=list)
    commands: int = 0


def play_match(
    bots: list[Bot] | list[str],
    rng: random.Random,
    rules: RuleSet | None = None,
    max_rounds: int = 1000,
) -> MatchRecord:
    """Play one whole match; every command goes through ``decide`` like a player's would."""
    players = [get_bot(b) if isinstance(b, str) else b for b in bots]
    rules = rules or RuleSet()
    seats: list[dict[str, Any]] = [{"kind": "bot", "bot": p.name} for p in players]
    first = new_game(rules, seats, rng)
    record = MatchRecord(state=fold([first]), events=[first])
    state = record.state
    events = record.events
    while state.phase != MATCH_OVER:
        if state.phase in (DEALING, ROUND_OVER):
            if len(record.rounds) >= max_rounds:
                raise RuntimeError("match did not end")
            event = deal(state, rng)
            events.append(event)
            state = evolve(state, event)
            continue
        seat = state.turn
        command = players[seat].choose(player_view(state, seat), legal_commands(state, seat), rng)
        record.commands += 1
        for event in decide(state, seat, command):
            events.append(event)
            state = evolve(state, event)
            if isinstance(event, RoundEnded):
                record.rounds.append(event)
    record.state = state
    return record
