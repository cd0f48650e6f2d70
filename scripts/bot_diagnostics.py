"""Where the hard bot's strength is lost: its guesses of the opponents' hands.

    .venv/bin/python scripts/bot_diagnostics.py oracle --matches 200 --seed 11
    .venv/bin/python scripts/bot_diagnostics.py oracle --matches 200 --seed 11 --phases start
    .venv/bin/python scripts/bot_diagnostics.py oracle --matches 200 --phases play --know next
    .venv/bin/python scripts/bot_diagnostics.py calibration --matches 24 --seed 11

Both play the tournament's matches (``--bots``, by default the hard bot against two normal
bots, seats rotated as ``games.rules.tournament`` rotates them, the same match seeds).

``oracle``: the hard bot's deals come from the game's true state (the opponents' real hands and
secret sets; only the stock is shuffled, so the future stays unknown), in the decision phases
given (``start``, ``play``, ``draw_call``; all by default). What it wins beyond the plain bot is
what better inference of the hidden hands could be worth at most. It reads hidden cards, so it
exists only here, a measurement: the server's bots never see more than their seat's view.
``--know`` narrows what the deals take from the truth, to tell which knowledge is worth what:
``all`` (every opponent's hand, the default), ``next`` or ``previous`` (that seat's hand only; the
other dealt by the sampler), ``takes`` (only which of the bot's own cards the next seat could
meld: the first of up to 60 deals with that pattern, else the closest), ``deadwood`` (only each
opponent's deadwood: the first of up to 30 deals within 2 points of it in all, else the closest).

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
from games.rules.bots.heuristics import pairs_for  # noqa: E402
from games.rules.bots.knowledge import read  # noqa: E402
from games.rules.bots.sampling import Sampler, World  # noqa: E402
from games.rules.cards import BIT  # noqa: E402
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
    """Deals what ``know`` takes from the true state; the rest as the bot's sampler would."""

    phases: frozenset[str] = frozenset()
    know: str = "all"

    def sample(self, rng: random.Random) -> World:
        if self.k.phase not in self.phases:
            return super().sample(rng)
        state = _NOW["state"]
        if self.know == "all":
            stock = list(state.stock)
            rng.shuffle(stock)
            hidden = {i: state.melds[i].mask for i in self.hidden}
            return World(list(state.hands), stock, hidden)
        if self.know in ("next", "previous"):
            return self._one_known(state, rng)
        return self._closest(state, rng)

    def _one_known(self, state: GameState, rng: random.Random) -> World:
        """The true hand of one opponent (and the true secret sets); the other one dealt."""
        me = self.k.seat
        known = (me + 1) % 3 if self.know == "next" else (me + 2) % 3
        other = 3 - me - known
        hidden = {i: state.melds[i].mask for i in self.hidden}
        taken = state.hands[known]
        for m in hidden.values():
            taken |= m
        pool = [c for c in range(52) if BIT[c] & self.k.unknown & ~taken]
        rng.shuffle(pool)
        hands = [0, 0, 0]
        hands[me], hands[known] = self.k.hand, state.hands[known]
        hands[other], rest = self._deal(other, pool, rng)
        rng.shuffle(rest)
        return World(hands, rest, hidden)

    def _closest(self, state: GameState, rng: random.Random) -> World:
        """The first of the sampler's deals that matches the truth in what ``know`` names."""
        ah = self.k.rules.ace_high_runs
        if self.know == "takes":
            pairs = pairs_for(ah)
            nxt = (self.k.seat + 1) % 3
            mine = [c for c in range(52) if BIT[c] & self.k.hand]

            def pattern(hand: int) -> list[bool]:
                return [any(hand & p == p for p in pairs[c]) for c in mine]

            truth = pattern(state.hands[nxt])

            def miss(w: World) -> int:
                return sum(a != b for a, b in zip(pattern(w.hands[nxt]), truth, strict=True))

            tries, good = 60, 0
        else:
            true_dw = {o: best_arrangement(state.hands[o], ah)[0] for o in self.k.opponents}

            def miss(w: World) -> int:
                return sum(
                    abs(best_arrangement(w.hands[o], ah)[0] - dw) for o, dw in true_dw.items()
                )

            tries, good = 30, 2
        best, best_miss = None, 1 << 30
        for _ in range(tries):
            w = super().sample(rng)
            m = miss(w)
            if m < best_miss:
                best, best_miss = w, m
                if m <= good:
                    break
        assert best is not None
        return best


def _seats(specs: list[str], index: int) -> tuple[list[Any], int]:
    """The bots in seat order and the seat of entry 0, rotated as the tournament does."""
    seat_of, entry_at = seating(index)
    return [make_bot(specs[entry_at[s]]) for s in range(3)], seat_of[0]


def oracle_match(
    job: tuple[list[str], int, int, str, tuple[str, ...], str],
) -> tuple[bool, int, int]:
    specs, seed, index, rules, phases, know = job
    bots, seat = _seats(specs, index)
    if phases and isinstance(bots[seat], HardBot):
        TrueSampler.phases = frozenset(phases)
        TrueSampler.know = know
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
    parser.add_argument(
        "--know",
        default="all",
        choices=("all", "next", "previous", "takes", "deadwood"),
        help="oracle: what the deals take from the truth",
    )
    args = parser.parse_args()
    specs = args.bots.split(",")
    with get_context("fork").Pool(args.workers) as pool:
        if args.what == "oracle":
            phases = tuple(p for p in args.phases.split(",") if p)
            jobs = [
                (specs, args.seed, i, args.rules, phases, args.know) for i in range(args.matches)
            ]
            results = pool.map(oracle_match, jobs, chunksize=1)
            wins = sum(r[0] for r in results)
            won = sum(r[1] for r in results)
            rounds = sum(r[2] for r in results)
            print(
                f"{specs[0]} knowing {args.know} in {','.join(phases) or 'no phase'}: "
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
