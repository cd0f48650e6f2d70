"""The JSON contract of docs/architecture.md "Contracts": events, rules and snapshots round-trip;
outside code can build a game from minimal dicts; the command-line tools run."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from games.rules import (
    ILLEGAL_MOVE_CODES,
    IllegalMove,
    RuleSet,
    deal,
    decide,
    deck_commitment,
    event_from_dict,
    event_to_dict,
    fold,
    new_game,
    player_view,
    state_from_dict,
    state_to_dict,
)
from games.rules.selfplay import play_match

ROOT = Path(__file__).resolve().parents[2]


def test_every_event_round_trips_through_json() -> None:
    record = play_match(["greedy", "random", "greedy"], random.Random(5), RuleSet.house())
    types = set()
    for event in record.events:
        data = json.loads(json.dumps(event_to_dict(event)))
        assert event_from_dict(data) == event
        assert data["type"] == event.type
        types.add(event.type)
    assert {"game_started", "round_started", "drew", "discarded", "round_ended"} <= types


def test_snapshot_round_trips_at_every_step() -> None:
    record = play_match(["greedy"] * 3, random.Random(9))
    state = None
    for event in record.events:
        state = fold([event], state) if state else fold([event])
        assert state_from_dict(json.loads(json.dumps(state_to_dict(state)))) == state


def test_ruleset_presets_round_trip_and_reject_unknown_options() -> None:
    for name in RuleSet.PRESETS:
        rules = RuleSet.preset(name)
        assert RuleSet.from_dict(rules.to_dict()) == rules
    assert RuleSet.from_dict({"preset": "house", "turn_seconds": 0}).turn_seconds == 0
    assert RuleSet.from_dict("house") == RuleSet.house()
    with pytest.raises(ValueError):
        RuleSet.from_dict({"ace_high": True})
    with pytest.raises(ValueError):
        RuleSet.from_dict({"stock_out_tie": "coin_flip"})
    with pytest.raises(ValueError):
        RuleSet.preset("tournament")


def test_outside_code_builds_a_game_from_minimal_dicts() -> None:
    hands = [
        ["AS", "2S", "3S", "4S", "5D", "6D", "7D", "8C", "9C", "TC", "JH", "QH", "KH"],
        ["AD", "2D", "3D", "4D", "5C", "6C", "7C", "8H", "9H", "TH", "JS", "QS"],
        ["AH", "2H", "3H", "4H", "5S", "6S", "7S", "8D", "9D", "TD", "JC", "QC"],
    ]
    stock = [
        "KS",
        "KD",
        "KC",
        "QD",
        "JD",
        "8S",
        "9S",
        "TS",
        "AC",
        "2C",
        "3C",
        "4C",
        "5H",
        "6H",
        "7H",
    ]
    state = fold(
        [
            {
                "type": "game_started",
                "rules": {},
                "seats": [{"kind": "user"}] * 3,
                "first_dealer": 0,
            },
            {"type": "round_started", "round": 1, "dealer": 0, "hands": hands, "stock": stock},
        ]
    )
    assert player_view(state, 0)["phase"] == "play"
    events = decide(state, 0, {"type": "meld", "cards": ["AS", "2S", "3S", "4S"]})
    assert event_to_dict(events[0]) == {
        "type": "melded",
        "seat": 0,
        "meld_id": 1,
        "kind": "run",
        "cards": ["AS", "2S", "3S", "4S"],
        "hidden": False,
    }
    with pytest.raises(IllegalMove) as exc:
        decide(state, 1, {"type": "draw"})
    assert exc.value.code == "not_your_turn"
    assert exc.value.code in ILLEGAL_MOVE_CODES


def test_deal_commits_to_the_whole_deck_with_its_salt() -> None:
    rng = random.Random(11)
    state = fold([new_game(RuleSet(), None, rng)])
    event = event_to_dict(deal(state, rng))
    assert sorted(sum(event["hands"], []) + event["stock"]) == sorted(
        r + s for r in "A23456789TJQK" for s in "CDHS"
    )
    assert event["deck_commitment"] == deck_commitment(
        event["salt"], event["hands"], event["stock"]
    )
    assert len(event["salt"]) == 32
    other = event_to_dict(deal(state, random.Random(12)))
    assert other["deck_commitment"] != event["deck_commitment"]


def test_simulate_and_bench_commands_run() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "games.rules.simulate", "--matches", "5", "--seed", "3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "rounds ended by:" in out and "events per match:" in out
    out = subprocess.run(
        [sys.executable, "-m", "games.rules.bench", "--repeat", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    assert "matches per second" in out and "deadwood" in out


def test_revealed_view_shows_every_card_once() -> None:
    record = play_match(["greedy"] * 3, random.Random(21))
    state = fold(record.events[:40])
    assert state.in_round
    view = player_view(state, None, reveal=True)
    cards = sum(view["hands"], []) + view["stock"] + view["discard_pile"]
    cards += [c for m in view["melds"] for c in m["cards"]]
    assert sorted(cards) == sorted(r + s for r in "A23456789TJQK" for s in "CDHS")
    assert view["salt"] == state.salt
    hidden = player_view(state, 0)
    assert "stock" not in hidden and "salt" not in hidden and "hands" not in hidden
