"""The ``normal`` bot: the greedy bot plus card counting, safe discards and judged Draw calls.

What it adds over ``greedy``, all from its own view:
- card counting: cards in the discard pile and on the table are dead, so a half-made meld whose
  missing card is dead is worth nothing, and a discard nobody can meld with is safe;
- it keeps half-made melds that are still live and sheds the rest, highest points first;
- it avoids feeding the next seat (the only one who may take its discard) a card that unseen
  cards could meld with, or (house rules) one that fits the next seat's own meld;
- it calls and challenges Draw by comparing its deadwood with what an opponent holding that many
  cards typically has, and calls at once when no opponent has opened (they must fold, burned);
  under ``in_turn`` timing (h19 "Fight") it asks the same again after its draw, melds and
  lay-offs, instead of discarding.
"""

from __future__ import annotations

import random
from typing import Any

from ..cards import BIT, CODES, POINTS, cards_of, mask_of_codes, parse_card
from ..melds import best_arrangement, candidate_melds
from .heuristics import Params, potential, take_risk, targets, typical_deadwood
from .knowledge import Knowledge, group_by_type, read

_DEFAULTS = Params()


class NormalBot:
    name = "normal"
    uses_history = False

    def __init__(
        self,
        call_frac: float = _DEFAULTS.call_frac,
        challenge_frac: float = _DEFAULTS.challenge_frac,
        keep: float = _DEFAULTS.keep,
        danger: float = _DEFAULTS.danger,
    ) -> None:
        self.call_frac = call_frac
        self.challenge_frac = challenge_frac
        self.keep = keep
        self.danger = danger

    def choose(
        self,
        view: dict[str, Any],
        legal: list[dict[str, Any]],
        rng: random.Random,
        history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        if len(legal) == 1:
            return legal[0]
        k = read(view, history)
        by_type = group_by_type(legal)
        ace_high = k.rules.ace_high_runs
        if k.phase == "draw_call":
            dw = best_arrangement(k.hand, ace_high)[0]
            if "challenge" in by_type and self.wants_challenge(k, dw):
                return by_type["challenge"][0]
            return by_type["fold"][0]
        if k.phase == "start":
            dw = best_arrangement(k.hand, ace_high)[0]
            if "call_draw" in by_type and self.wants_call(k, dw):
                return by_type["call_draw"][0]
            take = best_take(k.hand, k.discard[-1] if k.discard else -1, ace_high, k.rules)
            if take is not None:
                code_set = {CODES[c] for c in cards_of(take)}
                for cmd in by_type.get("take_discard", []):
                    if "cards" in cmd and set(cmd["cards"]) == code_set:
                        return cmd
            for cmd in by_type.get("take_discard", []):
                if "meld_id" in cmd:  # house rules: the discard fits a meld of its own
                    return cmd
            return by_type.get("draw", legal)[0]
        return self.play(k, by_type, legal)

    # ------------------------------------------------------------ Draw calls

    def wants_call(self, k: Knowledge, dw: int) -> bool:
        threats = [o for o in k.opponents if k.opened[o]]
        if not threats:
            return True  # both must fold, and both are burned
        est = min(typical_deadwood(k.hand_counts[o]) for o in threats)
        return dw <= self.call_frac * est

    def wants_challenge(self, k: Knowledge, dw: int) -> bool:
        caller = k.draw_caller
        est = typical_deadwood(k.hand_counts[caller]) if caller >= 0 else 0
        return dw <= self.challenge_frac * est or dw <= 3

    # ------------------------------------------------------------ melds, lay-offs, discard

    def play(
        self, k: Knowledge, by_type: dict[str, list[dict[str, Any]]], legal: list[dict[str, Any]]
    ) -> dict[str, Any]:
        ace_high = k.rules.ace_high_runs
        _, melds = best_arrangement(k.hand, ace_high)
        if melds and "meld" in by_type:
            wanted = set(melds)
            secret = [c for c in by_type["meld"] if c.get("hidden")]
            for cmd in secret + by_type["meld"]:
                if mask_of_codes(cmd["cards"]) in wanted:
                    return cmd
        in_melds = 0
        for m in melds:
            in_melds |= m
        loose = k.hand & ~in_melds
        lay_offs = by_type.get("lay_off", [])
        if lay_offs:
            # lay off on an opponent's meld first: it also blocks their Draw call
            owners = {m.meld_id: m.owner for m in k.melds}
            best = None
            for cmd in lay_offs:
                if BIT[parse_card(cmd["card"])] & loose:
                    if owners.get(cmd["meld_id"]) != k.seat:
                        return cmd
                    best = best or cmd
            if best is not None:
                return best
        if "call_draw" in by_type and self.wants_call(k, best_arrangement(k.hand, ace_high)[0]):
            return by_type["call_draw"][0]  # in_turn: Fight instead of the discard
        discards = by_type.get("discard", [])
        if not discards:
            return legal[0]
        card = self.pick_discard(k, loose or k.hand)
        code = CODES[card]
        for cmd in discards:
            if cmd["card"] == code:
                return cmd
        return discards[0]

    def pick_discard(self, k: Knowledge, pool: int) -> int:
        return choose_discard(
            k.hand,
            pool,
            k.unknown,
            k.hand_counts[(k.seat + 1) % 3],
            _next_targets(k) if k.rules.take_discard_to_lay_off else 0,
            k.rules.ace_high_runs,
            self.keep,
            self.danger,
        )


def choose_discard(
    hand: int,
    pool: int,
    unknown: int,
    next_count: int,
    next_own_targets: int,
    ace_high: bool,
    keep: float,
    danger: float,
) -> int:
    """The card of ``pool`` to shed: high points, no live half-meld, nothing the next seat wants."""
    q2 = feed_chance(next_count, unknown)
    best_card = -1
    best_score = -1e9
    b = pool
    while b:
        low = b & -b
        c = low.bit_length() - 1
        b ^= low
        score = discard_score(c, hand, unknown, q2, next_own_targets, ace_high, keep, danger)
        if score > best_score:
            best_score, best_card = score, c
    return best_card


def feed_chance(next_count: int, unknown: int) -> float:
    """How likely the next seat holds a given two of the ``unknown`` cards (roughly)."""
    q = min(1.0, next_count / (unknown.bit_count() or 1))
    return q * q


def discard_score(
    c: int,
    hand: int,
    unknown: int,
    q2: float,
    next_own_targets: int,
    ace_high: bool,
    keep: float,
    danger: float,
) -> float:
    """How much ``choose_discard`` wants to shed card ``c`` of ``hand`` (``q2``: ``feed_chance``);
    the ``hard`` bot's sampler asks it too, to judge an opponent's discard."""
    low = BIT[c]
    score = POINTS[c] - keep * potential(c, hand & ~low, unknown, ace_high)
    risk = take_risk(c, unknown, ace_high) * q2
    if next_own_targets & low:
        risk += 1.0
    score -= danger * min(risk, 1.0)
    score += c % 13 * 0.01  # ties: the higher rank goes
    return score


def best_take(hand: int, top: int, ace_high: bool, rules) -> int | None:
    """The hand cards to take the top discard with (as a mask), if taking is worth it."""
    if top < 0:
        return None
    top_bit = BIT[top]
    now = best_arrangement(hand, ace_high)[0]
    best = None
    best_dw = now
    for m in candidate_melds(hand | top_bit, rules):
        if m & top_bit:
            used = m & ~top_bit
            if used.bit_count() < 2:
                continue
            after = best_arrangement(hand & ~used, ace_high)[0]
            if after <= best_dw:
                best, best_dw = used, after
    return best


def _next_targets(k: Knowledge) -> int:
    """Cards the next seat could take onto one of its own melds (house rules)."""
    nxt = (k.seat + 1) % 3
    out = 0
    for m in k.melds:
        if m.owner == nxt and not m.hidden and m.mask:
            out |= targets(m.mask, m.is_set, k.rules.ace_high_runs)
    return out
