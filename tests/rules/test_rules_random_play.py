"""Random legal play on real 13/12/12/15 deals, checked against docs/rules.md invariants.

Every position: cards are conserved, views agree, only the seat to act has commands, every
listed command is accepted.  Every round end: payouts recomputed from docs/rules.md "Payments",
burned seats, deadwood, winner choice, next dealer, match end.
"""

import json
import random

import pytest

from games.rules import (
    deadwood,
    deal,
    decide,
    event_to_dict,
    evolve,
    fold,
    legal_commands,
    new_game,
    player_view,
    time_out,
)
from tests.rules.tongits_helpers import DECK, SEATS, h19, house, standard

ACTIVE = ("start", "play", "draw_call")


def pick(rng, commands):
    by = {}
    for c in commands:
        by.setdefault(c["type"], []).append(c)
    if "challenge" in by or "fold" in by:
        return rng.choice(commands)
    if "draw" in by:
        if "call_draw" in by and rng.random() < 0.15:
            return by["call_draw"][0]
        if "take_discard" in by and rng.random() < 0.6:
            return rng.choice(by["take_discard"])
        return by["draw"][0]
    if "meld" in by and rng.random() < 0.7:
        return rng.choice(by["meld"])
    if "lay_off" in by and rng.random() < 0.5:
        return rng.choice(by["lay_off"])
    return rng.choice(by.get("discard") or commands)


def check_position(state, rng):
    views = [player_view(state, s) for s in range(3)]
    v0 = views[0]
    for v in views:
        json.dumps(v)
        for field in (
            "turn",
            "phase",
            "stock_count",
            "hand_counts",
            "discard_pile",
            "round",
            "round_wins",
        ):
            assert v[field] == v0[field], field
    for seat, v in enumerate(views):
        assert len(v["hand"]) == v["hand_counts"][seat]
        seen = list(v["hand"]) + list(v["discard_pile"])
        for m in v["melds"]:
            if m["cards"] is not None:
                assert len(m["cards"]) == m["size"]
                seen += m["cards"]
        assert len(seen) == len(set(seen)) and set(seen) <= set(DECK)
    total = sum(v0["hand_counts"]) + sum(m["size"] for m in v0["melds"]) + len(v0["discard_pile"])
    if v0["phase"] in ACTIVE:
        assert total + v0["stock_count"] == 52
        for seat in range(3):
            commands = legal_commands(state, seat)
            if seat != v0["turn"]:
                assert commands == []
            else:
                assert commands
                for command in rng.sample(commands, min(6, len(commands))):
                    assert decide(state, seat, command)


def check_round_end(end, state, rules, round_events, dealer):
    v = player_view(state, 0)
    hands = v["hands"]
    melds = v["melds"]
    assert sum(end["payouts"]) == 0
    for seat in range(3):
        assert end["deadwood"][seat] == deadwood(hands[seat], rules)
    opened = {m["owner"] for m in melds}
    winner = end["winner"]
    if rules.burning:
        expected_burned = {s for s in range(3) if s not in opened and s != winner}
    else:
        expected_burned = set()
    assert set(end["burned"]) == expected_burned
    reason = end["reason"]
    if reason == "tongits":
        assert winner is not None and hands[winner] == []
    if reason in ("stock_out", "turn_cap"):
        candidates = [s for s in range(3) if s not in expected_burned]
        if not candidates:
            assert winner is None
        else:
            best = min(end["deadwood"][s] for s in candidates)
            assert winner in candidates and end["deadwood"][winner] == best
            tied = [s for s in candidates if end["deadwood"][s] == best]
            if rules.stock_out_tie == "fewer_cards":
                fewest = min(len(hands[s]) for s in tied)
                order = [(dealer + i) % 3 for i in range(3)]
                assert winner == next(s for s in order if s in tied and len(hands[s]) == fewest)
            elif rules.stock_out_tie == "last_drawer_loses":
                drawers = [e["seat"] for e in round_events if e["type"] == "drew"]
                if drawers and len(tied) > 1:
                    last = drawers[-1]
                    order = [(last + i) % 3 for i in (1, 2, 0)]
                    assert winner == next(s for s in order if s in tied)
            else:
                drawers = [e["seat"] for e in round_events if e["type"] == "drew"]
                if drawers and drawers[-1] in tied:
                    assert winner == drawers[-1]
    if reason == "draw":
        caller = next(e["seat"] for e in round_events if e["type"] == "draw_called")
        challengers = [e["seat"] for e in round_events if e["type"] == "challenged"]
        contenders = [caller] + challengers
        best = min(end["deadwood"][s] for s in contenders)
        assert winner in contenders and end["deadwood"][winner] == best
        tied_challengers = [s for s in challengers if end["deadwood"][s] == best]
        if tied_challengers:
            assert winner == tied_challengers[0]
    if winner is None:
        assert end["payouts"] == [0, 0, 0]
        return
    challenged = reason == "draw" and any(e["type"] == "challenged" for e in round_events)
    folders = {e["seat"] for e in round_events if e["type"] == "folded"}
    if reason == "tongits":
        amount = rules.tongits
    elif challenged:
        amount = rules.draw_won_challenged
    else:
        amount = rules.base
    aces = sum(1 for c in hands[winner] if c[0] == "A")
    aces += sum(1 for m in melds if m["owner"] == winner for c in m["cards"] if c[0] == "A")
    secret = sum(1 for m in melds if m["owner"] == winner and m["hidden"])
    expected = [0, 0, 0]
    for seat in range(3):
        if seat == winner:
            continue
        owed = amount
        if challenged and seat in folders and rules.draw_folded is not None:
            owed = rules.draw_folded
        pay = owed + rules.per_ace * aces + rules.per_secret_set * secret
        if seat in expected_burned:
            pay += rules.burned_penalty
        pay *= rules.stake
        expected[seat] = -pay
        expected[winner] += pay
    assert end["payouts"] == expected


def play_match(seed, rules, max_rounds=12):
    rng = random.Random(seed)
    log = [event_to_dict(new_game(rules, SEATS, rng))]
    state = fold(log)
    expected_dealer = log[0]["first_dealer"]
    wins = [0, 0, 0]
    for _ in range(max_rounds):
        dealt = deal(state, rng)
        rs = event_to_dict(dealt)
        assert rs["dealer"] == expected_dealer
        log.append(rs)
        state = evolve(state, dealt)
        round_events = []
        end = None
        for _step in range(400):
            check_position(state, rng)
            v = player_view(state, 0)
            if v["phase"] not in ACTIVE:
                break
            seat = v["turn"]
            if rules.turn_seconds and rng.random() < 0.08:
                events = time_out(state)
                dicts = [event_to_dict(e) for e in events]
                assert dicts[0]["type"] == "turn_timed_out" and dicts[0]["seat"] == seat
            else:
                events = decide(state, seat, pick(rng, legal_commands(state, seat)))
                dicts = [event_to_dict(e) for e in events]
            for e in events:
                state = evolve(state, e)
            log.extend(dicts)
            round_events.extend(dicts)
            ends = [d for d in dicts if d["type"] == "round_ended"]
            if ends:
                end = ends[0]
        assert end is not None, "round did not end"
        check_round_end(end, state, rules, round_events, rs["dealer"])
        if end["winner"] is not None:
            wins[end["winner"]] += 1
            expected_dealer = end["winner"]
        else:
            expected_dealer = (rs["dealer"] + 1) % 3
        assert player_view(state, 1)["round_wins"] == wins
        matched = [d for d in round_events if d["type"] == "match_ended"]
        if max(wins) >= rules.wins_to_match:
            assert len(matched) == 1 and matched[0]["round_wins"] == wins
            assert matched[0]["winner"] == wins.index(max(wins))
            assert player_view(state, 0)["phase"] == "match_over"
            break
        assert not matched
    assert json.dumps(log)
    replay = fold(json.loads(json.dumps(log)))
    assert [player_view(replay, s) for s in range(3)] == [player_view(state, s) for s in range(3)]


@pytest.mark.parametrize("seed", range(15))
def test_random_matches_standard(seed):
    play_match(seed, standard())


@pytest.mark.parametrize("seed", range(15))
def test_random_matches_house(seed):
    play_match(100 + seed, house())


@pytest.mark.parametrize("seed", range(15))
def test_random_matches_h19(seed):
    play_match(200 + seed, h19())


@pytest.mark.parametrize("seed", range(5))
def test_random_matches_h19_at_stake_10(seed):
    play_match(300 + seed, h19(stake=10))


def test_random_matches_short_turn_cap():
    play_match(7, standard(turn_cap=9, wins_to_match=2))
