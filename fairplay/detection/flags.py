"""A flag: what detection found about some accounts, as ``flag_raised`` carries it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Flag:
    """``kind`` is "collusion" or "chip_dumping"; ``accounts`` are user ids (for chip dumping the
    beneficiary first); ``score`` crossed ``threshold``; ``evidence`` is JSON-serialisable
    (per-signal scores, decision lists with game ids and seq numbers, chip flow); ``game_ids``
    are the games it rests on."""

    kind: str
    accounts: tuple[int, ...]
    score: float
    threshold: float
    evidence: dict[str, Any]
    game_ids: tuple[str, ...]
