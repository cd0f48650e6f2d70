"""The ``easy`` bot: random legal play, minus the mistakes a beginner would not make.

It plays a random legal command of a sensible kind: it never breaks a meld it holds to discard,
never calls or challenges a Draw with a hopeless hand, and always goes out when it can. It does
not count cards, so it feeds its neighbour and holds dead half-melds.
"""

from __future__ import annotations

import random
from typing import Any

from ..cards import BIT, mask_of_codes, parse_card
from ..melds import best_arrangement
from .knowledge import group_by_type, rules_of


class EasyBot:
    name = "easy"
    uses_history = False

    def choose(
        self,
        view: dict[str, Any],
        legal: list[dict[str, Any]],
        rng: random.Random,
        history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        if len(legal) == 1:
            return legal[0]
        by_type = group_by_type(legal)
        dw = view["deadwood"]
        if view["phase"] == "draw_call":
            if "challenge" in by_type and dw <= rng.randint(3, 12):
                return by_type["challenge"][0]
            return by_type["fold"][0]
        if view["phase"] == "start":
            if "call_draw" in by_type and dw <= rng.randint(2, 10):
                return by_type["call_draw"][0]
            takes = by_type.get("take_discard", [])
            if takes and rng.random() < 0.6:
                return rng.choice(takes)
            return by_type.get("draw", legal)[0]
        hand = mask_of_codes(view["hand"])
        if hand.bit_count() == 1 and "discard" in by_type:
            return by_type["discard"][0]  # going out
        melds = by_type.get("meld", [])
        if melds and rng.random() < 0.8:
            return rng.choice(melds)
        lay_offs = by_type.get("lay_off", [])
        if lay_offs and rng.random() < 0.6:
            return rng.choice(lay_offs)
        if "call_draw" in by_type and dw <= rng.randint(2, 10):
            return by_type["call_draw"][0]  # in_turn (h19 "Fight"): instead of the discard
        discards = by_type.get("discard", legal)
        _, kept = best_arrangement(hand, rules_of(view).ace_high_runs)
        in_melds = 0
        for m in kept:
            in_melds |= m
        loose = [c for c in discards if not BIT[parse_card(c["card"])] & in_melds]
        return rng.choice(loose or discards)
