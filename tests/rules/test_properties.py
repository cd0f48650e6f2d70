"""Property tests over random self-play: invariants that must hold after every single event."""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.rules import (
    CARD_CODES,
    COMMAND_TYPES,
    IllegalMove,
    RuleSet,
    command_key,
    deal,
    decide,
    event_from_dict,
    event_to_dict,
    evolve,
    fold,
    legal_commands,
    new_game,
    player_view,
)
from games.rules.bots import get_bot
from games.rules.cards import FULL_DECK, codes_of
from games.rules.selfplay import play_match

PRESETS = [RuleSet.standard(), RuleSet.house(), RuleSet.h19()]
SETTINGS = settings(
    max_examples=450, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


def _random_command(rng: random.Random, state) -> dict:
    kind = rng.choice(COMMAND_TYPES)
    cmd: dict = {"type": kind}
    if kind in ("meld", "take_discard") and rng.random() < 0.9:
        cmd["cards"] = rng.sample(CARD_CODES, rng.randint(1, 4))
    if kind in ("lay_off", "discard"):
        cmd["card"] = rng.choice(CARD_CODES)
    if kind in ("lay_off", "take_discard") and rng.random() < 0.5:
        cmd["meld_id"] = rng.randint(0, len(state.melds) + 1)
    if kind == "meld" and rng.random() < 0.2:
        cmd["hidden"] = True
    return cmd


def _check_conservation(state) -> None:
    masks = list(state.hands) + [m.mask for m in state.melds]
    masks += [1 << c for c in state.stock] + [1 << c for c in state.discard]
    union = 0
    for m in masks:
        assert union & m == 0, "a card is in two places"
        union |= m
    assert union == FULL_DECK, "a card is missing"


def _check_views(state) -> None:
    if not state.in_round:
        return
    for seat in range(3):
        text = json.dumps(player_view(state, seat))
        secret = 0
        for other in range(3):
            if other != seat:
                secret |= state.hands[other]
        for m in state.melds:
            if m.hidden and m.owner != seat:
                secret |= m.mask
        for c in state.stock:
            secret |= 1 << c
        for code in codes_of(secret):
            assert f'"{code}"' not in text, f"seat {seat} sees {code}"


def _play_round_checked(state, rng: random.Random, bots, stats) -> tuple:
    """Play one round with every invariant checked; return the final state and the events."""
    events = [deal(state, rng)]
    state = evolve(state, events[0])
    _check_conservation(state)
    while state.in_round:
        seat = state.turn
        legal = legal_commands(state, seat)
        assert legal, "a seat to act always has a legal command"
        keys = {command_key(c) for c in legal}
        for other in range(3):
            if other != seat:
                assert legal_commands(state, other) == []
        # every sampled legal command is accepted; every random illegal one is refused
        for cmd in rng.sample(legal, min(4, len(legal))):
            assert decide(state, seat, cmd)
        for _ in range(4):
            cmd = _random_command(rng, state)
            actor = seat if rng.random() < 0.8 else rng.randrange(3)
            try:
                in_legal = actor == seat and command_key(cmd) in keys
            except (ValueError, KeyError):
                in_legal = False
            if in_legal:
                assert decide(state, actor, cmd)
            else:
                before = state
                try:
                    decide(state, actor, cmd)
                except IllegalMove as exc:
                    stats["refused"] += 1
                    assert exc.code
                else:
                    raise AssertionError(f"accepted a command not in legal_commands: {cmd}")
                assert state == before
        command = bots[seat].choose(player_view(state, seat), legal, rng)
        assert command_key(command) in keys
        for event in decide(state, seat, command):
            events.append(event)
            state = evolve(state, event)
            _check_conservation(state)
        _check_views(state)
    ended = next(e for e in reversed(events) if e.type == "round_ended")
    assert sum(ended.payouts) == 0
    assert ended.reason != "turn_cap", "a round reached the turn cap"
    stats["rounds"] += 1
    stats["reasons"].add(ended.reason)
    return state, events


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    preset=st.sampled_from(PRESETS),
    bots=st.sampled_from([("random",) * 3, ("greedy",) * 3, ("random", "greedy", "random")]),
)
def test_random_self_play_keeps_every_invariant(seed: int, preset: RuleSet, bots) -> None:
    rng = random.Random(seed)
    players = [get_bot(b) for b in bots]
    all_events = []
    stats = {"rounds": 0, "refused": 0, "reasons": set()}
    first = new_game(preset, None, rng)
    state = fold([first])
    all_events.append(first)
    while state.phase != "match_over":
        state, events = _play_round_checked(state, rng, players, stats)
        all_events.extend(events)
        assert stats["rounds"] < 200
    # the fold of everything, also through JSON, is the state built step by step
    assert fold(all_events) == state
    stored = json.loads(json.dumps([event_to_dict(e) for e in all_events]))
    assert fold(stored) == state
    assert [event_from_dict(d) for d in stored] == all_events
    assert sum(state.chips) == 0
    assert max(state.round_wins) == preset.wins_to_match
    assert stats["refused"] > 0
    ROUNDS_CHECKED.append(stats["rounds"])


ROUNDS_CHECKED: list[int] = []


def test_invariant_checks_covered_thousands_of_rounds() -> None:
    """Runs after the property test in file order: the checked rounds add up to thousands."""
    assert sum(ROUNDS_CHECKED) >= 2000, sum(ROUNDS_CHECKED)


def test_self_play_covers_thousands_of_rounds_and_every_ending() -> None:
    """A deterministic sweep so the suite always sees thousands of rounds and all four endings."""
    rng = random.Random(2026)

    rounds = 0
    reasons: set[str] = set()
    for i in range(450):
        preset = PRESETS[i % len(PRESETS)]
        bots = ["greedy", "random", "greedy"] if i % 3 else ["random"] * 3
        record = play_match(bots, rng, preset)
        for r in record.rounds:
            assert sum(r.payouts) == 0
            assert r.reason != "turn_cap"
            reasons.add(r.reason)
        rounds += len(record.rounds)
        assert fold(record.events) == record.state
    assert rounds >= 2000, rounds
    assert reasons == {"tongits", "draw", "stock_out"}
