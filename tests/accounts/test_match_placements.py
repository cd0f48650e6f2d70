"""The history's placements and preset names come from the rules core (no database needed)."""

from __future__ import annotations

from accounts import match_records
from games.rules import RuleSet
from games.rules.scoring import placements


def test_history_uses_the_rules_core_placements() -> None:
    assert match_records.placements is placements
    assert placements(2, [1, 1, 3], [-2, -2, 4]) == [2, 2, 1]


def test_preset_names_include_h19_and_old_stored_rules() -> None:
    assert match_records.rules_preset(RuleSet.h19().to_dict()) == "h19"
    assert match_records.rules_preset({**RuleSet.h19().to_dict(), "turn_seconds": 20}) == "h19"
    assert match_records.rules_preset({**RuleSet.standard().to_dict(), "stake": 10}) == "custom"
    new = {"draw_call_timing", "draw_folded", "first_dealer", "stake"}
    for name in ("standard", "house"):
        stored = {k: v for k, v in RuleSet.preset(name).to_dict().items() if k not in new}
        assert match_records.rules_preset(stored) == name
