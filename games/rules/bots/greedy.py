"""The greedy bot: meld what it can, shed deadwood, call Draw when its hand is light.

Decisions come from the seat's own view (hand, table, discard) and the legal commands only.
"""

from __future__ import annotations

import random
from typing import Any

from ..cards import BIT, CODES, POINTS, cards_of, mask_of_codes, parse_card
from ..melds import best_arrangement
from .knowledge import group_by_type

CALL_DRAW_AT = 5  # call Draw with deadwood at most this
CHALLENGE_AT = 9  # challenge a Draw with deadwood at most this


class GreedyBot:
    name = "greedy"
    uses_history = False

    def choose(
        self,
        view: dict[str, Any],
        legal: list[dict[str, Any]],
        rng: random.Random,
        history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        by_type = group_by_type(legal)
        if view["phase"] == "draw_call":
            if "challenge" in by_type and view["deadwood"] <= CHALLENGE_AT:
                return by_type["challenge"][0]
            return by_type["fold"][0]
        hand = mask_of_codes(view["hand"])
        ace_high = view["rules"]["ace_high_runs"]
        if view["phase"] == "start":
            if "call_draw" in by_type and view["deadwood"] <= CALL_DRAW_AT:
                return by_type["call_draw"][0]
            takes = by_type.get("take_discard", [])
            if takes:
                return min(takes, key=lambda c: _after_take(hand, c, ace_high))
            return by_type.get("draw", legal)[0]
        deadwood, melds = best_arrangement(hand, ace_high)
        if "meld" in by_type and melds:
            wanted = {m for m in melds}
            secret = [c for c in by_type["meld"] if c.get("hidden")]
            for cmd in secret + by_type["meld"]:
                if mask_of_codes(cmd["cards"]) in wanted:
                    return cmd
        in_melds = 0
        for m in melds:
            in_melds |= m
        loose = hand & ~in_melds
        for cmd in by_type.get("lay_off", []):
            if BIT[parse_card(cmd["card"])] & loose:
                return cmd
        discards = by_type.get("discard", [])
        if not discards:
            return legal[0]
        pool = cards_of(loose) or cards_of(hand)
        worst = max(pool, key=lambda c: (POINTS[c], c % 13, c // 13))
        code = CODES[worst]
        for cmd in discards:
            if cmd["card"] == code:
                return cmd
        return discards[0]


def _after_take(hand: int, cmd: dict[str, Any], ace_high: bool) -> int:
    if "cards" not in cmd:
        return best_arrangement(hand, ace_high)[0]
    return best_arrangement(hand & ~mask_of_codes(cmd["cards"]), ace_high)[0]
