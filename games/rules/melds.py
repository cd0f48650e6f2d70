"""Meld recognition, meld enumeration and deadwood, all on 52-bit card masks.

Deadwood is the hot path of the whole server (views, bots, time-outs, round ends), so the meld
candidates of a hand are found with precomputed per-suit tables, and the best arrangement is a
memoised search over the few cards that belong to any meld at all.
"""

from __future__ import annotations

from functools import lru_cache

from .cards import BIT, CODES, POINTS, SUIT_MASK, points_of
from .ruleset import RuleSet

SET = "set"
RUN = "run"

RANK_MASKS: tuple[int, ...] = tuple(
    BIT[r] | BIT[r + 13] | BIT[r + 26] | BIT[r + 39] for r in range(13)
)


def _runs_in(bits: int, width: int) -> list[tuple[int, int]]:
    """All (start, length) intervals of three or more consecutive set bits."""
    out = []
    for start in range(width):
        length = 0
        while start + length < width and bits >> (start + length) & 1:
            length += 1
            if length >= 3:
                out.append((start, length))
    return out


def _build_run_tables() -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    low_table = []
    high_table = []
    for sm in range(1 << 13):
        low = [((1 << n) - 1) << s for s, n in _runs_in(sm, 13)]
        low_table.append(tuple(low))
        ext = sm | ((sm & 1) << 13)  # the ace again above the king
        high = list(low)
        for s, n in _runs_in(ext, 14):
            if s + n == 14 and s > 0:  # contains the high ace, not the low one
                body = ((1 << (n - 1)) - 1) << s
                high.append(body | 1)
        high_table.append(tuple(high))
    return tuple(low_table), tuple(high_table)


RUNS_LOW, RUNS_HIGH = _build_run_tables()


def meld_kind(mask: int, rules: RuleSet) -> str | None:
    """``"set"``, ``"run"`` or ``None`` for a group of cards."""
    n = mask.bit_count()
    if n < 3:
        return None
    low = mask & -mask
    first = low.bit_length() - 1
    if n <= 4 and mask & ~RANK_MASKS[first % 13] == 0:
        return SET
    suit = first // 13
    shift = suit * 13
    sm = mask >> shift
    if sm > SUIT_MASK:
        return None
    table = RUNS_HIGH if rules.ace_high_runs else RUNS_LOW
    # the whole suit-slice must itself be one of its own runs
    if sm in table[sm]:
        return RUN
    return None


def candidate_melds(hand: int, rules: RuleSet) -> list[int]:
    """Every meld (as a mask) that can be formed from cards of ``hand``, overlapping freely."""
    out = []
    for r in range(13):
        rm = hand & RANK_MASKS[r]
        if rm and rm.bit_count() >= 3:
            out.append(rm)
            if rm.bit_count() == 4:
                b = rm
                while b:
                    low = b & -b
                    out.append(rm ^ low)
                    b ^= low
    table = RUNS_HIGH if rules.ace_high_runs else RUNS_LOW
    for suit in range(4):
        shift = suit * 13
        sm = (hand >> shift) & SUIT_MASK
        if sm:
            for run in table[sm]:
                out.append(run << shift)
    return out


def run_display(mask: int) -> list[str]:
    """Codes of a meld in reading order: a run by rank, the ace last when it sits above a king."""
    return list(_display(mask))


@lru_cache(maxsize=1 << 14)
def _display(mask: int) -> tuple[str, ...]:
    cards = []
    b = mask
    while b:
        low = b & -b
        cards.append(low.bit_length() - 1)
        b ^= low
    ranks = {c % 13 for c in cards}
    if 0 in ranks and 12 in ranks:
        cards.sort(key=lambda c: (c % 13 or 13, c // 13))
    else:
        cards.sort(key=lambda c: (c % 13, c // 13))
    return tuple(CODES[c] for c in cards)


def _best_cover(melds: list[int]) -> tuple[int, tuple[int, ...]]:
    """Most points covered by pairwise disjoint melds, and those melds."""
    points = [points_of(m) for m in melds]
    cover = 0
    total_bits = 0
    for m in melds:
        cover |= m
        total_bits += m.bit_count()
    if total_bits == cover.bit_count():  # no overlaps: take them all
        return sum(points), tuple(melds)
    by_card: dict[int, list[int]] = {}
    for i, m in enumerate(melds):
        b = m
        while b:
            low = b & -b
            by_card.setdefault(low, []).append(i)
            b ^= low
    memo: dict[int, tuple[int, tuple[int, ...]]] = {}

    def best(rem: int) -> tuple[int, tuple[int, ...]]:
        if not rem:
            return 0, ()
        hit = memo.get(rem)
        if hit is not None:
            return hit
        low = rem & -rem
        result = best(rem ^ low)
        for i in by_card[low]:
            m = melds[i]
            if m & rem == m:
                sub_points, sub_melds = best(rem & ~m)
                if sub_points + points[i] > result[0]:
                    result = (sub_points + points[i], (m, *sub_melds))
        memo[rem] = result
        return result

    return best(cover)


@lru_cache(maxsize=1 << 16)
def best_arrangement(hand: int, ace_high_runs: bool) -> tuple[int, tuple[int, ...]]:
    """(deadwood, melds) for one least-deadwood arrangement of ``hand``.

    Cached: the same hand is looked at many times in a game (views, bots, time-outs, round end).
    """
    rules = _ACE_HIGH if ace_high_runs else _ACE_LOW
    melds = candidate_melds(hand, rules)
    if not melds:
        return points_of(hand), ()
    covered, chosen = _best_cover(melds)
    return points_of(hand) - covered, chosen


_ACE_LOW = RuleSet()
_ACE_HIGH = RuleSet(ace_high_runs=True)


def deadwood_of(hand: int, rules: RuleSet) -> int:
    return best_arrangement(hand, rules.ace_high_runs)[0]


def can_lay_off(meld: int, kind: str, card_bit: int, rules: RuleSet) -> bool:
    if meld & card_bit:
        return False
    return meld_kind(meld | card_bit, rules) == kind


def lay_off_targets(meld: int, kind: str, rules: RuleSet) -> int:
    """Mask of every card that could be laid off on this meld (at most four cards)."""
    if kind == SET:
        if meld.bit_count() != 3:
            return 0
        first = (meld & -meld).bit_length() - 1
        return RANK_MASKS[first % 13] & ~meld
    shift = ((meld & -meld).bit_length() - 1) // 13 * 13
    sm = meld >> shift
    near = ((sm << 1) | (sm >> 1)) & SUIT_MASK
    if rules.ace_high_runs and sm & (1 << 12):
        near |= 1  # an ace above the king
    if rules.ace_high_runs and sm & 1:
        near |= 1 << 11  # a queen below a high ace (Q-K-A grows downwards through the king)
    out = 0
    near &= ~sm
    while near:
        low = near & -near
        if meld_kind(meld | (low << shift), rules) == RUN:
            out |= low << shift
        near ^= low
    return out


__all__ = [
    "POINTS",
    "RUN",
    "SET",
    "best_arrangement",
    "can_lay_off",
    "candidate_melds",
    "deadwood_of",
    "meld_kind",
    "run_display",
]
