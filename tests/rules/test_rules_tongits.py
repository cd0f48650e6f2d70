"""docs/rules.md "How a round ends" - Tongits: the moment a hand is empty, that player wins."""

import pytest

from tests.rules.tongits_helpers import (
    DRAW,
    act,
    discard,
    house,
    illegal,
    lay,
    meld,
    phase,
    play,
    position,
    round_end,
    standard,
    take,
    types,
    view,
)


def test_tongits_when_hand_empties_by_a_meld():
    # seat 1 holds 5H 6H, draws 7H and melds its whole hand
    state = position(["KC QD", "5H 6H", "9S 8D"], "7H JS TS")
    state, _ = play(state, (0, discard("KC")), (1, DRAW))
    state, events = act(state, 1, meld("5H 6H 7H"))
    assert types(events) == ["melded", "round_ended"]
    end = round_end(events)
    assert end["reason"] == "tongits" and end["winner"] == 1 and end["round"] == 1
    assert end["deadwood"] == [10, 0, 17]
    # tongits 3 from each loser; seats 0 and 2 never opened: burned, +1 each
    assert sorted(end["burned"]) == [0, 2]
    assert end["payouts"] == [-4, 8, -4]
    assert phase(state) == "round_over"


def test_tongits_when_hand_empties_by_a_lay_off():
    state = position(["5H 6H 7H 8H", "9S 2C", "KS 8D"], "7C JS TS")
    state, events = play(state, (0, meld("5H 6H 7H")), (0, lay("8H", 1)))
    assert types(events) == ["melded", "laid_off", "round_ended"]
    end = round_end(events)
    assert end["reason"] == "tongits" and end["winner"] == 0
    # 3 + burned 1 from each of seats 1 and 2
    assert end["payouts"] == [8, -4, -4]


def test_tongits_when_hand_empties_by_the_discard_of_the_last_card():
    state = position(["KC QD", "2C 3C 4C", "9S 8D"], "KS JS TS")
    state, _ = play(state, (0, discard("KC")), (1, DRAW), (1, meld("2C 3C 4C")))
    assert view(state, 1)["hand"] == ["KS"]
    state, events = act(state, 1, discard("KS"))
    assert types(events) == ["discarded", "round_ended"]
    end = round_end(events)
    assert end["reason"] == "tongits" and end["winner"] == 1


def test_tongits_when_hand_empties_by_taking_the_discard():
    state = position(["7H KC", "7S 7D", "9S 8D"], "KS JS TS")
    state, _ = act(state, 0, discard("7H"))
    state, events = act(state, 1, take("7S 7D"))
    assert types(events) == ["took_discard", "round_ended"]
    end = round_end(events)
    assert end["reason"] == "tongits" and end["winner"] == 1
    assert end["payouts"] == [-4, 8, -4]


def test_tongits_ends_round_even_when_turn_drew_last_stock_card():
    state = position(["KC QD", "5H 6H", "9S 8D"], "7H")
    state, _ = play(state, (0, discard("KC")), (1, DRAW))
    assert view(state, 1)["stock_count"] == 0
    state, events = act(state, 1, meld("5H 6H 7H"))
    end = round_end(events)
    assert end["reason"] == "tongits" and end["winner"] == 1


def test_tongits_on_last_stock_card_by_discard_is_tongits_not_stock_out():
    state = position(["KC QD", "2C 3C 4C", "9S 8D"], "KS")
    state, _ = play(state, (0, discard("KC")), (1, DRAW), (1, meld("2C 3C 4C")))
    state, events = act(state, 1, discard("KS"))
    end = round_end(events)
    assert end["reason"] == "tongits" and end["winner"] == 1


def test_unopened_player_can_win_by_tongits():
    # seat 1 never owns a meld: it lays 8H off on seat 0's run and discards its last card
    state = position(["5H 6H 7H KC QD", "8H", "9S 8D"], "2D JS TS")
    state, _ = play(state, (0, meld("5H 6H 7H")), (0, discard("KC")), (1, DRAW), (1, lay("8H", 1)))
    state, events = act(state, 1, discard("2D"))
    end = round_end(events)
    assert end["reason"] == "tongits" and end["winner"] == 1
    assert 1 not in end["burned"]
    assert end["burned"] == [2]  # seat 0 opened, seat 2 did not
    # tongits 3 from each loser, seat 2 burned +1; no aces
    assert end["payouts"] == [-3, 7, -4]
    assert not any(m["owner"] == 1 for m in view(state, 0)["melds"])


@pytest.mark.parametrize("rules", [standard(), house()], ids=["standard", "house"])
def test_no_command_accepted_after_the_round_ended(rules):
    state = position(["KC QD", "5H 6H", "9S 8D"], "7H JS TS", rules=rules)
    state, _ = play(state, (0, discard("KC")), (1, DRAW), (1, meld("5H 6H 7H")))
    assert phase(state) == "round_over"
    for seat in range(3):
        assert illegal(state, seat, DRAW) == "no_round_in_play"
        assert illegal(state, seat, discard("9S")) == "no_round_in_play"
