"""docs/rules.md "Players, cards, deal" and docs/architecture.md "Contracts" new_game / deal /
round_started."""

import hashlib
import random

import pytest

from games.rules import deal, event_to_dict, evolve, fold, new_game, player_view
from tests.rules.tongits_helpers import (
    DECK,
    DRAW,
    SEATS,
    act,
    discard,
    game_started,
    illegal,
    meld,
    phase,
    play,
    position,
    same,
    standard,
    turn,
)


def test_first_dealer_chosen_at_random_and_recorded_in_game_started():
    rules = standard()
    dealers = set()
    for seed in range(40):
        e = event_to_dict(new_game(rules, SEATS, random.Random(seed)))
        assert e["type"] == "game_started"
        assert e["first_dealer"] in (0, 1, 2)
        dealers.add(e["first_dealer"])
        # same rng seed, same event
        assert event_to_dict(new_game(rules, SEATS, random.Random(seed))) == e
    assert dealers == {0, 1, 2}


def test_game_started_records_rules_and_seats():
    rules = standard(turn_cap=50)
    e = event_to_dict(new_game(rules, SEATS, random.Random(1)))
    assert type(rules).from_dict(e["rules"]) == rules
    assert len(e["seats"]) == 3
    for recorded, given in zip(e["seats"], SEATS, strict=True):
        assert recorded["kind"] == given["kind"]
        assert recorded["name"] == given["name"]


@pytest.mark.parametrize("first_dealer", [0, 1, 2])
def test_dealer_gets_13_others_12_stock_15(first_dealer):
    state = fold([game_started(first_dealer=first_dealer)])
    for seed in range(5):
        e = event_to_dict(deal(state, random.Random(seed)))
        assert e["type"] == "round_started"
        assert e["round"] == 1
        assert e["dealer"] == first_dealer
        sizes = [len(h) for h in e["hands"]]
        assert sizes[first_dealer] == 13
        assert sorted(sizes) == [12, 12, 13]
        assert len(e["stock"]) == 15
        everything = e["hands"][0] + e["hands"][1] + e["hands"][2] + e["stock"]
        assert len(everything) == 52 and same(everything, DECK)


def test_one_52_card_deck_no_jokers_in_every_deal():
    state = fold([game_started()])
    for seed in range(20):
        e = event_to_dict(deal(state, random.Random(seed)))
        codes = [c for h in e["hands"] for c in h] + e["stock"]
        assert sorted(codes) == sorted(DECK)


def test_deal_shuffles_with_the_given_rng():
    state = fold([game_started()])
    a = event_to_dict(deal(state, random.Random(123)))
    b = event_to_dict(deal(state, random.Random(123)))
    c = event_to_dict(deal(state, random.Random(456)))
    assert (a["hands"], a["stock"]) == (b["hands"], b["stock"])
    assert (a["hands"], a["stock"]) != (c["hands"], c["stock"])


def test_deck_commitment_is_sha256_of_salt_and_deal():
    state = fold([game_started()])
    e = event_to_dict(deal(state, random.Random(9)))
    text = e["salt"] + ":" + ",".join(e["hands"][0] + e["hands"][1] + e["hands"][2] + e["stock"])
    assert e["deck_commitment"] == hashlib.sha256(text.encode()).hexdigest()
    int(e["salt"], 16)  # random hex


def test_after_the_deal_the_dealer_acts_with_13_cards():
    state = fold([game_started(first_dealer=2)])
    rs = deal(state, random.Random(4))
    state = evolve(state, rs)
    v = player_view(state, 2)
    assert v["turn"] == 2 and v["phase"] == "play" and v["round"] == 1
    assert len(v["hand"]) == 13
    assert v["hand_counts"] == [12, 12, 13]
    assert v["stock_count"] == 15
    assert v["discard_pile"] == []
    assert v["melds"] == []


def test_dealer_first_turn_has_no_draw():
    # dealer 0 may meld and discard straight away; a draw is refused
    state = position(["4S 5S 6S 8C QD", "2C 3D", "9H TD"], "KS QS JS")
    assert phase(state) == "play" and turn(state) == 0
    assert illegal(state, 0, DRAW) in ("already_drew", "wrong_phase")
    state, events = play(state, (0, meld("4S 5S 6S")), (0, discard("QD")))
    assert [e["type"] for e in events] == ["melded", "discarded"]
    v = player_view(state, 0)
    assert v["stock_count"] == 3  # nothing was drawn
    assert v["hand"] == ["8C"]
    assert turn(state) == 1 and phase(state) == "start"


def test_dealer_first_turn_may_lay_off_without_drawing():
    state = position(["4S 5S 6S 7S QD", "2C 3D", "9H TD"], "KS QS JS")
    state, events = play(
        state, (0, meld("4S 5S 6S")), (0, {"type": "lay_off", "card": "7S", "meld_id": 1})
    )
    assert events[-1]["type"] == "laid_off"
    state, events = act(state, 0, discard("QD"))
    assert events[0]["type"] == "discarded"
