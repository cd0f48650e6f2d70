"""Bots that see only what their seat may see: ``player_view`` and ``legal_commands``.

A bot is any object with ``choose(view, legal, rng) -> command``; the command it returns is always
one of ``legal``. Bots are pure choosers: the caller submits the command like a human's.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

from .greedy import GreedyBot
from .random_bot import RandomBot


class Bot(Protocol):
    name: str

    def choose(
        self, view: dict[str, Any], legal: list[dict[str, Any]], rng: random.Random
    ) -> dict[str, Any]: ...


BOTS: dict[str, type] = {"random": RandomBot, "greedy": GreedyBot}
#: Levels offered to players; later levels map to stronger bots.
LEVELS: dict[str, str] = {"easy": "random", "normal": "greedy"}


def get_bot(name: str) -> Bot:
    """A bot by name (``random``, ``greedy``) or by level (``easy``, ``normal``)."""
    name = LEVELS.get(name, name)
    try:
        return BOTS[name]()
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; bots: {', '.join([*BOTS, *LEVELS])}") from None


__all__ = ["BOTS", "LEVELS", "Bot", "GreedyBot", "RandomBot", "get_bot"]
