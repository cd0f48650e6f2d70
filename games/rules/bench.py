"""`python -m games.rules.bench`: medians of the rules core's hot paths on this machine.

Each figure is the median over ``--repeat`` runs; the first is a baseline (summing a hand's
points) measured in the same run, so figures from different machines compare as ratios.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from .cards import CODES
from .engine import decide, legal_commands
from .melds import best_arrangement
from .ruleset import RuleSet
from .selfplay import play_match
from .state import evolve, fold


def _median_us(fn: Callable[[], object], inner: int, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        runs.append((time.perf_counter() - start) / inner * 1e6)
    return statistics.median(runs)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    rules = RuleSet()

    # deadwood of fresh random 13-card hands, with the cache bypassed: every call is real work
    hands = [[CODES[c] for c in rng.sample(range(52), 13)] for _ in range(2000)]
    masks = [sum(1 << CODES.index(c) for c in h) for h in hands]
    uncached = best_arrangement.__wrapped__
    it = iter(range(10**9))

    def one_deadwood() -> None:
        uncached(masks[next(it) % len(masks)], False)

    def one_points() -> None:
        m = masks[next(it) % len(masks)]
        sum(1 for _ in range(m.bit_count()))

    baseline = _median_us(one_points, 2000, args.repeat)
    dw = _median_us(one_deadwood, 2000, args.repeat)

    # decide + evolve of a legal command, over positions from real self-play
    records = [play_match(["greedy"] * 3, random.Random(args.seed + i), rules) for i in range(5)]
    positions = []
    for record in records:
        state = None
        for event in record.events:
            state = evolve(state, event)
            if state.phase in ("start", "play", "draw_call"):
                legal = legal_commands(state, state.turn)
                if legal:  # empty between a last discard and its round_ended
                    positions.append((state, state.turn, rng.choice(legal)))
    pos_iter = iter(range(10**9))

    def one_move() -> None:
        state, seat, command = positions[next(pos_iter) % len(positions)]
        for event in decide(state, seat, command):
            state = evolve(state, event)

    move = _median_us(one_move, 2000, args.repeat)

    # fold of a whole match's events, as dicts straight from the store
    from .events import event_to_dict

    stored = [[event_to_dict(e) for e in r.events] for r in records]
    fold_iter = iter(range(10**9))
    folds = _median_us(lambda: fold(stored[next(fold_iter) % len(stored)]), 20, args.repeat)
    events_per_match = statistics.mean(len(s) for s in stored)

    # whole greedy-vs-greedy matches per second, one core
    match_seeds = iter(range(10**9))
    per_match = _median_us(
        lambda: play_match(["greedy"] * 3, random.Random(next(match_seeds)), rules), 20, args.repeat
    )

    print(f"rules core benchmark (median of {args.repeat} runs)")
    print(f"  baseline: count a hand's cards             {baseline:9.2f} us")
    print(f"  deadwood of a random 13-card hand          {dw:9.2f} us  ({dw / baseline:.1f}x)")
    print(f"  decide + evolve of a legal command         {move:9.2f} us  ({move / baseline:.1f}x)")
    print(
        f"  fold of a whole match ({events_per_match:.0f} events, dicts) {folds / 1000:9.3f} ms"
        f"  ({folds / baseline:.0f}x)"
    )
    print(f"  greedy-vs-greedy matches per second        {1e6 / per_match:9.1f}")


if __name__ == "__main__":
    main()
