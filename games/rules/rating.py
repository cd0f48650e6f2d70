"""The rating model, one for players and for bot levels: openskill's Plackett-Luce.

Players are rated at settlement (``accounts.match_records``) and the bot levels by the
bots' ladder (``games.rules.ladder``) with these same functions, so a level's rating and a
player's are on one scale. Pure: the same matches in the same order give the same floats.
"""

from __future__ import annotations

from collections.abc import Sequence

from openskill.models import PlackettLuce

MODEL = PlackettLuce()
DEFAULT_RATING: tuple[float, float] = (MODEL.mu, MODEL.sigma)


def ordinal(mu: float, sigma: float) -> float:
    """The conservative rating the leaderboard sorts by: mu - 3 sigma (openskill's ordinal)."""
    return MODEL.rating(mu=mu, sigma=sigma).ordinal()


def rate_match(
    before: Sequence[tuple[float, float]], places: Sequence[int]
) -> list[tuple[float, float]]:
    """(mu, sigma) per seat after one free-for-all of three, from (mu, sigma) before and places."""
    teams = [[MODEL.rating(mu=mu, sigma=sigma)] for mu, sigma in before]
    rated = MODEL.rate(teams, ranks=list(places))
    return [(team[0].mu, team[0].sigma) for team in rated]
