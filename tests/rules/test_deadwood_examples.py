"""docs/rules.md "Deadwood": least points left over any arrangement of the hand into melds.

Points: ace 1, 2-10 face value, J Q K 10.  Each expected value has its arithmetic beside it.
"""

import pytest

from games.rules import deadwood
from tests.rules.tongits_helpers import house, standard

BOTH = [
    # (hand, deadwood under standard and house alike, arithmetic)
    ("", 0, "empty hand"),
    ("KS", 10, "K = 10"),
    ("AS", 1, "A = 1"),
    ("TH", 10, "10 = 10"),
    ("9H 8C", 17, "no meld: 9 + 8"),
    ("7H 7D", 14, "a pair is no meld: 7 + 7"),
    ("AS 2S 3S", 0, "A-2-3 run"),
    ("KS AS 2S", 13, "K-A-2 never a run: 10 + 1 + 2"),
    ("4H 5D 6H", 15, "mixed suits: 4 + 5 + 6"),
    ("4H 5H 7H", 16, "gap: 4 + 5 + 7"),
    ("TH JH QH KH", 0, "run of four"),
    ("7H 7D 7S 8H 9H", 14, "run 7H 8H 9H leaves 7D 7S = 14 (the set leaves 8 + 9 = 17)"),
    ("4H 5H 6H 7H 7D 7S", 0, "run 4H-6H + set 7H 7D 7S (the long run leaves 7 + 7 = 14)"),
    ("3C 3D 3H 4H 5H", 6, "run 3H 4H 5H leaves 3C 3D = 6 (the set leaves 4 + 5 = 9)"),
    ("5C 5D 5H 5S 6S 7S", 0, "set 5C 5D 5H + run 5S 6S 7S"),
    ("9C 9D 9H 9S TS JS", 0, "set 9C 9D 9H + run 9S TS JS"),
    ("2C 3C 4C 4D 4H 4S", 0, "run 2C-4C + set 4D 4H 4S"),
    ("AC AD AH 2C 3C", 2, "run AC 2C 3C leaves AD AH = 2 (the set leaves 2 + 3 = 5)"),
    ("AS 2S 3S 4S 5S 6S", 0, "one run of six (or two of three)"),
    (
        "7C 7D 7H 7S 5C 6C 8D 9D",
        11,
        "set 7C 7H 7S + run 7D 8D 9D leave 5C 6C = 11; runs 5C-7C, 7D-9D leave 7H 7S = 14; "
        "set 7D 7H 7S + run 5C-7C leave 8 + 9 = 17; the set of four leaves 5+6+8+9 = 28",
    ),
    (
        "AH 2H 3H 4H 4D 4C 9S TS JS QS KD KC 5D",
        25,
        "run AH-3H + set 4H 4D 4C + run 9S-QS leave KD KC 5D = 10 + 10 + 5 "
        "(run AH-4H instead leaves 4D 4C too: 33)",
    ),
    (
        "2D 3D 4D 5D 6D 6C 6H 8S 8H 8C JD QD KC",
        30,
        "run 2D-5D + set 6D 6C 6H + set 8S 8H 8C leave JD QD KC = 30 "
        "(run 2D-6D leaves 6C 6H too: 42)",
    ),
    (
        "3S 4S 5S 6S 6H 6D 9C 9D 9H 9S TC JC",
        0,
        "run 3S-5S + set 6S 6H 6D + set 9D 9H 9S + run 9C TC JC",
    ),
]

BY_RULES = [
    # (hand, standard, house, arithmetic)
    ("QS KS AS", 21, 0, "Q-K-A: a run only with ace_high_runs; else 10 + 10 + 1"),
    ("JS QS KS AS 2S", 3, 2, "standard: run J-Q-K leaves A + 2 = 3; house: run J-Q-K-A leaves 2"),
    ("QH KH AH 2H 3H", 20, 5, "standard: run A-2-3 leaves Q + K = 20; house: Q-K-A leaves 2 + 3"),
    ("KH AH 2H", 13, 13, "K-A-2 never a run, even with ace_high_runs: 10 + 1 + 2"),
]


@pytest.mark.parametrize("hand,expected,why", BOTH, ids=[b[0] or "empty" for b in BOTH])
def test_deadwood_example(hand, expected, why):
    for rules in (standard(), house()):
        assert deadwood(hand.split(), rules) == expected, why


@pytest.mark.parametrize("hand,std,hse,why", BY_RULES, ids=[b[0] for b in BY_RULES])
def test_deadwood_depends_on_ace_high_runs(hand, std, hse, why):
    assert deadwood(hand.split(), standard()) == std, why
    assert deadwood(hand.split(), house()) == hse, why
    assert deadwood(hand.split(), standard(ace_high_runs=True)) == hse, why


def test_deadwood_does_not_depend_on_card_order():
    hand = ["7C", "7D", "7H", "7S", "5C", "6C", "8D", "9D"]
    assert deadwood(hand, standard()) == deadwood(list(reversed(hand)), standard()) == 11
