"""Card-level judgements on masks, shared by the ``normal`` bot and the ``hard`` bot's playouts.

Everything here is a cheap bit trick over precomputed tables, because the search bot calls it
thousands of times per decision.
"""

from __future__ import annotations

from functools import lru_cache

from ..cards import BIT
from ..melds import RANK_MASKS, SET, lay_off_targets, meld_kind
from ..ruleset import RuleSet

_LOW = RuleSet()
_HIGH = RuleSet(ace_high_runs=True)


def _build_pairs(ace_high: bool) -> tuple[tuple[int, ...], ...]:
    rules = _HIGH if ace_high else _LOW
    out = []
    for c in range(52):
        near = [x for x in range(52) if x != c and (x % 13 == c % 13 or x // 13 == c // 13)]
        pairs = []
        for i, a in enumerate(near):
            for b in near[i + 1 :]:
                if meld_kind(BIT[c] | BIT[a] | BIT[b], rules) is not None:
                    pairs.append(BIT[a] | BIT[b])
        out.append(tuple(pairs))
    return tuple(out)


_PAIRS: dict[bool, tuple[tuple[int, ...], ...]] = {}


def pairs_for(ace_high: bool) -> tuple[tuple[int, ...], ...]:
    """Per card, every two-card mask that makes a three-card meld with it."""
    table = _PAIRS.get(ace_high)
    if table is None:
        table = _PAIRS[ace_high] = _build_pairs(ace_high)
    return table


def meld_partners(card: int, hand: int, ace_high: bool) -> int:
    """How many two-card combinations in ``hand`` would meld with ``card`` (0: it is no use)."""
    n = 0
    for p in pairs_for(ace_high)[card]:
        if hand & p == p:
            n += 1
    return n


def potential(card: int, hand: int, live: int, ace_high: bool) -> int:
    """Half-made melds through ``card``: one partner in hand and the missing card still live."""
    n = 0
    for p in pairs_for(ace_high)[card]:
        h = hand & p
        if h and h != p and live & (p ^ h):
            n += 1
    return n


def take_risk(card: int, unknown: int, ace_high: bool) -> int:
    """Number of unseen two-card combinations that would let a player take ``card``."""
    n = 0
    for p in pairs_for(ace_high)[card]:
        if unknown & p == p:
            n += 1
    return n


@lru_cache(maxsize=1 << 15)
def targets(mask: int, is_set: bool, ace_high: bool) -> int:
    """Cards that could be laid off on an exposed meld (cached ``lay_off_targets``)."""
    return lay_off_targets(mask, SET if is_set else "run", _HIGH if ace_high else _LOW)


#: Median deadwood of an opened player by cards in hand after its discard, from greedy self-play.
_DW_BY_COUNT = (0, 2, 6, 10, 15, 21, 28, 34, 41, 51, 58, 65, 72, 80)


def typical_deadwood(cards_in_hand: int) -> int:
    return _DW_BY_COUNT[min(cards_in_hand, len(_DW_BY_COUNT) - 1)]


ACES = RANK_MASKS[0]


def pick_opener(melds: tuple[int, ...], unknown: int, ace_high: bool) -> int:
    """The meld to expose when holding the others back: a four of a kind (it can go down as a
    secret set), else the one opponents could lay off the fewest unseen cards on."""
    best, best_key = melds[0], (9, 9, 0)
    for m in melds:
        is_set = m & ~RANK_MASKS[((m & -m).bit_length() - 1) % 13] == 0
        four = is_set and m.bit_count() == 4
        live = (targets(m, is_set, ace_high) & unknown).bit_count()
        key = (0 if four else 1, live, -m.bit_count())
        if key < best_key:
            best, best_key = m, key
    return best


def left_after_lay_offs(loose: int, table: list[tuple[int, bool]], ace_high: bool) -> int:
    """The loose cards that would stay in hand after laying off all it can on ``table``
    (``(mask, is_set)`` of every meld one may lay off on), runs growing card by card."""
    masks = [m for m, _ in table]
    moved = True
    while loose and moved:
        moved = False
        for i, (_, is_set) in enumerate(table):
            fit = targets(masks[i], is_set, ace_high) & loose
            if fit:
                masks[i] |= fit & -fit
                loose &= ~(fit & -fit)
                moved = True
    return loose


class Params:
    """Knobs of the ``normal`` policy, shared by the ``normal`` bot and the ``hard`` bot's playouts.

    ``call_frac``/``challenge_frac``: call or challenge Draw with deadwood at most this times the
    typical deadwood of the opponent (the caller) with that many cards; ``keep``: points a live
    half-meld is worth keeping; ``danger``: points it is worth not to feed the next seat a card
    it surely takes (scaled by the chance it holds the two cards).
    """

    __slots__ = ("call_frac", "challenge_frac", "keep", "danger")

    def __init__(
        self,
        call_frac: float = 1.2,
        challenge_frac: float = 1.2,
        keep: float = 6.0,
        danger: float = 10.0,
    ) -> None:
        self.call_frac = call_frac
        self.challenge_frac = challenge_frac
        self.keep = keep
        self.danger = danger
