"""How unlikely a pair's record is, against the population's: pure arithmetic, no Django.

Every signal is a count of hits ``k`` in ``n`` opportunities. Under the hypothesis that the pair
is like everyone else, ``k`` is binomial with the population's rate ``p``; the pair's score for
that signal is the one-sided log-likelihood ratio ``2 * (k ln(k / np) + (n - k) ln((n - k) /
n(1 - p)))`` (0 when ``k / n <= p``), which grows with the evidence (one odd game moves it
little, the same odd choice match after match moves it a lot) and is, under that hypothesis, a
chi-square of one degree of freedom at most half the time. Scores of several signals add.

- The population's rate of a signal is its total hits over its total opportunities, blended with
  a prior (``PRIORS``, the honest population's rates in the simulation) worth ``PRIOR_WEIGHT``
  opportunities, so a young server with few matches is not judged against noise.
- For the collusion signals, a player who feeds or spares everyone (a beginner) is judged
  against their own rate toward everyone else too (shrunk towards the population's by
  ``OWN_WEIGHT`` opportunities): the baseline is the higher of the two, so only a bias towards
  one opponent scores.
- Chip dumping compares the feeder's losses to one beneficiary with the population: rounds and
  matches lost to them by resigning or timing out, and the discards they fed them. The chips
  that flowed are a condition (at least ``dumping_min_chips``) and evidence (with their z-score
  against the population's per-game spread), never a score: chips flow from a weaker player to
  a stronger one at every table.

``PairBook`` keeps the counts in memory for the simulation; the projection keeps the same
counts in PostgreSQL and asks the same functions (``collusion``, ``chip_dumping``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .scoring import Counts

#: The signals of collusion: (opportunities, hits) fields of ``Counts``.
COLLUSION_SIGNALS = {
    "feed": ("feed_n", "feed_k"),
    "spare": ("spare_n", "spare_k"),
    "answer": ("answer_n", "answer_k"),
}
#: The binomial signals of chip dumping (the chip flow is scored apart).
DUMPING_SIGNALS = {
    "matches_off": ("games", "matches_off"),
    "rounds_off": ("rounds", "rounds_off"),
    "feed": ("feed_n", "feed_k"),
}
#: Prior rates per signal (hits per opportunity): the honest population's in the simulation,
#: rounded up; resignations and time-outs from what a real room sees (a few in a hundred).
PRIORS = {
    "feed": 0.05,
    "spare": 0.05,
    "answer": 0.02,
    "matches_off": 0.02,
    "rounds_off": 0.02,
}
PRIOR_WEIGHT = 200.0
OWN_WEIGHT = 30.0
#: Spread of one game's chip flow between two seats, in buy-ins, before the population has its
#: own (the simulation's honest tables at 20 stakes a buy-in: about 0.25).
PRIOR_FLOW_SD = 0.3
P_MIN, P_MAX = 1e-3, 0.999


@dataclass(frozen=True)
class Thresholds:
    """When a score raises a flag (settings ``TONGITS_FAIRPLAY_*``; defaults from the
    simulation, docs/fair-play.md): ``collusion`` for a pair, ``chip_dumping`` for a feeder and
    a beneficiary who gained at least ``dumping_min_chips`` from them; no flag before
    ``min_games`` matches together."""

    collusion: float = 60.0
    chip_dumping: float = 25.0
    dumping_min_chips: int = 100
    min_games: int = 3


def llr(k: int, n: int, p: float) -> float:
    """Twice the one-sided log-likelihood ratio of ``k`` hits in ``n`` against rate ``p``."""
    if n <= 0 or k <= 0:
        return 0.0
    p = min(max(p, P_MIN), P_MAX)
    q = k / n
    if q <= p:
        return 0.0
    out = k * math.log(q / p)
    if k < n:
        out += (n - k) * math.log((1 - q) / (1 - p))
    return 2.0 * out


@dataclass
class Totals:
    """Sums of ``Counts`` over many pairs: the population's, or one account's toward everyone."""

    counts: Counts = field(default_factory=Counts)
    pairs: int = 0

    def rate(self, n_field: str, k_field: str, prior: float, weight: float) -> float:
        n = getattr(self.counts, n_field)
        k = getattr(self.counts, k_field)
        return (k + weight * prior) / (n + weight)


def _population_rate(pop: Totals, name: str, n_field: str, k_field: str) -> float:
    return pop.rate(n_field, k_field, PRIORS[name], PRIOR_WEIGHT)


def _own_rate(own: Totals, pair: Counts, n_field: str, k_field: str, base: float) -> float:
    """An account's rate toward everyone but this opponent, shrunk towards ``base``."""
    n = getattr(own.counts, n_field) - getattr(pair, n_field)
    k = getattr(own.counts, k_field) - getattr(pair, k_field)
    return (k + OWN_WEIGHT * base) / (max(n, 0) + OWN_WEIGHT)


def _signal(name: str, pair: Counts, n_field: str, k_field: str, p: float) -> dict[str, Any]:
    n, k = getattr(pair, n_field), getattr(pair, k_field)
    return {
        "hits": k,
        "opportunities": n,
        "rate": round(k / n, 4) if n else 0.0,
        "baseline": round(p, 4),
        "score": round(llr(k, n, p), 3),
    }


def collusion(
    ab: Counts, ba: Counts, own_a: Totals, own_b: Totals, pop: Totals
) -> tuple[float, dict[str, Any]]:
    """The collusion score of accounts a and b (both directions of every signal) and its parts."""
    parts: dict[str, Any] = {}
    total = 0.0
    for name, (n_field, k_field) in COLLUSION_SIGNALS.items():
        base = _population_rate(pop, name, n_field, k_field)
        sides = {}
        for label, pair, own in (("a_to_b", ab, own_a), ("b_to_a", ba, own_b)):
            p = max(base, _own_rate(own, pair, n_field, k_field, base))
            sides[label] = _signal(name, pair, n_field, k_field, p)
            total += sides[label]["score"]
        parts[name] = sides
    return total, parts


def flow_score(fb: Counts, pop: Totals) -> tuple[float, float]:
    """The z-score of the chips f paid b, per game in buy-ins, against the population's spread,
    and its square when positive."""
    games = fb.games
    if games <= 0:
        return 0.0, 0.0
    var = (pop.counts.flow_sq / 1000.0 + PRIOR_WEIGHT * PRIOR_FLOW_SD**2) / (
        pop.counts.games + PRIOR_WEIGHT
    )
    z = (fb.flow_milli / 1000.0) / math.sqrt(var * games)
    return z, (z * z if z > 0 else 0.0)


def chip_dumping(fb: Counts, pop: Totals) -> tuple[float, dict[str, Any]]:
    """The chip-dumping score of feeder f toward beneficiary b and its parts."""
    parts: dict[str, Any] = {}
    total = 0.0
    for name, (n_field, k_field) in DUMPING_SIGNALS.items():
        p = _population_rate(pop, name, n_field, k_field)
        parts[name] = _signal(name, fb, n_field, k_field, p)
        total += parts[name]["score"]
    z, _ = flow_score(fb, pop)
    # Shown, not scored: a weaker player's chips flow to a stronger one at every table, so the
    # flow alone says nothing; with ``dumping_min_chips`` it says the dumping paid.
    parts["chip_flow"] = {"chips": fb.chips, "games": fb.games, "z": round(z, 3)}
    return total, parts


class PairBook:
    """The counts of every ordered pair, each account's totals and the population's, in memory
    (the simulation's projection)."""

    def __init__(self) -> None:
        self.pairs: dict[tuple[int, int], Counts] = {}
        self.own: dict[int, Totals] = {}
        self.pop = Totals()

    def add(self, pairs: dict[tuple[int, int], Counts]) -> None:
        for (a, b), counts in pairs.items():
            if (a, b) not in self.pairs:
                self.pairs[(a, b)] = Counts()
                self.pop.pairs += 1
                self.own.setdefault(a, Totals()).pairs += 1
            self.pairs[(a, b)].add(counts)
            self.own.setdefault(a, Totals()).counts.add(counts)
            self.pop.counts.add(counts)

    def get(self, a: int, b: int) -> Counts:
        return self.pairs.get((a, b)) or Counts()

    def collusion(self, a: int, b: int) -> tuple[float, dict[str, Any]]:
        return collusion(
            self.get(a, b),
            self.get(b, a),
            self.own.get(a, Totals()),
            self.own.get(b, Totals()),
            self.pop,
        )

    def chip_dumping(self, feeder: int, beneficiary: int) -> tuple[float, dict[str, Any]]:
        return chip_dumping(self.get(feeder, beneficiary), self.pop)


def judge_pairs(
    accounts: Iterable[int],
    thresholds: Thresholds,
    collusion_of: Any,
    dumping_of: Any,
    pair_of: Any,
) -> list[tuple[str, tuple[int, ...], float, dict[str, Any]]]:
    """Every flag the record of these accounts' pairs calls for now: ``(kind, accounts, score,
    parts)``; collusion per unordered pair (accounts ascending), chip dumping per feeder and
    beneficiary (the beneficiary first)."""
    people = sorted(set(accounts))
    found = []
    for i, a in enumerate(people):
        for b in people[i + 1 :]:
            ab = pair_of(a, b)
            if ab.games < thresholds.min_games:
                continue
            score, parts = collusion_of(a, b)
            if score >= thresholds.collusion:
                found.append(("collusion", (a, b), score, parts))
            for f, t in ((a, b), (b, a)):
                ft = pair_of(f, t)
                if ft.chips < thresholds.dumping_min_chips:
                    continue
                score, parts = dumping_of(f, t)
                if score >= thresholds.chip_dumping:
                    found.append(("chip_dumping", (t, f), score, parts))
    return found
