"""``deadwood`` against an independent brute force written from docs/rules.md alone."""

from __future__ import annotations

from functools import cache
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from games.rules import RuleSet, deadwood

RANKS = "A23456789TJQK"
SUITS = "CDHS"
ALL = [r + s for r in RANKS for s in SUITS]


def points(code: str) -> int:
    return min(RANKS.index(code[0]) + 1, 10)


def is_meld(cards: tuple[str, ...], ace_high: bool) -> bool:
    if len(cards) < 3:
        return False
    if len({c[0] for c in cards}) == 1:
        return len(cards) <= 4
    if len({c[1] for c in cards}) != 1:
        return False
    ranks = sorted(RANKS.index(c[0]) for c in cards)
    if ranks == list(range(ranks[0], ranks[0] + len(ranks))):
        return True
    if ace_high and ranks[0] == 0:  # the ace played above the king
        high = sorted(r if r else 13 for r in ranks)
        return high == list(range(high[0], high[0] + len(high)))
    return False


def brute_force(hand: list[str], ace_high: bool) -> int:
    """Try every way to pull a meld containing the first remaining card, or leave it."""

    @cache
    def best(rest: tuple[str, ...]) -> int:
        if not rest:
            return 0
        first, others = rest[0], rest[1:]
        result = points(first) + best(others)
        for size in (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12):
            for group in combinations(others, size):
                if is_meld((first, *group), ace_high):
                    left = tuple(c for c in others if c not in group)
                    result = min(result, best(left))
        return result

    return best(tuple(sorted(hand)))


# hands biased towards melds: few ranks and suits make sets and runs likely
dense_hands = st.integers(3, 9).flatmap(
    lambda width: st.lists(
        st.sampled_from([r + s for r in RANKS[:width] + "K" for s in SUITS]),
        unique=True,
        max_size=13,
    )
)
any_hands = st.lists(st.sampled_from(ALL), unique=True, max_size=13)


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(hand=st.one_of(dense_hands, any_hands), ace_high=st.booleans())
def test_deadwood_equals_brute_force_minimum(hand: list[str], ace_high: bool) -> None:
    rules = RuleSet(ace_high_runs=ace_high)
    assert deadwood(hand, rules) == brute_force(hand, ace_high)


def test_deadwood_accepts_ten_spelled_10() -> None:
    assert deadwood(["10H", "JH", "QH", "2C"], RuleSet()) == 2
