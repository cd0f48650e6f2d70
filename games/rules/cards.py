"""Cards as small integers and 52-bit masks, with a two-character text round trip.

A card's index is ``suit * 13 + rank`` (rank 0 = ace ... 12 = king; suits C, D, H, S), so a hand
is one ``int`` bitmask and each suit is a 13-bit slice: runs become bit tricks, not loops.
"""

from __future__ import annotations

from collections.abc import Iterable

RANKS = "A23456789TJQK"
SUITS = "CDHS"
FULL_DECK = (1 << 52) - 1
SUIT_MASK = (1 << 13) - 1

CODES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
_INDEX: dict[str, int] = {code: i for i, code in enumerate(CODES)}
_INDEX.update({"10" + s: _INDEX["T" + s] for s in SUITS})
_INDEX.update({code.lower(): i for code, i in list(_INDEX.items())})
POINTS: tuple[int, ...] = tuple(min(i % 13 + 1, 10) for i in range(52))
BIT: tuple[int, ...] = tuple(1 << i for i in range(52))


def parse_card(code: object) -> int:
    """Index of a card code (``"7H"``, ``"TD"``, ``"10D"``); ``ValueError`` if it is not one."""
    try:
        return _INDEX[code]  # type: ignore[index]
    except (KeyError, TypeError):
        raise ValueError(f"not a card: {code!r}") from None


def code(card: int) -> str:
    return CODES[card]


def mask_of_codes(codes: Iterable[str]) -> int:
    m = 0
    for c in codes:
        m |= BIT[_INDEX[c]]
    return m


def cards_of(mask: int) -> list[int]:
    """Card indices in a mask, ascending (suit-major)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def codes_of(mask: int) -> list[str]:
    """Card codes of a mask in display order: by rank, then suit."""
    return [CODES[c] for c in sorted(cards_of(mask), key=_display_key)]


def _display_key(card: int) -> tuple[int, int]:
    return (card % 13, card // 13)


#: Points of every subset of one suit's 13 ranks (``points_of`` adds four look-ups).
_SUIT_POINTS: tuple[int, ...] = tuple(
    sum(POINTS[r] for r in range(13) if sm >> r & 1) for sm in range(1 << 13)
)


def points_of(mask: int) -> int:
    """Points of the cards in ``mask`` (the hot path of deadwood: one table look-up a suit)."""
    return (
        _SUIT_POINTS[mask & SUIT_MASK]
        + _SUIT_POINTS[mask >> 13 & SUIT_MASK]
        + _SUIT_POINTS[mask >> 26 & SUIT_MASK]
        + _SUIT_POINTS[mask >> 39 & SUIT_MASK]
    )


def count(mask: int) -> int:
    return mask.bit_count()
