"""The options of a Tongits variant (docs/rules.md, "Variants"), frozen, with named presets."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from typing import Any, ClassVar

STOCK_OUT_TIES = ("last_drawer", "fewer_cards", "last_drawer_loses")
DRAW_CALL_TIMINGS = ("start", "in_turn")
FIRST_DEALERS = ("random", "creator")


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Every point where the sources disagree is an option here; defaults are ``standard``."""

    ace_high_runs: bool = False
    take_discard_to_lay_off: bool = False
    draw_call: bool = True
    secret_sets: bool = True
    burning: bool = True
    stock_out_tie: str = "last_drawer"
    wins_to_match: int = 3
    turn_seconds: int = 20
    turn_cap: int = 200
    base: int = 1
    tongits: int = 3
    draw_won_challenged: int = 3
    per_ace: int = 1
    per_secret_set: int = 3
    burned_penalty: int = 1
    # Added with the h19 preset. A stored rules dict without them loads with these defaults,
    # which are the behaviour from before they existed.
    draw_call_timing: str = "start"
    #: what a folder pays the winner of a challenged Draw; None: as ``draw_won_challenged``
    draw_folded: int | None = None
    first_dealer: str = "random"
    #: multiplies every amount of a round's payouts
    stake: int = 1

    PRESETS: ClassVar[tuple[str, ...]] = ("standard", "house", "h19")

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            is_bool = isinstance(value, bool)
            if f.type in ("bool", bool) and not is_bool:
                raise ValueError(f"{f.name} must be a boolean")
            if f.type in ("int", int) and (is_bool or not isinstance(value, int) or value < 0):
                raise ValueError(f"{f.name} must be a non-negative integer")
            if f.type == "str" and not isinstance(value, str):
                raise ValueError(f"{f.name} must be a string")
        folded = self.draw_folded
        bad = isinstance(folded, bool) or not isinstance(folded, int) or folded < 0
        if folded is not None and bad:
            raise ValueError("draw_folded must be a non-negative integer or null")
        if self.stock_out_tie not in STOCK_OUT_TIES:
            raise ValueError(f"stock_out_tie must be one of {STOCK_OUT_TIES}")
        if self.draw_call_timing not in DRAW_CALL_TIMINGS:
            raise ValueError(f"draw_call_timing must be one of {DRAW_CALL_TIMINGS}")
        if self.first_dealer not in FIRST_DEALERS:
            raise ValueError(f"first_dealer must be one of {FIRST_DEALERS}")
        if self.wins_to_match < 1 or self.turn_cap < 1 or self.stake < 1:
            raise ValueError("wins_to_match, turn_cap and stake must be at least 1")

    @property
    def in_turn(self) -> bool:
        """Draw may be called at any point of one's own turn before its discard (h19 "Fight")."""
        return self.draw_call_timing == "in_turn"

    @classmethod
    def standard(cls) -> RuleSet:
        return cls()

    @classmethod
    def house(cls) -> RuleSet:
        return cls(
            ace_high_runs=True,
            take_discard_to_lay_off=True,
            draw_call=False,
            burning=False,
            stock_out_tie="fewer_cards",
        )

    @classmethod
    def h19(cls) -> RuleSet:
        """The H19 online room (docs/rules.md): Fight within the turn, a dear burn."""
        return cls(
            draw_call_timing="in_turn",
            secret_sets=False,
            burned_penalty=3,
            draw_folded=1,
            stock_out_tie="last_drawer_loses",
            first_dealer="creator",
            turn_seconds=15,
        )

    @classmethod
    def preset(cls, name: str) -> RuleSet:
        if name == "standard":
            return cls.standard()
        if name == "house":
            return cls.house()
        if name == "h19":
            return cls.h19()
        raise ValueError(f"unknown rules preset {name!r}; presets: {', '.join(cls.PRESETS)}")

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | str | None, base: RuleSet | None = None) -> RuleSet:
        """Options over ``base`` (standard by default); a string names a preset.

        A dict may carry ``"preset"`` to start from that preset. Unknown keys are an error, so a
        typo never silently plays the default.
        """
        if data is None:
            return base or cls()
        if isinstance(data, str):
            return cls.preset(data)
        if not isinstance(data, dict):
            raise ValueError("rules must be a preset name or an object of options")
        data = dict(data)
        start = cls.preset(data.pop("preset")) if "preset" in data else (base or cls())
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown rule options: {', '.join(unknown)}")
        return dataclasses.replace(start, **data)
