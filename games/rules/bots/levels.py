"""The bot levels players pick, each with the rating the levels earned against each other.

A rating is openskill's Plackett-Luce (mu, sigma), the model players' own ratings use (they start
at mu 25), from ``make ladder``: the three levels at one table, seats rotated, every
match one free-for-all ranked by placement, in match order. docs/bots.md records the run; a test
keeps the two in step, so the numbers a client shows are the ones measured.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..rating import ordinal


@dataclass(frozen=True, slots=True)
class Level:
    """One level as the API offers it."""

    name: str
    summary: str
    mu: float
    sigma: float

    @property
    def rating(self) -> float:
        """The conservative rating players' leaderboard sorts by: mu - 3 sigma."""
        return round(ordinal(self.mu, self.sigma), 1)


#: Weakest first.
LEVEL_INFO: tuple[Level, ...] = (
    Level(
        "easy",
        "Plays a random sensible move: never breaks its melds, goes out when it can.",
        mu=14.11,
        sigma=2.54,
    ),
    Level(
        "normal",
        "Counts cards, keeps live half-melds, avoids feeding the next seat, judges Draw calls.",
        mu=28.12,
        sigma=1.97,
    ),
    Level(
        "hard",
        "Searches: deals the unseen cards many ways and plays each move out to the round's end.",
        mu=34.38,
        sigma=2.04,
    ),
)
