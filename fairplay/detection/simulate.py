"""``python -m fairplay.detection.simulate``: does the detection find what it should, and only that?

A seeded population of bot accounts plays matches through the rules core (no database), each
table played for chips (a buy-in of 20 stakes, settled under the table-stakes rule). Every match
is scored with the projection's own code (``scoring.score_match``), added to an in-memory book
(``stats.PairBook``) and judged with the default thresholds after each match, as the worker does.

The population: honest accounts (normal bots, a fifth of them easy bots: beginners who feed and
forget lay-offs towards everyone), colluding pairs (two normal bots that see each other's hands
and play for the pair: they feed the partner's melds, never lay off on them, and answer Draw
calls to protect the partner) and feeders dumping to a main account (half resign at once, half
play to lose: they hold their melds, feed the main and fold). Each pair under test plays a series
of matches together, the third seat drawn at random from the honest accounts every match. The
table printed: at each sample size, the share of each kind of pair flagged by then (an honest
pair: any flag; a colluding pair: collusion; a feeder: chip dumping naming the main), and of the
incidental honest pairs (a tested account and a third seat) ever flagged.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from games.rules import table_stakes
from games.rules.bots import get_bot
from games.rules.bots.heuristics import meld_partners
from games.rules.bots.knowledge import Knowledge
from games.rules.bots.normal import NormalBot
from games.rules.cards import BIT, CODES, POINTS, parse_card
from games.rules.engine import deal, decide, legal_commands, new_game, resign
from games.rules.events import event_to_dict
from games.rules.melds import deadwood_of
from games.rules.ruleset import RuleSet
from games.rules.state import DEALING, MATCH_OVER, ROUND_OVER, GameState, evolve, fold
from games.rules.views import player_view

from .flags import Flag
from .scoring import score_match
from .stats import PairBook, Thresholds, judge_pairs

STAKE = 5
BUY_IN = 20 * STAKE

Policy = Callable[[GameState, int, dict[str, Any], list[dict[str, Any]], random.Random], Any]


class Colluder(NormalBot):
    """A normal bot that sees its partner's hand and plays for the pair."""

    def __init__(self, partner_seat: int, state: GameState) -> None:
        super().__init__()
        self.partner = partner_seat
        self.state = state

    def play(self, k: Knowledge, by_type: dict, legal: list[dict[str, Any]]) -> dict[str, Any]:
        spared = {m.meld_id for m in k.melds if m.owner == self.partner}
        if "lay_off" in by_type:
            kept = [c for c in by_type["lay_off"] if c["meld_id"] not in spared]
            if kept:
                by_type = {**by_type, "lay_off": kept}
            else:
                by_type = {t: v for t, v in by_type.items() if t != "lay_off"}
        return super().play(k, by_type, legal)

    def pick_discard(self, k: Knowledge, pool: int) -> int:
        if (k.seat + 1) % 3 == self.partner:
            partner_hand = self.state.hands[self.partner]
            ah = k.rules.ace_high_runs
            best, best_points = -1, -1
            for c in range(52):
                fits = k.hand & BIT[c] and meld_partners(c, partner_hand, ah)
                if fits and POINTS[c] > best_points:
                    best, best_points = c, POINTS[c]
            if best >= 0:
                return best
        return super().pick_discard(k, pool)

    def answer(self, k: Knowledge, by_type: dict) -> dict[str, Any] | None:
        if "challenge" not in by_type:
            return None
        rules = self.state.rules
        mine = deadwood_of(self.state.hands[k.seat], rules)
        theirs = deadwood_of(self.state.hands[self.partner], rules)
        if k.draw_caller == self.partner:
            # the partner wins anyway: a challenge makes the third pay the challenged price
            return by_type["challenge"][0] if theirs < mine else by_type["fold"][0]
        if self.state.opened(self.partner) and theirs < mine:
            return by_type["fold"][0]  # leave the win to the partner
        return None

    def choose(self, view, legal, rng, history=None):  # type: ignore[override]
        if len(legal) > 1 and view["phase"] == "draw_call":
            from games.rules.bots.knowledge import group_by_type, read

            cmd = self.answer(read(view), group_by_type(legal))
            if cmd is not None:
                return cmd
        return super().choose(view, legal, rng, history)


class Loser:
    """A feeder playing to lose to its main account: holds its melds (burned), never lays off,
    never takes or calls, folds, and discards what the main can meld when the main is next."""

    def __init__(self, main_seat: int, state: GameState) -> None:
        self.main = main_seat
        self.state = state

    def choose(self, view, legal, rng, history=None):  # type: ignore[no-untyped-def]
        by_type: dict[str, list[dict[str, Any]]] = {}
        for cmd in legal:
            by_type.setdefault(cmd["type"], []).append(cmd)
        if "fold" in by_type:
            return by_type["fold"][0]
        if "draw" in by_type:
            return by_type["draw"][0]
        discards = by_type.get("discard")
        if not discards:
            return legal[0]
        seat = view["seat"]
        hand = self.state.hands[seat]
        if (seat + 1) % 3 == self.main:
            main_hand = self.state.hands[self.main]
            ah = self.state.rules.ace_high_runs
            for cmd in discards:
                if meld_partners(parse_card(cmd["card"]), main_hand, ah):
                    return cmd
        low = min((c for c in range(52) if hand & BIT[c]), key=lambda c: (POINTS[c], c))
        code = CODES[low]
        return next((c for c in discards if c["card"] == code), discards[0])


@dataclass
class Series:
    kind: str  # honest, colluding, resigner, loser
    a: int  # for feeders: the feeder
    b: int  # for feeders: the main account
    flagged_at: int | None = None  # matches together when first flagged (its own kind)
    any_flag_at: int | None = None


@dataclass
class Run:
    book: PairBook = field(default_factory=PairBook)
    flagged: set[tuple[str, tuple[int, ...]]] = field(default_factory=set)
    # Each (kind, accounts) the first time it was flagged, as the worker would send it.
    flags: list[Flag] = field(default_factory=list)
    matches: int = 0
    cpu_play: float = 0.0
    cpu_score: float = 0.0
    searched: int = 0


def play_one(
    rng: random.Random,
    seat_accounts: list[int],
    kinds: dict[int, str],
    partners: dict[int, int],
    rules: RuleSet,
) -> tuple[list[dict[str, Any]], list[int]]:
    """One match: each account's policy by its kind; the events as stored and the settlement."""
    seats = [{"kind": "user", "user_id": a} for a in seat_accounts]
    first = new_game(rules, seats, rng, buy_in=BUY_IN)
    state = fold([first])
    events = [first]
    seat_of = {a: s for s, a in enumerate(seat_accounts)}
    honest = {a: get_bot(kinds[a]) for a in seat_accounts if kinds[a] in ("normal", "easy")}
    resigners = {seat_of[a] for a in seat_accounts if kinds[a] == "resigner"}
    for s in sorted(resigners):
        for e in resign(state, s):
            events.append(e)
            state = evolve(state, e)
    while state.phase != MATCH_OVER:
        if state.phase in (DEALING, ROUND_OVER):
            e = deal(state, rng)
            events.append(e)
            state = evolve(state, e)
            for e in _resigned_moves(state):
                events.append(e)
                state = evolve(state, e)
            continue
        seat = state.turn
        account = seat_accounts[seat]
        kind = kinds[account]
        view = player_view(state, seat)
        legal = legal_commands(state, seat)
        if kind == "colluder":
            bot: Any = Colluder(seat_of[partners[account]], state)
        elif kind == "loser":
            bot = Loser(seat_of[partners[account]], state)
        else:
            bot = honest[account]
        command = bot.choose(view, legal, rng)
        for e in decide(state, seat, command):
            events.append(e)
            state = evolve(state, e)
        for e in _resigned_moves(state):
            events.append(e)
            state = evolve(state, e)
    paid = table_stakes(list(state.chips), [BUY_IN] * 3)
    return [event_to_dict(e) for e in events], paid


def _resigned_moves(state: GameState) -> list:
    from games.rules.engine import play_resigned

    return play_resigned(state)


def simulate(
    seed: int,
    honest_pairs: int,
    colluding_pairs: int,
    feeders: int,
    matches: int,
    checkpoints: tuple[int, ...],
    thresholds: Thresholds,
    thirds: int = 200,
    progress: Callable[[int, int], None] | None = None,
    account_ids: Iterable[int] | None = None,
) -> tuple[Run, list[Series], dict[int, dict[str, float]]]:
    """Play every series and answer the run, the series, and per checkpoint the shares.

    ``account_ids`` (ascending; default 1, 2, ...) names the accounts, so that a test can give
    the ids of real users and send the run's flags (``Run.flags``) on to fair play's cases:
    ``thirds + 2 * (honest_pairs + colluding_pairs + feeders)`` of them are used."""
    rng = random.Random(seed)
    rules = dataclasses.replace(RuleSet.preset("standard"), stake=STAKE)
    kinds: dict[int, str] = {}
    partners: dict[int, int] = {}
    next_id = iter(account_ids if account_ids is not None else range(1, 10**9))

    def honest_account() -> int:
        a = next(next_id)
        kinds[a] = "easy" if rng.random() < 0.2 else "normal"
        return a

    third_pool = [honest_account() for _ in range(thirds)]
    series: list[Series] = []
    for _ in range(honest_pairs):
        series.append(Series("honest", honest_account(), honest_account()))
    for _ in range(colluding_pairs):
        a, b = next(next_id), next(next_id)
        kinds[a] = kinds[b] = "colluder"
        partners[a], partners[b] = b, a
        series.append(Series("colluding", a, b))
    for i in range(feeders):
        f, m = next(next_id), next(next_id)
        kinds[f] = "resigner" if i % 2 == 0 else "loser"
        kinds[m] = "normal"
        partners[f] = m
        series.append(Series(kinds[f], f, m))
    rng.shuffle(series)
    run = Run()
    shares: dict[int, dict[str, float]] = {}
    total = len(series) * matches
    # Series interleaved match by match, so the population's rates grow as on a live server.
    for n in range(1, matches + 1):
        for sr in series:
            third = rng.choice(third_pool)
            seat_accounts = [sr.a, sr.b, third]
            rng.shuffle(seat_accounts)
            t0 = time.process_time()
            events, paid = play_one(rng, seat_accounts, kinds, partners, rules)
            t1 = time.process_time()
            signals = score_match(f"sim-{run.matches}", events, seat_accounts, paid, BUY_IN)
            run.book.add(signals.pairs)
            found = judge_pairs(
                seat_accounts,
                thresholds,
                run.book.collusion,
                run.book.chip_dumping,
                run.book.get,
            )
            run.cpu_play += t1 - t0
            run.cpu_score += time.process_time() - t1
            run.searched += signals.searched
            run.matches += 1
            for kind, accounts, score, parts in found:
                if (kind, accounts) not in run.flagged:
                    run.flags.append(_flag(run, kind, accounts, score, parts, thresholds))
                run.flagged.add((kind, accounts))
            _note(sr, n, run.flagged)
            if progress is not None:
                progress(run.matches, total)
        if n in checkpoints:
            shares[n] = _shares(series, n, run.flagged, kinds)
    return run, series, shares


def _flag(
    run: Run,
    kind: str,
    accounts: tuple[int, ...],
    score: float,
    parts: dict[str, Any],
    thresholds: Thresholds,
) -> Flag:
    """The flag as the worker raises it (``projections._flag``), with the evidence the book
    holds (no stored games to name)."""
    threshold = thresholds.collusion if kind == "collusion" else thresholds.chip_dumping
    a, b = accounts
    evidence = {
        "signals": parts,
        "games_together": run.book.get(a, b).games,
        "chip_flow": {
            f"{a}_to_{b}": run.book.get(a, b).chips,
            f"{b}_to_{a}": run.book.get(b, a).chips,
        },
    }
    return Flag(kind, accounts, round(score, 3), threshold, evidence, ())


def _note(sr: Series, n: int, flagged: set[tuple[str, tuple[int, ...]]]) -> None:
    pair = tuple(sorted((sr.a, sr.b)))
    hit_any = ("collusion", pair) in flagged or any(
        ("chip_dumping", acc) in flagged for acc in ((sr.a, sr.b), (sr.b, sr.a))
    )
    if sr.kind == "colluding":
        own = ("collusion", pair) in flagged
    elif sr.kind in ("resigner", "loser"):
        own = ("chip_dumping", (sr.b, sr.a)) in flagged
    else:
        own = hit_any
    if own and sr.flagged_at is None:
        sr.flagged_at = n
    if hit_any and sr.any_flag_at is None:
        sr.any_flag_at = n


def _shares(series: list[Series], n: int, flagged: set, kinds: dict[int, str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for kind in ("honest", "colluding", "resigner", "loser"):
        group = [s for s in series if s.kind == kind]
        if group:
            hit = sum(1 for s in group if s.flagged_at is not None and s.flagged_at <= n)
            out[kind] = hit / len(group)
    tested = {(min(s.a, s.b), max(s.a, s.b)) for s in series}
    incidental = 0
    for _kind, accounts in flagged:
        pair = (min(accounts), max(accounts))
        if pair in tested:
            continue
        if all(kinds.get(a) in ("normal", "easy") for a in pair):
            incidental += 1
    out["incidental"] = incidental
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--honest-pairs", type=int, default=200)
    parser.add_argument("--colluding-pairs", type=int, default=20)
    parser.add_argument("--feeders", type=int, default=10)
    parser.add_argument("--matches", type=int, default=50, help="matches each pair plays")
    parser.add_argument("--checkpoints", default="10,25,50")
    parser.add_argument("--collusion", type=float, default=Thresholds.collusion)
    parser.add_argument("--chip-dumping", type=float, default=Thresholds.chip_dumping)
    parser.add_argument("--scores", action="store_true", help="print score quantiles")
    args = parser.parse_args(argv)
    checkpoints = tuple(int(x) for x in args.checkpoints.split(",") if x)
    thresholds = Thresholds(collusion=args.collusion, chip_dumping=args.chip_dumping)
    started = time.process_time()
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] > 10:
            last[0] = now
            print(f"  {done}/{total} matches", file=sys.stderr, flush=True)

    run, series, shares = simulate(
        args.seed,
        args.honest_pairs,
        args.colluding_pairs,
        args.feeders,
        args.matches,
        checkpoints,
        thresholds,
        progress=progress,
    )
    cpu = time.process_time() - started
    counts = {k: sum(1 for s in series if s.kind == k) for k in ("honest", "colluding")}
    counts["feeders"] = sum(1 for s in series if s.kind in ("resigner", "loser"))
    print(
        f"seed {args.seed}: {counts['honest']} honest pairs, {counts['colluding']} colluding "
        f"pairs, {counts['feeders']} feeders; {run.matches} matches; thresholds collusion "
        f"{thresholds.collusion:g}, chip dumping {thresholds.chip_dumping:g}"
    )
    print(
        "| matches together | colluding pairs flagged | feeders flagged (resign / lose) "
        "| honest pairs flagged | incidental honest pairs flagged |"
    )
    print("| ---: | ---: | ---: | ---: | ---: |")
    for n in checkpoints:
        s = shares[n]
        print(
            f"| {n} | {s.get('colluding', 0):.1%} | {s.get('resigner', 0):.1%} / "
            f"{s.get('loser', 0):.1%} | {s.get('honest', 0):.2%} | {int(s['incidental'])} |"
        )
    print(
        f"CPU: {cpu:.0f} s in all; per match {run.cpu_play / run.matches * 1000:.1f} ms playing, "
        f"{run.cpu_score / run.matches * 1000:.1f} ms scoring and judging; "
        f"{run.searched} Draw answers searched"
    )
    if args.scores:
        _print_scores(run, series)
    return 0


def _print_scores(run: Run, series: list[Series]) -> None:
    """The final scores of each kind of pair (to choose thresholds from)."""
    for kind in ("honest", "colluding", "resigner", "loser"):
        col = sorted(run.book.collusion(s.a, s.b)[0] for s in series if s.kind == kind)
        dump = sorted(
            max(run.book.chip_dumping(s.a, s.b)[0], run.book.chip_dumping(s.b, s.a)[0])
            for s in series
            if s.kind == kind
        )
        if col:
            q = [col[int(f * (len(col) - 1))] for f in (0, 0.1, 0.5, 0.9, 0.99, 1)]
            d = [dump[int(f * (len(dump) - 1))] for f in (0, 0.1, 0.5, 0.9, 0.99, 1)]
            print(f"{kind}: collusion min/p10/p50/p90/p99/max " + " ".join(f"{x:.1f}" for x in q))
            print(
                f"{kind}: chip dumping min/p10/p50/p90/p99/max " + " ".join(f"{x:.1f}" for x in d)
            )
    inc_c = [run.book.collusion(a, b)[0] for (a, b) in run.book.pairs if a < b]
    print(f"all pairs: {len(inc_c)}, collusion max {max(inc_c):.1f}")


if __name__ == "__main__":
    raise SystemExit(main())
