"""docs/architecture.md "Contracts" player_view: one seat's JSON view, nothing hidden from it,
nothing more."""

import json
import random

from games.rules import deal, event_from_dict, event_to_dict, evolve, fold
from tests.rules.tongits_helpers import (
    CALL,
    DECK,
    DRAW,
    act,
    discard,
    draw_setup,
    game_started,
    meld,
    meld_in_view,
    play,
    position,
    round_end,
    round_started,
    same,
    view,
)

FIELDS = {
    "hand",
    "melds",
    "discard_pile",
    "stock_count",
    "hand_counts",
    "turn",
    "phase",
    "round",
    "round_wins",
    "blocked",
    "last_round",
}


def dealt(seed=11, salt="5a17c0ffee"):
    state = fold([game_started()])
    d = event_to_dict(deal(state, random.Random(seed)))
    d["salt"] = salt
    return evolve(state, event_from_dict(d)), d


def test_view_has_the_contract_fields_and_is_json():
    state, _ = dealt()
    for seat in range(3):
        v = view(state, seat)
        assert set(v) >= FIELDS, FIELDS - set(v)
        json.dumps(v)


def test_phase_dealing_before_the_first_deal():
    state = fold([game_started()])
    v = view(state, 0)
    assert v["phase"] == "dealing"
    assert not v["hand"]


def test_view_shows_own_hand_and_no_other_card_salt_or_stock():
    state, d = dealt()
    for seat in range(3):
        v = view(state, seat)
        assert same(v["hand"], d["hands"][seat])
        text = json.dumps(v)
        for code in DECK:
            if code not in d["hands"][seat]:
                assert f'"{code}"' not in text, (seat, code)
        assert d["salt"] not in text
        assert "stock" not in v


def test_view_counts_turn_and_discard_pile_top_last():
    state = position(["2C 3C 4C 9H KH", "8S 7D", "6S 5D"], "QD JD TD 9D 8D")
    state, _ = play(state, (0, meld("2C 3C 4C")), (0, discard("KH")), (1, DRAW), (1, discard("QD")))
    v = view(state, 2)
    assert v["discard_pile"] == ["KH", "QD"]
    assert v["stock_count"] == 4 and v["hand_counts"] == [1, 2, 2]
    assert v["turn"] == 2 and v["phase"] == "start" and v["round"] == 1
    m = v["melds"][0]
    assert m["meld_id"] == 1 and m["owner"] == 0 and m["kind"] == "run"
    assert same(m["cards"], "2C 3C 4C") and m["hidden"] is False and m["size"] == 3


def test_phases_through_a_round():
    state = draw_setup(0, ["9H", "2H", "3S"])
    assert view(state, 1)["phase"] == "start"
    state2, _ = act(state, 0, DRAW)
    assert view(state2, 1)["phase"] == "play"
    state, _ = act(state, 0, CALL)
    assert view(state, 2)["phase"] == "draw_call" and view(state, 2)["turn"] == 1
    state, _ = play(state, (1, {"type": "fold"}), (2, {"type": "fold"}))
    assert view(state, 0)["phase"] == "round_over"


def test_secret_set_cards_hidden_from_opponents_until_round_end():
    state = position(["7C 7D 7H 7S 9H KH", "5H 9D", "4S 8D"], "KC QC JC")
    state, _ = act(state, 0, meld("7C 7D 7H 7S", hidden=True))
    own = meld_in_view(state, 1, 0)
    assert own["hidden"] is True and same(own["cards"], "7C 7D 7H 7S") and own["size"] == 4
    for seat in (1, 2):
        m = meld_in_view(state, 1, seat)
        assert m["hidden"] is True and m["cards"] is None and m["size"] == 4 and m["owner"] == 0
        text = json.dumps(view(state, seat))
        for code in ("7C", "7D", "7H", "7S"):
            assert f'"{code}"' not in text
    # still hidden while the round runs
    state, _ = play(state, (0, discard("KH")), (1, DRAW), (1, discard("KC")))
    for seat in (1, 2):
        assert meld_in_view(state, 1, seat)["cards"] is None
    assert same(meld_in_view(state, 1, 0)["cards"], "7C 7D 7H 7S")


def test_secret_set_revealed_once_round_over():
    state = position(["7C 7D 7H 7S KH", "5H 9D", "4S 8D"], "KC QC JC")
    state, events = play(state, (0, meld("7C 7D 7H 7S", hidden=True)), (0, discard("KH")))
    assert round_end(events)["reason"] == "tongits"
    for seat in range(3):
        m = meld_in_view(state, 1, seat)
        assert same(m["cards"], "7C 7D 7H 7S")


def test_hands_appear_once_the_round_is_over():
    state = position(["KC QD", "5H 6H", "9S 8D"], "7H JS TS")
    state, _ = play(state, (0, discard("KC")), (1, DRAW))
    assert '"9S"' not in json.dumps(view(state, 1))
    state, events = act(state, 1, meld("5H 6H 7H"))
    for seat in range(3):
        v = view(state, seat)
        assert same(v["hands"][0], "QD") and v["hands"][1] == [] and same(v["hands"][2], "9S 8D")
        assert v["last_round"] == round_end(events)


def test_last_round_is_the_last_round_ended():
    state = position(["KC QD", "5H 6H", "9S 8D"], "7H JS TS")
    v = view(state, 0)
    assert not v["last_round"]
    state, events = play(state, (0, discard("KC")), (1, DRAW), (1, meld("5H 6H 7H")))
    end = round_end(events)
    # next round dealt: last_round still shows round 1's result, hands are private again
    state = evolve(
        state, event_from_dict(round_started(["2C 3C", "4C 5C 6S", "7C"], "8C 9C", 1, 2))
    )
    v = view(state, 0)
    assert v["last_round"] == end and v["round"] == 2 and v["round_wins"] == [0, 1, 0]
    assert v["phase"] == "play" and v["turn"] == 1
    assert '"6S"' not in json.dumps(v)
