"""Where the hard bot's strength is lost: its guesses of the opponents' hands.

    .venv/bin/python scripts/bot_diagnostics.py oracle --matches 200 --seed 11
    .venv/bin/python scripts/bot_diagnostics.py oracle --matches 200 --seed 11 --phases start
    .venv/bin/python scripts/bot_diagnostics.py oracle --matches 200 --phases play --know next
    .venv/bin/python scripts/bot_diagnostics.py calibration --matches 24 --seed 11
    .venv/bin/python scripts/bot_diagnostics.py inference --matches 24 --seed 11
    .venv/bin/python scripts/bot_diagnostics.py rounds --matches 200 --seed 11
    .venv/bin/python scripts/bot_diagnostics.py searches --matches 8 --seed 21

All five play the ladder's matches (``--bots``, by default the hard bot against two normal
bots, seats rotated as ``games.rules.ladder`` rotates them, the same match seeds).

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

``inference``: how well the hidden cards that matter most can be guessed from the table. At each
of the hard bot's discards, for each card of its hand: could the next seat meld it (hold two cards
that make a meld with it)? The Brier score (mean squared error of the probability given, 0 is
perfect) of three guesses: one constant rate (the best constant: the observed rate), the share of
the sampler's deals (``--deals`` of them) where it could, and the same deals weighted by how likely
the next seat's turns this round were with each deal's hand under the ``normal`` bot's policy,
the policy the seat really plays (``policy_likelihood``): near the best guess the table allows,
since that model of the seat is exact.

``rounds``: how the measured bot's rounds ended (its own Draw calls won or lost, opponents' calls
won by challenging or lost, Tongits, stock out); at the opponents' calls it lost, the deadwood and
hand size of it, the caller and the third seat; and at each of its turn starts where it could call
Draw, whether a call would have won there against the true hands, the opponents answering as their
bots do: how many such calls it made, and in how many rounds it lost it had passed one up.

``searches``: where the hard bot's search spends its CPU, by kind of decision (what its
candidates are: ``discard`` with how many, ``draw`` at a turn's start, ``answer`` to a Draw call,
``hold`` against exposing a meld): searches, share of the searching CPU (``time.thread_time``),
CPU and deals a search (each deal played out once for each candidate still in), and how often
the search chose what the ``normal`` bot would have played there (where the normal rule nearly
always agrees, the search could be skipped).

A benchmark-like tool, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.rules.bots.hard import HardBot  # noqa: E402
from games.rules.bots.heuristics import (  # noqa: E402
    Params,
    meld_partners,
    targets,
    typical_deadwood,
)
from games.rules.bots.knowledge import read  # noqa: E402
from games.rules.bots.normal import (  # noqa: E402
    NormalBot,
    best_take,
    discard_score,
    feed_chance,
)
from games.rules.bots.sampling import Sampler, World  # noqa: E402
from games.rules.cards import BIT, FULL_DECK, mask_of_codes, parse_card  # noqa: E402
from games.rules.engine import command_key, decide, legal_commands  # noqa: E402
from games.rules.events import DrawCalled, RoundEnded  # noqa: E402
from games.rules.ladder import make_bot, match_seed, seating  # noqa: E402
from games.rules.melds import SET, best_arrangement  # noqa: E402
from games.rules.ruleset import RuleSet  # noqa: E402
from games.rules.selfplay import play_match  # noqa: E402
from games.rules.state import DRAW_CALL, GameState, evolve, fold  # noqa: E402
from games.rules.views import player_view  # noqa: E402

#: The state of the game at the decision being made (one match per process at a time).
_NOW: dict[str, GameState] = {}

#: The normal bot's knobs (its defaults): the policy ``policy_likelihood`` scores turns by.
NORMAL = Params()


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
            nxt = (self.k.seat + 1) % 3
            mine = [c for c in range(52) if BIT[c] & self.k.hand]

            def pattern(hand: int) -> list[bool]:
                return [meld_partners(c, hand, ah) > 0 for c in mine]

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
    """The bots in seat order and the seat of entry 0, rotated as the ladder does."""
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


# ---------------------------------------------------------------- inference


@dataclass
class Turn:
    """One turn of a seat, as its opponents saw it (see ``seat_turns``)."""

    top: int = -1  # the discard on top when it began
    drew: bool = False  # it drew from the stock
    took: int = -1  # or it took this discard ...
    used: int = 0  # ... with these cards of its hand
    no_call: int = -1  # it could have called Draw and did not: its deadwood was above this
    revealed: int = 0  # cards of its hand melded or laid off during the turn
    hidden: bool = False  # it melded a secret set
    discard: int = -1
    dead: int = 0  # cards out of play when it discarded
    next_count: int = 0  # the next seat's cards then
    fits: int = 0  # cards that fitted an exposed meld then


def seat_turns(history: list[dict[str, Any]], seat: int, rules: RuleSet) -> list[Turn]:
    """``seat``'s turns in the current round, from a redacted history (public facts only)."""
    start = max(i for i, e in enumerate(history) if e.get("type") == "round_started")
    counts = list(history[start]["hand_counts"])
    pile: list[int] = []
    table = 0
    exposed: dict[int, tuple[int, bool]] = {}
    opened = [False, False, False]
    blocked = [False, False, False]
    owner: dict[int, int] = {}
    turns: list[Turn] = []
    current: Turn | None = None
    ah = rules.ace_high_runs
    for e in history[start + 1 :]:
        kind, s = e.get("type"), e.get("seat", -1)
        if kind in ("drew", "took_discard"):
            t = Turn(top=pile[-1] if pile else -1)
            threats = [x for x in range(3) if x != s and opened[x]]
            if rules.draw_call and opened[s] and not blocked[s] and threats:
                typical = min(typical_deadwood(max(0, counts[x])) for x in threats)
                t.no_call = int(NORMAL.call_frac * typical)
            blocked[s] = False
            if kind == "drew":
                t.drew = True
                counts[s] += 1
            else:
                pile.pop()
                t.took = parse_card(e["card"])
                owner.setdefault(e["meld_id"], s)
                if e.get("lay_off"):
                    table |= BIT[t.took]
                else:
                    mask = mask_of_codes(e["cards"])
                    t.used = mask & ~BIT[t.took]
                    exposed[e["meld_id"]] = (mask, e.get("kind") == SET)
                    table |= mask
                    counts[s] -= len(e["cards"]) - 1
                    opened[s] = True
            if s == seat:
                turns.append(t)
                current = t
            continue
        if s == seat and current is None and kind in ("melded", "laid_off", "discarded"):
            current = Turn()  # the dealer's first turn begins without a draw
            turns.append(current)
        if kind == "melded":
            owner[e["meld_id"]] = s
            opened[s] = True
            cards = e.get("cards")
            counts[s] -= len(cards) if cards else e.get("size", 4)
            if cards and not e.get("hidden"):
                exposed[e["meld_id"]] = (mask_of_codes(cards), e.get("kind") == SET)
                table |= mask_of_codes(cards)
            if s == seat and current is not None:
                current.revealed |= mask_of_codes(cards) if cards else 0
                current.hidden = current.hidden or not cards
        elif kind == "laid_off":
            c = parse_card(e["card"])
            counts[s] -= 1
            table |= BIT[c]
            mask, is_set = exposed.get(e["meld_id"], (0, False))
            if mask:
                exposed[e["meld_id"]] = (mask | BIT[c], is_set)
            if owner.get(e["meld_id"], s) != s:
                blocked[owner[e["meld_id"]]] = True
            if s == seat and current is not None:
                current.revealed |= BIT[c]
        elif kind == "discarded":
            c = parse_card(e["card"])
            if s == seat and current is not None:
                current.discard = c
                current.dead = table | sum(BIT[x] for x in pile)
                current.next_count = counts[(s + 1) % 3]
                for mask, is_set in exposed.values():
                    current.fits |= targets(mask, is_set, ah)
                current = None
            pile.append(c)
            counts[s] -= 1
    return turns


def policy_likelihood(
    turns: list[Turn], hand: int, rules: RuleSet, rng: random.Random, penalty: float = 4.0
) -> float:
    """Log-likelihood (up to a constant) of a seat's turns given it holds ``hand`` now, under
    the ``normal`` bot's policy: each hand before is rebuilt backwards (a card drawn from the
    stock is one of the hand's, picked at random); each discard costs the points by which the
    policy's own choice scored higher (``discard_score``), and ``penalty`` each: a meld or a
    card fitting an exposed meld held at a discard, a discard it could meld declined, Draw not
    called with a deadwood the policy calls with."""
    ah = rules.ace_high_runs
    fit = 0.0
    h = hand
    for t in reversed(turns):
        if t.discard >= 0:
            before = h | BIT[t.discard]
            if before & t.fits or best_arrangement(before, ah)[1]:
                fit -= penalty
            unknown = FULL_DECK & ~before & ~t.dead
            q2 = feed_chance(t.next_count, unknown)
            scores = {
                c: discard_score(c, before, unknown, q2, 0, ah, NORMAL.keep, NORMAL.danger)
                for c in range(52)
                if before & BIT[c]
            }
            fit -= max(scores.values()) - scores[t.discard]
            h = before
        h |= t.revealed
        if t.hidden:
            break
        if t.took >= 0:
            h |= t.used
        elif t.drew:
            h &= ~BIT[rng.choice([c for c in range(52) if h & BIT[c]])]
            if t.top >= 0 and best_take(h, t.top, ah, rules) is not None:
                fit -= penalty
        if t.no_call >= 0 and best_arrangement(h, ah)[0] <= t.no_call:
            fit -= penalty
    return fit


def inference_match(job: tuple[list[str], int, int, str, int]) -> list[tuple[bool, float, float]]:
    specs, seed, index, rules, deals = job
    bots, seat = _seats(specs, index)
    hard = bots[seat]
    nxt = (seat + 1) % 3
    rows: list[tuple[bool, float, float]] = []

    def watch(state: GameState, s: int, view: dict, legal: list, history: Any) -> None:
        if s != seat or not any(c["type"] == "discard" for c in legal):
            return
        k = read(view, history)
        if not k.discarded[nxt]:
            return
        r = random.Random(index * 7919 + len(rows))
        sampler = hard.sampler(k)
        hands = [sampler.sample(r).hands[nxt] for _ in range(deals)]
        turns = seat_turns(history, nxt, k.rules)
        fits = [policy_likelihood(turns, h, k.rules, r) for h in hands]
        top = max(fits)
        weights = [math.exp(f - top) for f in fits]
        total = sum(weights)
        ah = k.rules.ace_high_runs
        for c in range(52):
            if not k.hand & BIT[c]:
                continue
            melds = [meld_partners(c, h, ah) > 0 for h in hands]
            rows.append(
                (
                    meld_partners(c, state.hands[nxt], ah) > 0,
                    sum(melds) / deals,
                    sum(w for w, m in zip(weights, melds, strict=True) if m) / total,
                )
            )

    play_match(bots, random.Random(match_seed(seed, index)), RuleSet.preset(rules), watch=watch)
    return rows


# ---------------------------------------------------------------- rounds


def call_would_win(state: GameState, seat: int, bots: list[Any]) -> bool:
    """Whether ``seat`` calling Draw now wins the round, each opponent answering as its bot does."""
    rng = random.Random(0)
    for event in decide(state, seat, {"type": "call_draw"}):
        state = evolve(state, event)
    while state.phase == DRAW_CALL:
        s = state.turn
        cmd = bots[s].choose(player_view(state, s), legal_commands(state, s), rng, [])
        for event in decide(state, s, cmd):
            state = evolve(state, event)
    last = state.last_round
    return last is not None and last.winner == seat


@dataclass
class Ending:
    """One round as the measured seat saw it; seats counted from it: 0 itself, 1 next, 2 prior."""

    reason: str
    won: bool
    caller: int = -1  # who called Draw, if the round ended by one
    deadwood: tuple[int, int, int] = (0, 0, 0)  # when the Draw was called
    cards: tuple[int, int, int] = (0, 0, 0)
    chances: int = 0  # its turn starts where a Draw call would have won
    taken: int = 0  # ... and it called


def rounds_match(job: tuple[list[str], int, int, str]) -> list[Ending]:
    specs, seed, index, rules = job
    bots, seat = _seats(specs, index)
    measured = bots[seat]
    chance: dict[int, list[int]] = {}  # round -> [winning call chances, taken]
    pending: list[bool] = []

    def watch(state: GameState, s: int, view: dict, legal: list, history: Any) -> None:
        if s == seat and any(c["type"] == "call_draw" for c in legal):
            pending.append(call_would_win(state, seat, bots))

    class Recorder:
        name = measured.name
        uses_history = getattr(measured, "uses_history", False)

        def choose(self, view: dict, legal: list, rng: random.Random, history: Any = None) -> Any:
            if history is None:
                cmd = measured.choose(view, legal, rng)
            else:
                cmd = measured.choose(view, legal, rng, history)
            if pending:
                wins = pending.pop()
                if wins:
                    row = chance.setdefault(view["round"], [0, 0])
                    row[0] += 1
                    row[1] += cmd["type"] == "call_draw"
            return cmd

    bots[seat] = Recorder()
    record = play_match(
        bots, random.Random(match_seed(seed, index)), RuleSet.preset(rules), watch=watch
    )
    out: list[Ending] = []
    state = fold(record.events[:1])
    at_call: tuple[int, tuple[int, int, int], tuple[int, int, int]] | None = None
    ah = state.rules.ace_high_runs

    def rel(values: list[int]) -> tuple[int, int, int]:
        return (values[seat], values[(seat + 1) % 3], values[(seat + 2) % 3])

    for event in record.events[1:]:
        if isinstance(event, DrawCalled):
            at_call = (
                (state.turn - seat) % 3,
                rel([best_arrangement(h, ah)[0] for h in state.hands]),
                rel([h.bit_count() for h in state.hands]),
            )
        state = evolve(state, event)
        if isinstance(event, RoundEnded):
            row = chance.get(event.round, [0, 0])
            ending = Ending(event.reason, event.winner == seat, chances=row[0], taken=row[1])
            if event.reason == "draw" and at_call is not None:
                ending.caller, ending.deadwood, ending.cards = at_call
            out.append(ending)
            at_call = None
    return out


def rounds_report(name: str, endings: list[Ending]) -> str:
    n = len(endings)

    def share(k: int) -> str:
        return f"{k} ({k / max(n, 1):.1%})"

    own = [e for e in endings if e.reason == "draw" and e.caller == 0]
    theirs = [e for e in endings if e.reason == "draw" and e.caller > 0]
    lost = [e for e in theirs if not e.won]
    lines = [
        f"{n} rounds of {name}: won {share(sum(e.won for e in endings))}",
        f"  its Draw calls: won {share(sum(e.won for e in own))}, "
        f"lost {share(sum(not e.won for e in own))}",
        f"  opponents' Draw calls: won by challenging {share(sum(e.won for e in theirs))}, "
        f"lost {share(len(lost))}",
    ]
    for reason in ("tongits", "stock_out", "turn_cap"):
        these = [e for e in endings if e.reason == reason]
        if these:
            lines.append(
                f"  {reason}: won {share(sum(e.won for e in these))}, "
                f"lost {share(sum(not e.won for e in these))}"
            )
    if lost:
        # per lost call, its seats by role: the measured bot, the caller, the third seat
        roles = [(e, (0, e.caller, 3 - e.caller)) for e in lost]
        dw = [statistics.median(e.deadwood[r[i]] for e, r in roles) for i in range(3)]
        cards = [statistics.mean(e.cards[r[i]] for e, r in roles) for i in range(3)]
        callers = [e.caller for e in lost]
        lines.append(
            f"  at the {len(lost)} opponents' calls it lost (caller next seat {callers.count(1)}, "
            f"previous {callers.count(2)}): median deadwood {dw[0]:.0f} its own, the caller's "
            f"{dw[1]:.0f}, the third seat's {dw[2]:.0f}; cards in hand {cards[0]:.1f}, "
            f"{cards[1]:.1f}, {cards[2]:.1f}"
        )
    chances = sum(e.chances for e in endings)
    taken = sum(e.taken for e in endings)
    missed = sum(1 for e in endings if not e.won and e.chances > e.taken)
    lines.append(
        f"  turn starts where a Draw call would have won: {chances}, of which it called "
        f"{taken}; lost rounds in which it passed one up: {missed}"
    )
    return "\n".join(lines)


class MeasuredHard(HardBot):
    """The hard bot, recording each search: its kind, CPU, deals, whether normal agrees."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.searches: list[tuple[str, float, bool, int]] = []
        self._kind = ""
        self._normal = NormalBot()

    def _search(self, k: Any, cands: list, rng: random.Random) -> dict[str, Any]:
        kind = cands[0][1][0]
        self._kind = f"{kind} of {len(cands)}" if kind == "discard" else kind
        started = time.thread_time()
        try:
            return super()._search(k, cands, rng)
        finally:
            self._cpu = time.thread_time() - started
            self._deals = self.last_deals

    def choose(
        self, view: dict, legal: list, rng: random.Random, history: Any = None
    ) -> dict[str, Any]:
        self._kind = ""
        command = super().choose(view, legal, rng, history)
        if self._kind:
            normal = self._normal.choose(view, legal, random.Random(0), history)
            agrees = command_key(normal) == command_key(command)
            self.searches.append((self._kind, self._cpu, agrees, self._deals))
        return command


def searches_match(job: tuple[list[str], int, int, str]) -> list[tuple[str, float, bool, int]]:
    specs, seed, index, rules = job
    bots, seat = _seats(specs, index)
    options = {key: value for key, value in vars(bots[seat]).items() if key in _OPTIONS}
    bots[seat] = measured = MeasuredHard(**options)
    play_match(bots, random.Random(match_seed(seed, index)), RuleSet.preset(rules))
    return measured.searches


#: The hard bot's constructor options ``searches`` copies from ``--bots``' first entry.
_OPTIONS = (
    "playouts",
    "time_limit",
    "max_discards",
    "win_bonus",
    "prune",
    "check",
    "first_check",
    "indifferent",
    "halving",
)


def searches_report(rows: list[tuple[str, float, bool, int]]) -> str:
    total = sum(r[1] for r in rows) or 1.0
    lines = ["kind          searches  CPU share  CPU ms a search  deals a search  normal agrees"]
    for kind in sorted({r[0] for r in rows}):
        mine = [r for r in rows if r[0] == kind]
        cpu = sum(r[1] for r in mine)
        agree = sum(r[2] for r in mine)
        deals = sum(r[3] for r in mine)
        lines.append(
            f"{kind:<13} {len(mine):8d}  {cpu / total:9.1%}  {cpu / len(mine) * 1e3:15.1f}  "
            f"{deals / len(mine):14.0f}  {agree / len(mine):13.0%}"
        )
    agree = sum(r[2] for r in rows)
    lines.append(
        f"all           {len(rows):8d}  {total:8.1f}s  {'':15}  {'':14}  {agree / len(rows):13.0%}"
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "what", choices=("oracle", "calibration", "inference", "rounds", "searches")
    )
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
    parser.add_argument("--deals", type=int, default=300, help="inference: deals a decision")
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
        if args.what == "inference":
            jobs5 = [(specs, args.seed, i, args.rules, args.deals) for i in range(args.matches)]
            cards = [row for m in pool.map(inference_match, jobs5, chunksize=1) for row in m]
            if not cards:
                print("no decision to measure")
                return 1
            rate = sum(t for t, _, _ in cards) / len(cards)

            def brier(i: int) -> float:
                return statistics.mean((row[i] - row[0]) ** 2 for row in cards)

            print(
                f"{len(cards)} cards of {specs[0]}'s hand at its discards; the next seat could "
                f"meld {rate:.1%} of them. Brier score: a constant {rate:.3f} "
                f"{rate * (1 - rate):.4f}, the sampler's deals {brier(1):.4f}, weighted by the "
                f"normal policy's likelihood {brier(2):.4f}"
            )
            return 0
        jobs4 = [(specs, args.seed, i, args.rules) for i in range(args.matches)]
        if args.what == "searches":
            rows4 = [r for m in pool.map(searches_match, jobs4, chunksize=1) for r in m]
            if not rows4:
                print("no search to measure")
                return 1
            print(searches_report(rows4))
            return 0
        if args.what == "rounds":
            endings = [e for m in pool.map(rounds_match, jobs4, chunksize=1) for e in m]
            print(rounds_report(specs[0], endings))
            return 0
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
