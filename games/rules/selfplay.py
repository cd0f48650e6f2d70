"""Bot-against-bot matches, the one loop that simulate, bench, the ladder and tests share."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .bots import Bot, get_bot
from .engine import deal, decide, legal_commands, new_game
from .events import Event, RoundEnded
from .ruleset import RuleSet
from .state import DEALING, MATCH_OVER, ROUND_OVER, GameState, evolve, fold
from .views import player_view, redact_event


@dataclass
class MatchRecord:
    state: GameState
    events: list[Event] = field(default_factory=list)
    rounds: list[RoundEnded] = field(default_factory=list)
    commands: int = 0
    #: per seat: CPU seconds of this thread each ``choose`` call took (``time.thread_time``: what
    #: the bot itself spent, whatever else the machine was doing)
    decision_times: list[list[float]] = field(default_factory=lambda: [[], [], []])
    #: per seat: wall-clock seconds of each ``choose`` call (grows with the machine's load)
    decision_walls: list[list[float]] = field(default_factory=lambda: [[], [], []])


def play_match(
    bots: list[Bot] | list[str],
    rng: random.Random,
    rules: RuleSet | None = None,
    max_rounds: int = 1000,
    watch: Callable[[GameState, int, dict[str, Any], list[dict[str, Any]], Any], None]
    | None = None,
) -> MatchRecord:
    """Play one whole match; every command goes through ``decide`` like a player's would.

    A bot sees its seat's ``player_view`` and, if it ``uses_history``, the events so far as
    ``redact_event`` shows them to its seat, kept incrementally (one redaction per event and
    seat that wants it), so no bot is ever handed a hidden card. ``watch(state, seat, view,
    legal, history)``, if given, runs before each decision: measurements that compare a bot's
    guesses with the true state (``scripts/bot_diagnostics.py``), never a bot's input.
    """
    players = [get_bot(b) if isinstance(b, str) else b for b in bots]
    rules = rules or RuleSet()
    seats: list[dict[str, Any]] = [{"kind": "bot", "bot": p.name} for p in players]
    first = new_game(rules, seats, rng)
    record = MatchRecord(state=fold([first]), events=[first])
    state = record.state
    events = record.events
    watchers = [s for s, p in enumerate(players) if getattr(p, "uses_history", False)]
    histories: list[list[dict[str, Any]]] = [[], [], []]

    def remember(event: Event) -> None:
        if watchers:
            data = event.to_dict()
            for s in watchers:
                histories[s].append(redact_event(data, s))

    remember(first)
    cpu = time.thread_time
    wall = time.perf_counter
    while state.phase != MATCH_OVER:
        if state.phase in (DEALING, ROUND_OVER):
            if len(record.rounds) >= max_rounds:
                raise RuntimeError("match did not end")
            event = deal(state, rng)
            events.append(event)
            remember(event)
            state = evolve(state, event)
            continue
        seat = state.turn
        player = players[seat]
        view = player_view(state, seat)
        legal = legal_commands(state, seat)
        history = histories[seat] if seat in watchers else None
        if watch is not None:
            watch(state, seat, view, legal, history)
        started, started_wall = cpu(), wall()
        if history is not None:
            command = player.choose(view, legal, rng, history)
        else:
            command = player.choose(view, legal, rng)
        record.decision_times[seat].append(cpu() - started)
        record.decision_walls[seat].append(wall() - started_wall)
        record.commands += 1
        for event in decide(state, seat, command):
            events.append(event)
            remember(event)
            state = evolve(state, event)
            if isinstance(event, RoundEnded):
                record.rounds.append(event)
    record.state = state
    return record
