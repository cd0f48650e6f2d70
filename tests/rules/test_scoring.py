"""games.rules.scoring: the one implementation of round winners, payouts and match placements
that the engine and the hard bot's playouts share."""

import dataclasses

import pytest

from games.rules import RuleSet
from games.rules.scoring import (
    draw_winner,
    placements,
    points_winner,
    round_payouts,
    round_winner,
)

STANDARD = RuleSet.standard()
H19 = RuleSet.h19()


@pytest.mark.parametrize(
    ("winner", "wins", "chips", "places"),
    [
        (0, [3, 1, 0], [5, -2, -3], [1, 2, 3]),
        (2, [1, 1, 3], [-2, -2, 4], [2, 2, 1]),  # equal seats share the better place
        (1, [2, 3, 2], [4, -1, -3], [2, 1, 3]),  # same rounds: chips decide
        (1, [2, 3, 2], [9, -6, -3], [2, 1, 3]),  # the winner is first whatever its chips
        (0, [3, 2, 2], [-9, 5, 4], [1, 2, 3]),
        (None, [1, 1, 0], [2, 2, -4], [1, 1, 3]),  # no winner: rounds, then chips
        (None, [0, 0, 0], [0, 0, 0], [1, 1, 1]),
    ],
)
def test_placements(winner, wins, chips, places):
    assert placements(winner, wins, chips) == places


def test_draw_winner():
    assert draw_winner(0, [(1, "fold"), (2, "fold")], [9, 1, 1]) == (0, False)
    assert draw_winner(0, [(1, "challenge"), (2, "fold")], [5, 5, 1]) == (1, True)
    assert draw_winner(0, [(1, "challenge"), (2, "challenge")], [5, 6, 6]) == (0, True)
    assert draw_winner(1, [(2, "challenge"), (0, "challenge")], [3, 5, 3]) == (2, True)


@pytest.mark.parametrize(
    ("tie", "winner"), [("last_drawer", 2), ("last_drawer_loses", 1), ("fewer_cards", 2)]
)
def test_points_winner_tie_rules(tie, winner):
    rules = dataclasses.replace(STANDARD, stock_out_tie=tie)
    # seats 1 and 2 tie on 5 with 3 and 2 cards; seat 2 drew last; dealer 0
    assert points_winner(rules, [9, 5, 5], (), [4, 3, 2], 2, 0) == winner


def test_points_winner_all_burned():
    assert points_winner(STANDARD, [1, 2, 3], (0, 1, 2), [1, 1, 1], 0, 0) is None


def test_round_winner_burns_unopened_losers_only_where_burning():
    args = ([4, 9, 8], [True, True, False], [2, 2, 3], -1, (), 1, 0)
    dw, opened, counts, caller, answers, last, dealer = args
    assert round_winner(
        STANDARD, "tongits", 1, dw, opened, counts, caller, answers, last, dealer
    ) == (
        1,
        False,
        (2,),
    )
    house = RuleSet.house()
    assert round_winner(
        house, "stock_out", None, dw, opened, counts, caller, answers, last, dealer
    ) == (
        0,
        False,
        (),
    )


def test_round_payouts_zero_sum_and_stake():
    for rules in (STANDARD, H19, dataclasses.replace(H19, stake=10)):
        for reason, challenged in (("tongits", False), ("draw", True), ("draw", False)):
            pay = round_payouts(
                rules, reason, 0, challenged, [(1, "challenge"), (2, "fold")], (2,), 2, 1
            )
            assert sum(pay) == 0
    one = round_payouts(H19, "draw", 0, True, [(1, "challenge"), (2, "fold")], (2,), 2, 0)
    ten = round_payouts(
        dataclasses.replace(H19, stake=10),
        "draw",
        0,
        True,
        [(1, "challenge"), (2, "fold")],
        (2,),
        2,
        0,
    )
    assert one == (5 + 6, -5, -6)  # challenger 3 + 2 aces; folder draw_folded 1 + 2 aces + burned 3
    assert ten == tuple(10 * p for p in one)
    assert round_payouts(H19, "stock_out", None, False, [], (0,), 0, 0) == (0, 0, 0)
