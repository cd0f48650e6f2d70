"""Where the hard bot's strength is lost: its guesses of the opponents' hands.

    .venv/bin/python scripts/bot_diagnostics.py oracle --matches 200 --seed 11
    .venv/bin/python scripts/bot_diagnostics.py oracle --matches 200 --seed 11 --phases start
    .venv/bin/python scripts/bot_diagnostics.py calibration --matches 24 --seed 11

Both play the tournament's matches (``--bots``, by default the hard bot against two normal
bots, seats rotated as ``games.rules.tournament`` rotates them, the same match seeds).

``oracle``: the hard bot's deals come from the game's true state (the opponents' real hands and
secret sets; only the stock is shuffled, so the future stays unknown), in the decision phases
given (``start``, ``play``, ``draw_call``; all by default). What it wins beyond the plain bot is
what better inference of the hidden hands could be worth at most. It reads hidden cards, so it
exists only here, a measurement: the server's bots never see more than their seat's view.

``calibration``: at each of the hard bot's decisions where it could call Draw, 40 deals of its
sampler against each opponent's true deadwood (opponents that have discarded this round): the
mean of both, the mean absolute error of the sampled mean, and the deciles of the share of
samples at or below the truth (even deciles: calibrated; more in the low ones: the sampler
deals hands worse than the real ones).

A benchmark-like tool, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections import Counter
from multiprocessing import get_context
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.rules.bots.hard import HardBot  # noqa: E402
from games.rules.bots.knowledge import read  # noqa: E402
from games.rules.bots.sampling import Sampler, World  # noqa: E402
from games.rules.melds import best_arrangement  # noqa: E402
from games.rules.ruleset import RuleSet  # noqa: E402
from games.rules.selfplay import play_match  # noqa: E402
from games.rules.state import GameState  # noqa: E402
from games.rules.tournament import make_bot, match_seed, seating  # noqa: E402

#: The state of the game at the decision being made (one match per process at a time).
_NOW: dict[str, GameState] = {}


def _remember(state: GameState, seat: int, view: dict, legal: list, history: Any) -> None:
    _NOW["state"] = state


class TrueSampler(Sampler):
    """Deals the opponents' real hands and secret sets; the stock in a random order."""

    phases: frozenset[str] = frozenset()

    def sample(self, rng: random.Random) -> World:
        if self.k.phase not in self.phases:
            return super().sample(rng)
        state = _NOW["state"]
        stock = list(state.stock)
        rng.shuffle(stock)
        hidden = {i: state.melds[i].mask for i in self.hidden}
        return World(list(state.hands), stock, hidden)


def _seats(specs: list[str], index: int) -> tuple[list[Any], int]:
    """The bots in seat order and the seat of entry 0, rotated as the tournament does."""
    seat_of, entry_at = seating(index)
    return [make_bot(specs[entry_at[s]]) for s in range(3)], seat_of[0]


def oracle_match(job: tuple[list[str], int, int, str, tuple[str, ...]]) -> tuple[bool, int, int]:
    specs, seed, index, rules, phases = job
    bots, seat = _seats(specs, index)
    if phases and isinstance(bots[seat], HardBot):
        TrueSampler.phases = frozenset(phases)
        bots[seat].sampler_class = TrueSampler
    record = play_match(
        bots, random.Random(match_seed(seed, index)), RuleSet.preset(rules), watch=_remember
    )
    rounds = record.rounds
    return record.state.match_winner == seat, sum(r.winner == seat for r in rounds), len(rounds)


def calibration_match(job: tuple[list[str], int, int, str]) -> list[tuple[int, float, float]]:
    specs, seed, index, rules = job
    bots, seat = _seats(specs, index)
    hard = bots[seat]
    rows: list[tuple[int, float, float]] = []

    def watch(state: GameState, s: int, view: dict, legal: list, history: Any) -> None:
        if s != seat or not any(c["type"] == "call_draw" for c in legal):
            return
        k = read(view, history)
        sampler = hard.sampler(k)
        r = random.Random(index * 7919 + len(rows))
        ah = k.rules.ace_high_runs
        for o in k.opponents:
            if not k.discarded[o]:
                continue
            true = best_arrangement(state.hands[o], ah)[0]
            dealt = [best_arrangement(sampler.sample(r).hands[o], ah)[0] for _ in range(40)]
            below = sum(x <= true for x in dealt) / len(dealt)
            rows.append((true, statistics.mean(dealt), below))

    play_match(bots, random.Random(match_seed(seed, index)), RuleSet.preset(rules), watch=watch)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("oracle", "calibration"))
    parser.add_argument("--bots", default="hard,normal,normal", help="entry 0 is measured")
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--phases", default="start,play,draw_call", help="oracle: phases dealt from the truth"
    )
    args = parser.parse_args()
    specs = args.bots.split(",")
    with get_context("fork").Pool(args.workers) as pool:
        if args.what == "oracle":
            phases = tuple(p for p in args.phases.split(",") if p)
            jobs = [(specs, args.seed, i, args.rules, phases) for i in range(args.matches)]
            results = pool.map(oracle_match, jobs, chunksize=1)
            wins = sum(r[0] for r in results)
            won = sum(r[1] for r in results)
            rounds = sum(r[2] for r in results)
            print(
                f"{specs[0]} with the true hands in {','.join(phases) or 'no phase'}: "
                f"matches {wins}/{args.matches} = {wins / args.matches:.1%}, "
                f"rounds {won}/{rounds} = {won / max(rounds, 1):.1%}"
            )
            return 0
        jobs4 = [(specs, args.seed, i, args.rules) for i in range(args.matches)]
        rows = [row for match in pool.map(calibration_match, jobs4, chunksize=1) for row in match]
    if not rows:
        print("no decision to measure")
        return 1
    deciles = Counter(min(int(b * 10), 9) for _, _, b in rows)
    print(
        f"{len(rows)} opponent hands at {specs[0]}'s Draw-call decisions: true deadwood "
        f"{statistics.mean(t for t, _, _ in rows):.1f} on average, sampled "
        f"{statistics.mean(m for _, m, _ in rows):.1f}; the sampled mean misses the truth by "
        f"{statistics.mean(abs(t - m) for t, m, _ in rows):.1f} on average"
    )
    print("share of samples at or below the truth, by decile:", [deciles[i] for i in range(10)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
