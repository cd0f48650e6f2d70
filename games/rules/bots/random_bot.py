"""The random bot: any legal command, uniformly. The floor every other bot must beat."""

from __future__ import annotations

import random
from typing import Any


class RandomBot:
    name = "random"
    uses_history = False

    def choose(
        self,
        view: dict[str, Any],
        legal: list[dict[str, Any]],
        rng: random.Random,
        history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        return rng.choice(legal)
