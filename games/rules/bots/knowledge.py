"""What one seat knows, as card masks: its ``player_view`` plus its redacted event history.

Bots reason from this and nothing else, so a bot cannot read a hidden card even by mistake: the
only inputs are the view and the events as ``redact_event`` shows them to that seat.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from ..cards import BIT, FULL_DECK, mask_of_codes, parse_card
from ..melds import RANK_MASKS, SET
from ..ruleset import RuleSet

_RULES_CACHE: dict[tuple, RuleSet] = {}


def rules_of(view: dict[str, Any]) -> RuleSet:
    """The view's RuleSet, cached: bots look at it on every decision."""
    raw = view["rules"]
    key = tuple(sorted(raw.items()))
    rules = _RULES_CACHE.get(key)
    if rules is None:
        rules = _RULES_CACHE[key] = RuleSet.from_dict(dict(raw))
    return rules


@dataclass(slots=True)
class TableMeld:
    meld_id: int
    owner: int
    is_set: bool
    mask: int  # 0 for another seat's secret set (its cards are unknown)
    hidden: bool
    size: int


@dataclass(slots=True)
class Knowledge:
    """The public state plus the seat's own hand; ``unknown`` is every card it cannot place."""

    seat: int
    rules: RuleSet
    phase: str
    turn: int
    dealer: int
    hand: int
    melds: list[TableMeld]
    discard: list[int]
    stock_count: int
    hand_counts: list[int]
    opened: list[bool]
    blocked: frozenset[int]
    turns: int
    draw_caller: int
    answers: list[tuple[int, str]]
    round_wins: list[int]
    unknown: int
    table: int  # every visible card on the table
    dead: int  # cards out of play for everyone: table and discard pile
    last_drawer: int = -1
    #: per seat: discards it declined (drew from the stock while the card lay on top)
    passed: list[int] = field(default_factory=lambda: [0, 0, 0])
    #: per seat: cards it discarded this round
    discarded: list[int] = field(default_factory=lambda: [0, 0, 0])

    @property
    def opponents(self) -> tuple[int, int]:
        return ((self.seat + 1) % 3, (self.seat + 2) % 3)

    def hidden_others(self) -> list[int]:
        """Indices (into ``melds``) of secret sets whose cards this seat cannot see."""
        return [i for i, m in enumerate(self.melds) if m.hidden and m.mask == 0]


def read(view: dict[str, Any], history: list[dict[str, Any]] | None = None) -> Knowledge:
    """Build a seat's knowledge from its view and (optionally) its redacted history."""
    seat = view["seat"]
    hand = mask_of_codes(view["hand"])
    melds = []
    table = 0
    for m in view["melds"]:
        cards = m["cards"]
        mask = mask_of_codes(cards) if cards is not None else 0
        table |= mask
        melds.append(
            TableMeld(m["meld_id"], m["owner"], m["kind"] == SET, mask, m["hidden"], m["size"])
        )
    discard = [parse_card(c) for c in view["discard_pile"]]
    dmask = 0
    for c in discard:
        dmask |= BIT[c]
    draw_call = view.get("draw_call")
    k = Knowledge(
        seat=seat,
        rules=rules_of(view),
        phase=view["phase"],
        turn=view["turn"] if view["turn"] is not None else -1,
        dealer=view["dealer"],
        hand=hand,
        melds=melds,
        discard=discard,
        stock_count=view["stock_count"],
        hand_counts=list(view["hand_counts"]),
        opened=list(view["opened"]),
        blocked=frozenset(view["blocked"]),
        turns=view["turns"],
        draw_caller=draw_call["caller"] if draw_call else -1,
        answers=[(a["seat"], a["answer"]) for a in draw_call["answers"]] if draw_call else [],
        round_wins=list(view["round_wins"]),
        unknown=FULL_DECK & ~(hand | table | dmask),
        table=table,
        dead=table | dmask,
    )
    if history:
        _read_history(k, history)
    return k


def _read_history(k: Knowledge, history: list[dict[str, Any]]) -> None:
    start = 0
    for i in range(len(history) - 1, -1, -1):
        if history[i].get("type") == "round_started":
            start = i
            break
    pile: list[int] = []
    for e in history[start:]:
        kind = e.get("type")
        if kind == "drew":
            s = e["seat"]
            if pile:
                k.passed[s] |= BIT[pile[-1]]
            k.last_drawer = s
        elif kind == "discarded":
            c = parse_card(e["card"])
            pile.append(c)
            k.discarded[e["seat"]] |= BIT[c]
        elif kind == "took_discard" and pile:
            pile.pop()


# ---------------------------------------------------------------- determinization


@dataclass(slots=True)
class World:
    """One full deal consistent with a seat's knowledge: every hand, the stock, secret sets."""

    hands: list[int]
    stock: list[int]  # top first
    hidden_masks: dict[int, int]  # meld index -> sampled cards of another seat's secret set


def sample_world(k: Knowledge, rng: random.Random, tries: int = 1) -> World:
    """Deal the unknown cards at random, respecting hand counts and secret sets.

    With ``tries`` > 1, deals where an opponent holds two cards that would have made a meld with
    a discard it declined are re-dealt (a soft guess about how opponents play, never a certainty).
    """
    unknown = k.unknown
    hidden_masks: dict[int, int] = {}
    for i in k.hidden_others():
        ranks = [r for r in range(13) if unknown & RANK_MASKS[r] == RANK_MASKS[r]]
        r = rng.choice(ranks) if ranks else 0
        hidden_masks[i] = RANK_MASKS[r]
        unknown &= ~RANK_MASKS[r]
    pool = []
    b = unknown
    while b:
        low = b & -b
        pool.append(low.bit_length() - 1)
        b ^= low
    a, b2 = k.opponents
    na, nb = k.hand_counts[a], k.hand_counts[b2]
    best: World | None = None
    best_bad = 1 << 30
    for _ in range(max(1, tries)):
        rng.shuffle(pool)
        ha = _mask(pool[:na])
        hb = _mask(pool[na : na + nb])
        hands = [0, 0, 0]
        hands[k.seat] = k.hand
        hands[a] = ha
        hands[b2] = hb
        world = World(hands, pool[na + nb :], hidden_masks)
        if tries <= 1:
            return world
        bad = _violations(k, a, ha) + _violations(k, b2, hb)
        if bad < best_bad:
            best, best_bad = world, bad
            if bad == 0:
                break
    assert best is not None
    return best


def _mask(cards: list[int]) -> int:
    m = 0
    for c in cards:
        m |= BIT[c]
    return m


def _violations(k: Knowledge, seat: int, hand: int) -> int:
    from .heuristics import meld_partners

    passed = k.passed[seat] & ~k.table  # a declined card later melded by someone says little
    n = 0
    while passed:
        low = passed & -passed
        c = low.bit_length() - 1
        n += meld_partners(c, hand, k.rules.ace_high_runs)
        passed ^= low
    return n
