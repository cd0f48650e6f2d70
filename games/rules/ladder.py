"""`python -m games.rules.ladder --bots hard,normal,normal --matches N --seed S [--workers K]`

Bots play whole matches with their seats rotated (each entry sits in each seat equally often and
the first dealer is drawn at random), so a bot's win rate measures the bot, not its seat. Prints,
per entry: match wins with a 95% Wilson interval, rounds won by how they ended, chips per round,
and the decision time of its ``choose`` calls: CPU time of the thread (``time.thread_time``:
mean, median, p99, max), which does not grow with the machine's load, and wall-clock p99, which
does.

An entry is a bot name or level, optionally with constructor options after colons, for tuning:
``hard:playouts=1200:time_limit=0.3``.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any

from tqdm import tqdm

from .bots import BOTS, LEVELS, Bot
from .rating import DEFAULT_RATING, ordinal, rate_match
from .ruleset import RuleSet
from .scoring import placements
from .selfplay import play_match

REASONS = ("tongits", "draw", "stock_out", "turn_cap")


def make_bot(spec: str) -> Bot:
    """A bot from ``name[:option=value...]``; values are read as numbers or booleans if they can."""
    name, *options = spec.split(":")
    name = LEVELS.get(name, name)
    if name not in BOTS:
        raise ValueError(f"unknown bot {name!r}; bots: {', '.join(BOTS)}")
    kwargs: dict[str, Any] = {}
    for opt in options:
        key, _, raw = opt.partition("=")
        kwargs[key] = _literal(raw)
    return BOTS[name](**kwargs)


def _literal(raw: str) -> Any:
    if raw in ("None", "none"):
        return None
    if raw in ("True", "true", "False", "false"):
        return raw.lower() == "true"
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return raw


@dataclass
class MatchResult:
    """What one match says about each entry (index into ``--bots``), small enough to pickle."""

    winner: int | None
    rounds: list[tuple[int | None, str, tuple[int, int, int]]]  # winner entry, reason, chips
    times: list[list[float]]  # per entry: CPU seconds of each decision
    index: int = 0
    places: tuple[int, ...] = (0, 0, 0)  # per entry: 1 to 3, as players' matches are ranked
    walls: list[list[float]] = field(default_factory=lambda: [[], [], []])  # wall-clock seconds


def match_seed(seed: int, index: int) -> int:
    return seed * 1_000_003 + index


def seating(index: int) -> tuple[list[int], list[int]]:
    """Match ``index``'s rotation: each entry's seat (entry ``e`` in ``(e + index) % 3``) and
    each seat's entry."""
    seat_of = [(e + index) % 3 for e in range(3)]
    entry_at = [0, 0, 0]
    for e, s in enumerate(seat_of):
        entry_at[s] = e
    return seat_of, entry_at


def play_one(job: tuple[list[str], int, int, str]) -> MatchResult:
    """Play match ``index``: entry ``e`` sits in seat ``(e + index) % 3``."""
    specs, seed, index, rules_name = job
    seat_of, entry_at = seating(index)
    bots = [make_bot(specs[entry_at[s]]) for s in range(3)]
    record = play_match(bots, random.Random(match_seed(seed, index)), RuleSet.preset(rules_name))
    rounds = []
    for r in record.rounds:
        chips = tuple(r.payouts[seat_of[e]] for e in range(3))
        winner = entry_at[r.winner] if r.winner is not None else None
        rounds.append((winner, r.reason, chips))
    state = record.state
    winner = state.match_winner
    totals = [sum(r.payouts[s] for r in record.rounds) for s in range(3)]
    by_seat = placements(winner, state.round_wins, totals)
    return MatchResult(
        winner=entry_at[winner] if winner is not None else None,
        rounds=rounds,
        times=[record.decision_times[seat_of[e]] for e in range(3)],
        index=index,
        places=tuple(by_seat[seat_of[e]] for e in range(3)),
        walls=[record.decision_walls[seat_of[e]] for e in range(3)],
    )


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion: honest near 0 and 1 and for small ``n``."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, center - half), min(1.0, center + half)


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    i = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[i]


@dataclass
class Tally:
    matches: int = 0
    wins: list[int] = field(default_factory=lambda: [0, 0, 0])
    rounds: int = 0
    no_winner: int = 0
    by_reason: list[Counter[str]] = field(default_factory=lambda: [Counter() for _ in range(3)])
    chips: list[int] = field(default_factory=lambda: [0, 0, 0])
    times: list[list[float]] = field(default_factory=lambda: [[], [], []])
    walls: list[list[float]] = field(default_factory=lambda: [[], [], []])
    places: dict[int, tuple[int, ...]] = field(default_factory=dict)  # by match index

    def add(self, result: MatchResult) -> None:
        self.matches += 1
        self.places[result.index] = result.places
        if result.winner is not None:
            self.wins[result.winner] += 1
        for winner, reason, chips in result.rounds:
            self.rounds += 1
            if winner is None:
                self.no_winner += 1
            else:
                self.by_reason[winner][reason] += 1
            for e in range(3):
                self.chips[e] += chips[e]
        for e in range(3):
            self.times[e].extend(result.times[e])
            self.walls[e].extend(result.walls[e])


def report(specs: list[str], tally: Tally, seconds: float) -> str:
    n = tally.matches
    lines = [
        f"matches: {n}  rounds: {tally.rounds}  rounds without a winner: {tally.no_winner}  "
        f"({seconds:.0f} s)",
        "entry               match wins        95% CI            rounds won  "
        + "  ".join(f"{r:>9}" for r in REASONS[:3])
        + "  chips/round  decision CPU ms: mean  median    p99    max  wall ms p99",
    ]
    for e, spec in enumerate(specs):
        lo, hi = wilson(tally.wins[e], n)
        won = sum(tally.by_reason[e].values())
        times = sorted(tally.times[e])
        med = statistics.median(times) * 1e3 if times else float("nan")
        mean = statistics.fmean(times) * 1e3 if times else float("nan")
        p99 = percentile(times, 0.99) * 1e3
        top = times[-1] * 1e3 if times else float("nan")
        wall99 = percentile(sorted(tally.walls[e]), 0.99) * 1e3
        per_round = tally.chips[e] / tally.rounds if tally.rounds else 0.0
        lines.append(
            f"{e + 1}. {spec:<16} {tally.wins[e]:5d} {tally.wins[e] / max(n, 1):6.1%}"
            f"   [{lo:5.1%}, {hi:5.1%}]   {won:5d} {won / max(tally.rounds, 1):5.1%} "
            + "  ".join(f"{tally.by_reason[e][r]:9d}" for r in REASONS[:3])
            + f"  {per_round:+11.3f}  {mean:21.2f} {med:7.2f} {p99:6.1f} {top:6.1f}  {wall99:11.1f}"
        )
    capped = sum(tally.by_reason[e]["turn_cap"] for e in range(3))
    if capped:
        lines.append(f"rounds settled by the turn cap: {capped} (a bug: see docs/rules.md)")
    return "\n".join(lines)


def ratings(tally: Tally) -> list[tuple[float, float]]:
    """(mu, sigma) per entry by the players' rating model, from a new player's rating: every
    match one free-for-all ranked by placement, applied in match order (so ``workers`` does not
    change the answer)."""
    rated = [DEFAULT_RATING] * 3
    for index in sorted(tally.places):
        rated = rate_match(rated, tally.places[index])
    return rated


#: The runs docs/bots.md reports: (bots, matches, seed). The last one, the three levels at one
#: table, gives each level its rating.
LADDER: tuple[tuple[str, int, int], ...] = (
    ("hard,normal,normal", 600, 1),
    ("normal,easy,easy", 600, 7),
    ("easy,normal,hard", 300, 3),
)


def ladder(workers: int = 1, progress: bool = True, runs=LADDER) -> str:
    """Play ``runs`` and answer docs/bots.md's two tables, in Markdown: each run's result for
    its first entry, then each level's rating and decision time (over all its decisions)."""
    lines = ["| command | result |", "|---|---|"]
    times: dict[str, list[float]] = {}
    for bots, matches, seed in runs:
        started = time.perf_counter()
        specs = bots.split(",")
        tally = run(specs, matches, seed, workers, progress=progress)
        minutes = (time.perf_counter() - started) / 60
        won = sum(tally.by_reason[0].values())
        lo, hi = wilson(tally.wins[0], tally.matches)
        lines.append(
            f"| `--bots {bots} --matches {matches} --seed {seed} --workers {workers}` | "
            f"{specs[0]} wins {tally.wins[0]}/{tally.matches} = "
            f"{tally.wins[0] / tally.matches:.1%} [{lo:.1%}, {hi:.1%}]; "
            f"{won / max(tally.rounds, 1):.1%} of rounds; "
            f"{tally.chips[0] / max(tally.rounds, 1):+.2f} chips/round ({minutes:.0f} min) |"
        )
        for e, spec in enumerate(specs):
            times.setdefault(spec, []).extend(tally.times[e])
    rated = ratings(tally)  # the last run: the levels at one table
    lines += [
        "",
        "| level | rating (mu - 3 sigma) | mu | sigma | decision CPU ms: median | p99 | max "
        "| mean |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for e in sorted(range(3), key=lambda e: rated[e][0]):
        spec = specs[e]
        mu, sigma = rated[e]
        ts = sorted(times[spec])
        lines.append(
            f"| `{spec}` | {ordinal(mu, sigma):.1f} | {mu:.2f} | {sigma:.2f} | "
            f"{statistics.median(ts) * 1e3:.2f} | {percentile(ts, 0.99) * 1e3:.1f} | "
            f"{ts[-1] * 1e3:.1f} | {statistics.fmean(ts) * 1e3:.2f} |"
        )
    return "\n".join(lines)


def run(
    specs: list[str],
    matches: int,
    seed: int,
    workers: int = 1,
    rules: str = "standard",
    progress: bool = True,
) -> Tally:
    """Play the ladder's matches, on ``workers`` processes; results do not depend on ``workers``."""
    for spec in specs:
        make_bot(spec)  # fail early on a bad name or option
    RuleSet.preset(rules)
    jobs = [(specs, seed, i, rules) for i in range(matches)]
    tally = Tally()
    bar = tqdm(total=matches, desc="matches", unit="match", disable=not progress)
    if workers <= 1:
        for job in jobs:
            tally.add(play_one(job))
            bar.update()
    else:
        with get_context("spawn").Pool(workers) as pool:
            for result in pool.imap_unordered(play_one, jobs, chunksize=1):
                tally.add(result)
                bar.update()
    bar.close()
    return tally


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[1], formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--bots", default="hard,normal,normal", help="three bot entries")
    parser.add_argument("--matches", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--rules", default="standard", help="preset: standard, house or h19")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument(
        "--ladder",
        action="store_true",
        help="play docs/bots.md's runs (LADDER) and print its tables with each level's rating",
    )
    args = parser.parse_args(argv)
    if args.ladder:
        print(ladder(args.workers, not args.no_progress))
        return
    specs = args.bots.split(",")
    if len(specs) != 3:
        parser.error("--bots needs three entries")
    try:
        for spec in specs:
            make_bot(spec)
    except (ValueError, TypeError) as exc:
        parser.error(str(exc))
    started = time.perf_counter()
    tally = run(specs, args.matches, args.seed, args.workers, args.rules, not args.no_progress)
    print(
        f"bots: {args.bots}  matches: {args.matches}  seed: {args.seed}  rules: {args.rules}  "
        f"workers: {args.workers}  (seats rotated; even share 33.3%)"
    )
    print(report(specs, tally, time.perf_counter() - started))
    rated = ratings(tally)
    print(
        "openskill after these matches (mu - 3 sigma; mu; sigma): "
        + "  ".join(
            f"{e + 1}. {ordinal(m, s):.1f}; {m:.2f}; {s:.2f}" for e, (m, s) in enumerate(rated)
        )
    )


if __name__ == "__main__":
    main()
