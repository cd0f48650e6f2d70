"""docs/rules.md "Match" and the dealer rotation of "Players, cards, deal"."""

import random

from games.rules import deal, event_from_dict, event_to_dict, evolve, fold
from tests.rules.tongits_helpers import (
    DRAW,
    act,
    discard,
    game_started,
    illegal,
    meld,
    phase,
    play,
    round_end,
    round_started,
    standard,
    types,
    view,
)


def start(rules=None, first_dealer=0):
    return fold([game_started(rules, first_dealer)])


def begin(state, dealer, round_no, hands, stock):
    return evolve(state, event_from_dict(round_started(hands, stock, dealer, round_no)))


def dealer_wins(state, dealer, round_no):
    """A round the dealer wins by Tongits in its first turn (melds 2C 3C 4C, discards KD)."""
    hands = [["9H", "8S"], ["7D", "6S"], ["5H", "4D"]]
    hands[dealer] = ["2C", "3C", "4C", "KD"]
    state = begin(state, dealer, round_no, hands, "QD JD TD")
    return play(state, (dealer, meld("2C 3C 4C")), (dealer, discard("KD")))


def seat_after_dealer_wins(state, dealer, round_no, offset):
    """A round won by Tongits by seat dealer + offset (1 or 2) on its first turn."""
    winner = (dealer + offset) % 3
    hands = [["9H", "8S"], ["7D", "6S"], ["2D", "4D"]]
    hands[dealer] = ["KD", "QD"]
    hands[winner] = ["5H", "6H"]
    stock = "7H 9D 8D" if offset == 1 else "9D 7H 8D"
    state = begin(state, dealer, round_no, hands, stock)
    moves = [(dealer, discard("KD"))]
    if offset == 2:
        middle = (dealer + 1) % 3
        moves += [(middle, DRAW), (middle, discard("9D"))]
    moves += [(winner, DRAW), (winner, meld("5H 6H 7H"))]
    state, events = play(state, *moves)
    assert round_end(events)["winner"] == winner
    return state, events


def no_winner_round(state, dealer, round_no):
    """Nobody opens before the stock (2 cards) runs out: all burned, no winner."""
    hands = [["9H"], ["8S"], ["7D"]]
    hands[dealer] = ["KD", "5H"]
    state = begin(state, dealer, round_no, hands, "QD JD")
    s1, s2 = (dealer + 1) % 3, (dealer + 2) % 3
    state, events = play(
        state,
        (dealer, discard("KD")),
        (s1, DRAW),
        (s1, discard("QD")),
        (s2, DRAW),
        (s2, discard("JD")),
    )
    assert round_end(events)["winner"] is None
    return state, events


def next_deal(state, seed=0):
    return event_to_dict(deal(state, random.Random(seed)))


def test_next_dealer_is_round_winner():
    state, _ = dealer_wins(start(), 0, 1)
    e = next_deal(state)
    assert e["round"] == 2 and e["dealer"] == 0 and len(e["hands"][0]) == 13
    state, _ = seat_after_dealer_wins(start(), 0, 1, offset=2)
    e = next_deal(state)
    assert e["dealer"] == 2 and len(e["hands"][2]) == 13
    assert sorted(len(h) for h in e["hands"]) == [12, 12, 13] and len(e["stock"]) == 15


def test_no_winner_deal_passes_to_next_seat():
    for dealer in (0, 1, 2):
        state, _ = no_winner_round(start(first_dealer=dealer), dealer, 1)
        e = next_deal(state)
        assert e["dealer"] == (dealer + 1) % 3
        assert len(e["hands"][(dealer + 1) % 3]) == 13


def test_round_wins_are_counted_in_view():
    state, _ = dealer_wins(start(), 0, 1)
    assert view(state, 1)["round_wins"] == [1, 0, 0]
    state, _ = seat_after_dealer_wins(state, 0, 2, offset=1)
    assert view(state, 2)["round_wins"] == [1, 1, 0]
    assert view(state, 0)["round"] == 2


def test_rounds_without_a_winner_count_for_nobody():
    state, events = no_winner_round(start(), 0, 1)
    assert view(state, 0)["round_wins"] == [0, 0, 0]
    assert "match_ended" not in types(events)
    assert phase(state) == "round_over"


def test_match_ends_at_three_round_wins():
    state = start()
    state, events = dealer_wins(state, 0, 1)
    assert "match_ended" not in types(events)
    state, events = no_winner_round(state, 0, 2)  # deal passes to seat 1 afterwards
    state, events = seat_after_dealer_wins(state, 1, 3, offset=2)  # seat 0 wins
    assert "match_ended" not in types(events) and phase(state) == "round_over"
    assert view(state, 0)["round_wins"] == [2, 0, 0]
    state, events = dealer_wins(state, 0, 4)
    assert types(events)[-2:] == ["round_ended", "match_ended"]
    end = events[-1]
    assert end["winner"] == 0 and end["round_wins"] == [3, 0, 0]
    assert phase(state) == "match_over"
    assert view(state, 2)["round_wins"] == [3, 0, 0]
    for seat in range(3):
        illegal(state, seat, DRAW)


def test_match_winner_is_first_to_reach_wins_to_match():
    state = start(standard(wins_to_match=2))
    state, _ = seat_after_dealer_wins(state, 0, 1, offset=1)  # seat 1: 1 win
    state, _ = seat_after_dealer_wins(state, 1, 2, offset=1)  # seat 2: 1 win
    state, events = seat_after_dealer_wins(state, 2, 3, offset=2)  # seat 1: 2 wins
    end = events[-1]
    assert end["type"] == "match_ended"
    assert end["winner"] == 1 and end["round_wins"] == [0, 2, 1]


def test_wins_to_match_one_ends_match_with_first_win():
    state, events = dealer_wins(start(standard(wins_to_match=1)), 0, 1)
    assert types(events)[-1] == "match_ended" and events[-1]["winner"] == 0
    assert phase(state) == "match_over"


def test_meld_ids_restart_from_1_each_round():
    state, events = dealer_wins(start(), 0, 1)
    assert [e["meld_id"] for e in events if e["type"] == "melded"] == [1]
    state, events = dealer_wins(state, 0, 2)
    assert [e["meld_id"] for e in events if e["type"] == "melded"] == [1]


def test_dealt_round_after_a_win_plays_normally():
    state, _ = seat_after_dealer_wins(start(), 0, 1, offset=1)
    rs = deal(state, random.Random(3))
    state = evolve(state, rs)
    v = view(state, 1)
    assert v["round"] == 2 and v["turn"] == 1 and v["phase"] == "play"
    assert len(v["hand"]) == 13 and v["melds"] == [] and v["discard_pile"] == []
    state, events = act(state, 1, discard(v["hand"][0]))
    assert events[0]["type"] == "discarded" and view(state, 0)["turn"] == 2
