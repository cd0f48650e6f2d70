"""`python -m games.rules.simulate --matches N --seed S`: self-play matches, then summarise."""

from __future__ import annotations

import argparse
import random
import statistics
from collections import Counter

from tqdm import tqdm

from .ruleset import RuleSet
from .selfplay import play_match


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bots", default="greedy,greedy,greedy", help="three bot names")
    parser.add_argument("--rules", default="standard", help="preset: standard or house")
    args = parser.parse_args(argv)
    bots = args.bots.split(",")
    if len(bots) != 3:
        parser.error("--bots needs three names")
    rng = random.Random(args.seed)
    rules = RuleSet.preset(args.rules)
    reasons: Counter[str] = Counter()
    rounds_per_match, events_per_match, turns = [], [], []
    match_wins: Counter[int] = Counter()
    losses: list[int] = []  # what each match's losers owed, in stakes (table stakes' scale)
    no_winner = 0
    for _ in tqdm(range(args.matches), desc="matches", unit="match", disable=args.matches < 50):
        record = play_match(bots, rng, rules)
        rounds_per_match.append(len(record.rounds))
        events_per_match.append(len(record.events))
        match_wins[record.state.match_winner] += 1
        losses.extend(-c // rules.stake for c in record.state.chips if c < 0)
        for r in record.rounds:
            reasons[r.reason] += 1
            no_winner += r.winner is None
        turns.extend(_turns_per_round(record.events))
    total_rounds = sum(rounds_per_match)
    print(f"matches: {args.matches}  seed: {args.seed}  bots: {args.bots}  rules: {args.rules}")
    print(f"rounds: {total_rounds}  ({statistics.mean(rounds_per_match):.2f} per match)")
    print(
        "rounds ended by: "
        + ", ".join(f"{k} {v} ({v / total_rounds:.1%})" for k, v in reasons.most_common())
        + f"; without a winner: {no_winner}"
    )
    print(f"turns per round: mean {statistics.mean(turns):.1f}, max {max(turns)}")
    print(f"events per match: mean {statistics.mean(events_per_match):.1f}")
    print("match wins by seat: " + ", ".join(f"{s}: {match_wins[s]}" for s in range(3)))
    if losses:
        losses.sort()
        at = [losses[min(len(losses) - 1, int(q * len(losses)))] for q in (0.5, 0.9, 0.99)]
        print(
            f"a loser owes, in stakes: p50 {at[0]}, p90 {at[1]}, p99 {at[2]}, "
            f"max {losses[-1]} ({len(losses)} losers)"
        )


def _turns_per_round(events: list) -> list[int]:
    out, turns = [], 0
    for e in events:
        if e.type == "discarded":
            turns += 1
        elif e.type == "round_ended":
            out.append(turns)
            turns = 0
    return out


if __name__ == "__main__":
    main()
