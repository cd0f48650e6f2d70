"""The ``hard`` bot: flat Monte Carlo over determinizations, with fast policy playouts.

For a decision that matters (how to start a turn, which card to discard, whether to challenge a
Draw) it deals the cards it cannot see at random many times, consistent with everything its seat
has seen (its hand, the table, the discard pile, hand counts, secret sets, and softly, discards an
opponent declined), plays every candidate to the end of the round in each deal with the quick
``playout`` policy for all seats, and keeps the candidate with the best mean result. Every
candidate meets the same deals (common random numbers), so the comparison is sharp with a few
hundred playouts. Melding and laying off follow the ``normal`` bot's judgement; a decision with
one sensible candidate is instant.

It is deterministic for a given ``rng`` state when ``time_limit`` is ``None`` (a pure playout
budget); with a time limit the budget also stops at the deadline, for a responsive table.
"""

from __future__ import annotations

import random
import time
from functools import lru_cache
from typing import Any

from ..cards import BIT, CODES, mask_of_codes, parse_card
from ..melds import best_arrangement
from .heuristics import left_after_lay_offs, pick_opener
from .knowledge import Knowledge, read
from .normal import NormalBot, best_take, choose_discard
from .playout import Params, Sim
from .sampling import Sampler


class HardBot(NormalBot):
    name = "hard"
    uses_history = True

    def __init__(
        self,
        playouts: int = 600,
        time_limit: float | None = 0.2,
        max_discards: int = 5,
        win_bonus: float = 6.0,
        extra: int = 0,
        hold: bool = True,
        tries: int = 6,
        match_aware: bool = True,
        slack: float = 2.0,
        params: Params | None = None,
    ) -> None:
        super().__init__()
        self.playouts = playouts
        self.time_limit = time_limit
        self.max_discards = max_discards
        self.win_bonus = win_bonus
        self.extra = extra
        self.hold = hold
        self.tries = tries
        self.match_aware = match_aware
        self._equity = (0.0, 0.0, 0.0)
        self.slack = slack
        self.params = params or Params()

    def choose(
        self,
        view: dict[str, Any],
        legal: list[dict[str, Any]],
        rng: random.Random,
        history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        if len(legal) == 1:
            return legal[0]
        k = read(view, history)
        by_type: dict[str, list[dict[str, Any]]] = {}
        for cmd in legal:
            by_type.setdefault(cmd["type"], []).append(cmd)
        if k.phase == "draw_call":
            return self._answer(k, by_type, rng)
        if k.phase == "start":
            return self._start(k, by_type, legal, rng)
        return self._play(k, by_type, legal, rng)

    # ------------------------------------------------------------ the three searched decisions

    def _answer(self, k: Knowledge, by_type: dict, rng: random.Random) -> dict[str, Any]:
        if "challenge" not in by_type:
            return by_type["fold"][0]
        cands = [
            (by_type["challenge"][0], ("answer", True)),
            (by_type["fold"][0], ("answer", False)),
        ]
        return self._search(k, cands, rng)

    def _start(
        self, k: Knowledge, by_type: dict, legal: list[dict[str, Any]], rng: random.Random
    ) -> dict[str, Any]:
        cands: list[tuple[dict[str, Any], tuple]] = []
        if "draw" in by_type:
            cands.append((by_type["draw"][0], ("draw",)))
        ace_high = k.rules.ace_high_runs
        top = k.discard[-1] if k.discard else -1
        takes = [c for c in by_type.get("take_discard", []) if "cards" in c]
        if takes:
            # the best take by resulting deadwood, and any take that leaves a different hand
            best = best_take(k.hand, top, ace_high, k.rules)
            seen: set[int] = set()
            scored = []
            for cmd in takes:
                used = mask_of_codes(cmd["cards"])
                after = best_arrangement(k.hand & ~used, ace_high)[0]
                scored.append((after, used != best, used, cmd))
            scored.sort(key=lambda t: (t[0], t[1]))
            for _after, _, used, cmd in scored[:2]:
                if used not in seen:
                    seen.add(used)
                    cands.append((cmd, ("take", used)))
        for cmd in by_type.get("take_discard", []):
            if "meld_id" in cmd:
                idx = next(i for i, m in enumerate(k.melds) if m.meld_id == cmd["meld_id"])
                cands.append((cmd, ("take_onto", idx)))
                break
        if "call_draw" in by_type:
            threats = [o for o in k.opponents if k.opened[o]]
            if not threats:
                return by_type["call_draw"][0]  # both opponents must fold: a sure win
            cands.append((by_type["call_draw"][0], ("call",)))
        if len(cands) == 1:
            return cands[0][0]
        return self._search(k, cands, rng)

    def _play(
        self, k: Knowledge, by_type: dict, legal: list[dict[str, Any]], rng: random.Random
    ) -> dict[str, Any]:
        ace_high = k.rules.ace_high_runs
        _, melds = best_arrangement(k.hand, ace_high)
        cover = 0
        for m in melds:
            cover |= m
        loose = k.hand & ~cover
        expose: tuple[int, ...] = melds
        if melds and self.hold:
            table = [(m.mask, m.is_set) for m in k.melds if not m.hidden and m.mask]
            if left_after_lay_offs(loose, table, ace_high).bit_count() > 1:
                # not going out: open with one meld, keep the others in hand
                opened = k.opened[k.seat]
                expose = () if opened else (pick_opener(melds, k.unknown, ace_high),)
        if expose and "meld" in by_type:
            cmd = _meld_cmd(by_type["meld"], expose)
            if cmd is not None:
                return cmd
        if "lay_off" in by_type:
            owners = {m.meld_id: m.owner for m in k.melds}
            mine = None
            for cmd in by_type["lay_off"]:
                if BIT[parse_card(cmd["card"])] & loose:
                    if owners.get(cmd["meld_id"]) != k.seat:
                        return cmd  # an opponent's meld first: it blocks their Draw call
                    mine = mine or cmd
            if mine is not None:
                return mine
        discards = by_type.get("discard", [])
        if not discards:
            return legal[0]
        ranked = self._ranked_discards(k, loose or k.hand)
        if len(ranked) == 1:
            return _discard_cmd(discards, ranked[0])
        cands = [(_discard_cmd(discards, c), ("discard", c)) for c in ranked]
        return self._search(k, cands, rng)

    def _ranked_discards(self, k: Knowledge, pool: int) -> list[int]:
        """The ``max_discards`` most plausible discards, best first by the normal bot's score."""
        out = []
        rest = pool
        while rest and len(out) < self.max_discards:
            c = choose_discard(
                k.hand,
                rest,
                k.unknown,
                k.hand_counts[(k.seat + 1) % 3],
                0,
                k.rules.ace_high_runs,
                self.keep,
                self.danger,
            )
            out.append(c)
            rest &= ~BIT[c]
        return out

    # ------------------------------------------------------------ flat Monte Carlo

    def _search(
        self, k: Knowledge, cands: list[tuple[dict[str, Any], tuple]], rng: random.Random
    ) -> dict[str, Any]:
        deadline = None if self.time_limit is None else time.perf_counter() + self.time_limit
        n = len(cands)
        totals = [0.0] * n
        self._equity = _equity_after(k)
        worlds = max(1, self.playouts // n)
        me = k.seat
        params = self.params
        hold = 1 << me if self.hold else 0
        sampler = Sampler(k, self.extra, tries=self.tries, slack=self.slack)
        for _ in range(worlds):
            world = sampler.sample(rng)
            for i, (_, action) in enumerate(cands):
                sim = Sim(k, world, params, hold)
                _apply(sim, me, action)
                sim.run()
                totals[i] += self._value(k, sim)
            if deadline is not None and time.perf_counter() > deadline:
                break
        best = max(range(n), key=lambda i: totals[i])
        return cands[best][0]

    def _value(self, k: Knowledge, sim: Sim) -> float:
        """Chips won in the round, plus what the round's winner does to the match: the change in
        this seat's chance to win the match, worth ``win_bonus`` chips per 1/3 of a match."""
        me = k.seat
        v = float(sim.payouts[me])
        if self.match_aware:
            if sim.winner is not None:
                v += self.win_bonus * 3 * self._equity[sim.winner]
            return v
        if sim.winner == me:
            v += self.win_bonus
        elif sim.winner is not None:
            v -= self.win_bonus / 2
        return v


#: Round-win chances assumed when valuing a round's result for the match: this bot's, then each
#: opponent's. Only the shape matters (who is close to winning the match), not the exact values.
_ROUND_ODDS = (0.4, 0.3, 0.3)


@lru_cache(maxsize=4096)
def _match_win(wins: tuple[int, int, int], target: int) -> float:
    """Chance that seat 0 wins the match from these round wins (first to ``target``)."""
    if wins[0] >= target:
        return 1.0
    if wins[1] >= target or wins[2] >= target:
        return 0.0
    total = 0.0
    for s in range(3):
        nxt = list(wins)
        nxt[s] += 1
        total += _ROUND_ODDS[s] * _match_win((nxt[0], nxt[1], nxt[2]), target)
    return total


def _equity_after(k: Knowledge) -> tuple[float, float, float]:
    """Per seat winning this round: the change in this seat's chance to win the match."""
    me = k.seat
    order = (me, (me + 1) % 3, (me + 2) % 3)
    wins = tuple(k.round_wins[s] for s in order)
    target = k.rules.wins_to_match
    now = _match_win(wins, target)  # type: ignore[arg-type]
    out = [0.0, 0.0, 0.0]
    for i, s in enumerate(order):
        nxt = list(wins)
        nxt[i] += 1
        out[s] = _match_win((nxt[0], nxt[1], nxt[2]), target) - now
    return (out[0], out[1], out[2])


def _apply(sim: Sim, me: int, action: tuple) -> None:
    kind = action[0]
    if kind == "discard":
        sim.discard_card(me, action[1])
    elif kind == "draw":
        sim.draw(me)
        sim.play(me)
    elif kind == "take":
        sim.take(me, action[1])
        if sim.phase != 3:
            sim.play(me)
    elif kind == "take_onto":
        sim.take_onto(me, action[1])
        sim.play(me)
    elif kind == "call":
        sim.call_draw(me)
    elif kind == "answer":
        sim.answer(me, action[1])


def _meld_cmd(melds: list[dict[str, Any]], wanted: tuple[int, ...]) -> dict[str, Any] | None:
    """The command exposing one of ``wanted``, as a secret set when it is a four of a kind."""
    chosen = None
    for cmd in melds:
        if mask_of_codes(cmd["cards"]) in wanted and (chosen is None or cmd.get("hidden")):
            chosen = cmd
    return chosen


def _discard_cmd(discards: list[dict[str, Any]], card: int) -> dict[str, Any]:
    code = CODES[card]
    for cmd in discards:
        if cmd["card"] == code:
            return cmd
    return discards[0]
