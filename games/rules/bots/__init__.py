"""Bots that see only what their seat may see: ``player_view`` and ``legal_commands``.

A bot is any object with ``choose(view, legal, rng, history=None) -> command``; the command it
returns is always one of ``legal``. ``history`` is the seat's event history as ``redact_event``
shows it to that seat (a bot whose ``uses_history`` is true wants it; others ignore it). Bots are
pure choosers: the caller submits the command like a human's.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

from .easy import EasyBot
from .greedy import GreedyBot
from .hard import HardBot
from .levels import LEVEL_INFO, Level
from .normal import NormalBot
from .random_bot import RandomBot


class Bot(Protocol):
    name: str

    uses_history: bool

    def choose(
        self,
        view: dict[str, Any],
        legal: list[dict[str, Any]],
        rng: random.Random,
        history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]: ...


BOTS: dict[str, type] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "easy": EasyBot,
    "normal": NormalBot,
    "hard": HardBot,
}
#: Levels offered to players (the API creates bot seats by level), weakest first: level -> bot.
LEVELS: dict[str, str] = {level.name: level.name for level in LEVEL_INFO}


def get_bot(name: str) -> Bot:
    """A bot by name (``random``, ``greedy``) or by level (``easy``, ``normal``, ``hard``)."""
    name = LEVELS.get(name, name)
    try:
        return BOTS[name]()
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; bots: {', '.join(BOTS)}") from None


__all__ = [
    "BOTS",
    "LEVELS",
    "LEVEL_INFO",
    "Level",
    "Bot",
    "EasyBot",
    "GreedyBot",
    "HardBot",
    "NormalBot",
    "RandomBot",
    "get_bot",
]
