"""The ``hard`` bot: determinized flat Monte Carlo with fast policy playouts.

For each decision that matters (how to start a turn, which card to discard, whether to challenge
a Draw) it deals the cards it cannot see many times, consistent with everything its seat has seen
(``sampling``), plays every candidate to the end of the round in each deal with the quick
``playout`` policy for all three seats, and keeps the candidate with the best mean value: chips
won in the round plus what the round's result does to its chance of winning the match.

- Every candidate meets the same deals (common random numbers), so candidates are compared pair
  by pair, and one clearly behind the leader is dropped early to give the rest more playouts.
- It opens with one meld and keeps its other melds in hand until it can go out: held melds cost
  no deadwood, take no lay-offs (which would block its Draw calls), and hide its strength. Once
  opened, exposing one more of them is searched against holding (``expose``): a short hand makes
  opponents wary of calling Draw against it.
- Under ``in_turn`` timing (h19 "Fight") a Draw call is one more candidate at the discard.
- A decision with one sensible candidate (one legal command, a forced move, a sure-win Draw call,
  melding and laying off) is instant.

The budget is a count of playouts, so for a given ``rng`` state a decision is the same on a
quiet machine and a loaded one. ``time_limit`` caps it on top, in CPU seconds of the calling
thread (``time.thread_time``), not wall-clock: a worker sharing its cores plays exactly as
strong, and only a decision that would need more CPU than the cap stops early (then it is no
longer reproducible). With ``time_limit=None`` the count is the only limit.
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from ..cards import BIT, CODES, mask_of_codes, parse_card
from ..melds import best_arrangement
from .heuristics import left_after_lay_offs, pick_opener
from .knowledge import Knowledge, group_by_type, read
from .normal import choose_discard
from .playout import OVER, Params, Sim
from .sampling import Sampler

try:
    from ._compiled import Search as CompiledSearch
except ImportError:  # not built (``make install`` builds it): the same moves in pure Python
    CompiledSearch = None

Candidate = tuple[dict[str, Any], tuple]


class HardBot:
    name = "hard"
    uses_history = True
    #: what deals the hidden cards for the playouts (a diagnostic may put another in)
    sampler_class: type[Sampler] = Sampler

    def __init__(
        self,
        playouts: int = 1500,
        time_limit: float | None = 0.45,
        max_discards: int = 5,
        win_bonus: float = 6.0,
        match_aware: bool = True,
        hold: bool = True,
        prune: float = 2.0,
        check: int = 12,
        first_check: int = 12,
        indifferent: float = 0.0,
        extra: int = 0,
        tries: int = 6,
        slack: float = 2.0,
        params: Params | None = None,
        call_bonus: float | None = None,
        call_bias: float = 0.0,
        challenge_bias: float = 0.0,
        own_call: float | None = None,
        own_challenge: float | None = None,
        exact: bool = False,
        no_fit: bool = False,
        expose: bool = True,
        halving: bool = False,
        compiled: bool = True,
    ) -> None:
        """``playouts``: budget per decision (the main limit); ``time_limit``: a cap in CPU
        seconds of this thread per decision (``None``: none); ``max_discards``: discards
        searched; ``win_bonus``: chips a round win is worth beyond its payout (a third of a
        match, when ``match_aware``); ``hold``: keep melds in hand; ``expose``: once opened, search
        exposing one more held meld against holding them all; ``prune``: drop a candidate
        this many standard errors behind, checked every ``check`` deals from ``first_check`` on;
        ``indifferent``: also stop once no candidate left can beat the leader by this many chips
        (0: never; a screen's option, see docs/bots.md); ``extra``, ``tries``,
        ``slack``: see ``Sampler``; ``params``: the playout policy; ``halving``: spend the
        budget by sequential halving (rounds, the worse half of the candidates dropped after
        each) instead of on every candidate until pruned (docs/bots.md measures both);
        ``compiled``: deal and play out in C (``_compiled``) when it is built, the same moves as
        the pure-Python ``Sampler`` and ``Sim`` for the same ``random.Random`` state."""
        self._started = 0.0
        self._started_wall = 0.0
        #: wall-clock seconds a decision may take, however little CPU it got (``None``: no
        #: bound): the server sets it, so a bot starved of CPU on a busy node delays its table
        #: by at most this much, playing the best candidate found so far
        self.wall_limit: float | None = None
        #: deals the last search made (each played out for every candidate still in)
        self.last_deals = 0
        self.playouts = playouts
        self.time_limit = time_limit
        self.max_discards = max_discards
        self.win_bonus = win_bonus
        self.match_aware = match_aware
        self.hold = hold
        self.prune = prune
        self.check = check
        self.first_check = first_check
        self.indifferent = indifferent
        self.extra = extra
        self.tries = tries
        self.slack = slack
        self.params = params or Params()
        self.call_bonus = win_bonus if call_bonus is None else call_bonus
        self.call_bias = call_bias
        self.challenge_bias = challenge_bias
        self.exact = exact
        self.no_fit = no_fit
        self.expose = expose
        self.halving = halving
        self.compiled = compiled
        p = self.params
        self.own = Params(
            p.call_frac if own_call is None else own_call,
            p.challenge_frac if own_challenge is None else own_challenge,
            p.keep,
            p.danger,
        )

    def choose(
        self,
        view: dict[str, Any],
        legal: list[dict[str, Any]],
        rng: random.Random,
        history: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        if len(legal) == 1:
            return legal[0]
        self._started = time.thread_time()
        self._started_wall = time.perf_counter()
        # The playouts make no reference cycles, but their many short-lived objects set off the
        # cycle collector, whose full passes over a large process (a worker, a test run) take
        # tens of milliseconds the cap cannot see coming: it waits until the decision is made.
        collecting = gc.isenabled()
        gc.disable()
        try:
            k = read(view, history)
            by_type = group_by_type(legal)
            if k.phase == "draw_call":
                return self._answer(k, by_type, rng)
            if k.phase == "start":
                return self._start(k, by_type, legal, rng)
            return self._play(k, by_type, legal, rng)
        finally:
            if collecting:
                gc.enable()

    # ------------------------------------------------------------ the three searched decisions

    def _answer(self, k: Knowledge, by_type: dict, rng: random.Random) -> dict[str, Any]:
        """Challenge or fold a Draw call: searched, with the caller's hand dealt low."""
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
        """Draw, take the discard (the best two ways), or call Draw: searched."""
        cands: list[Candidate] = []
        if "draw" in by_type:
            cands.append((by_type["draw"][0], ("draw",)))
        ace_high = k.rules.ace_high_runs
        takes = [c for c in by_type.get("take_discard", []) if "cards" in c]
        if takes:
            # the two takes that leave the least deadwood (most often there is only one)
            scored = []
            for cmd in takes:
                used = mask_of_codes(cmd["cards"])
                scored.append((best_arrangement(k.hand & ~used, ace_high)[0], used, cmd))
            scored.sort(key=lambda t: (t[0], t[1]))
            for _, used, cmd in scored[:2]:
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
        """Meld (one opener, or everything when going out), lay off, then a searched discard."""
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
                if opened and self.expose and "meld" in by_type:
                    cmd = self._expose_or_hold(k, by_type["meld"], melds, rng)
                    if cmd is not None:
                        return cmd
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
        calls: list[Candidate] = []
        if "call_draw" in by_type:  # in_turn (h19 "Fight"): a Draw call instead of the discard
            if not any(k.opened[o] for o in k.opponents):
                return by_type["call_draw"][0]  # both opponents must fold: a sure win
            calls.append((by_type["call_draw"][0], ("call",)))
        if not discards:
            return calls[0][0] if calls else legal[0]
        ranked = self._ranked_discards(k, loose or k.hand)
        if len(ranked) == 1 and not calls:
            return _discard_cmd(discards, ranked[0])
        cands = [(_discard_cmd(discards, c), ("discard", c)) for c in ranked] + calls
        return self._search(k, cands, rng)

    def _expose_or_hold(
        self,
        k: Knowledge,
        meld_cmds: list[dict[str, Any]],
        melds: tuple[int, ...],
        rng: random.Random,
    ) -> dict[str, Any] | None:
        """Searched: expose one more of the melds held in hand, or keep them all (``None``).

        A held meld costs no deadwood and takes no lay-offs, but every card in hand tells the
        opponents this seat is far from going out: they call Draw against a hand of twelve cards
        with far more deadwood than against one of six, and challenge its Draw calls more
        readily. Exposing a meld that few unseen cards fit trades a lay-off target for calmer
        opponents; the playouts weigh the two.
        """
        hold: dict[str, Any] = {"type": "hold"}  # stands for melding nothing more
        cands: list[Candidate] = [(hold, ("hold",))]
        for m in melds:
            cmd = _meld_cmd(meld_cmds, (m,))
            if cmd is not None:
                cands.append((cmd, ("expose", m)))
        if len(cands) == 1:
            return None
        cmd = self._search(k, cands, rng)
        return None if cmd is hold else cmd

    def _ranked_discards(self, k: Knowledge, pool: int) -> list[int]:
        """The ``max_discards`` most plausible discards, best first by the normal bot's score."""
        out = []
        rest = pool
        p = self.params
        while rest and len(out) < self.max_discards:
            c = choose_discard(
                k.hand,
                rest,
                k.unknown,
                k.hand_counts[(k.seat + 1) % 3],
                0,
                k.rules.ace_high_runs,
                p.keep,
                p.danger,
            )
            out.append(c)
            rest &= ~BIT[c]
        return out

    # ------------------------------------------------------------ flat Monte Carlo

    def _search(self, k: Knowledge, cands: list[Candidate], rng: random.Random) -> dict[str, Any]:
        """The candidate with the best mean playout value over sampled deals.

        Every live candidate is played out on the same deals, so candidates are compared pair by
        pair on the differences of their values. Every ``check`` deals (from ``first_check`` on)
        a candidate clearly behind the leader (by ``prune`` standard errors of the paired
        difference) is dropped and the budget goes to the rest. With ``indifferent`` above 0 the
        search also stops once no candidate left could beat the leader by that many chips at
        that confidence; the default leaves it off, since telling near-equal discards apart is
        where much of the bot's edge lies (docs/bots.md). With ``halving`` the budget is spent
        in ceil(log2(candidates)) rounds: each round's share over the live candidates, on
        the same deals, then the better half goes on (a smaller budget at a fixed cost).
        """
        deadline = None if self.time_limit is None else self._started + self.time_limit
        wall_deadline = None if self.wall_limit is None else self._started_wall + self.wall_limit
        clock = time.thread_time  # CPU time of this thread: the same on a loaded machine
        last = clock()
        tally = Tally(len(cands))
        alive = list(range(len(cands)))
        drawn = any(c[1][0] in ("call", "answer") for c in cands)  # a Draw is among them
        bonus = self.call_bonus if drawn else self.win_bonus
        sampler = self.sampler(k)
        budget = self.playouts
        deals = 0
        bias = [self._bias(c[1]) for c in cands]
        z = self.prune
        # Sequential halving: the budget in rounds, each round's share spread over the live
        # candidates, the worse half dropped at its end; one flat round without ``halving``.
        rounds = max(1, (len(cands) - 1).bit_length()) if self.halving else 1
        stop = False
        with self._playing(k, cands, sampler, bonus, rng) as play_deal:
            for r in range(rounds):
                # this round's deals for each live candidate (rounds left share what is left)
                quota = deals + budget // (len(alive) * (rounds - r)) if self.halving else None
                while len(alive) > 1 and budget >= len(alive) and (quota is None or deals < quota):
                    tally.add(alive, play_deal(alive), bias)
                    budget -= len(alive)
                    deals += 1
                    if deadline is not None:
                        now = clock()
                        if now + (now - last) > deadline:  # the next deal would end past the cap
                            stop = True
                            break
                        last = now
                    if wall_deadline is not None and time.perf_counter() > wall_deadline:
                        stop = True
                        break
                    if z and deals >= self.first_check and deals % self.check == 0:
                        alive, settled = _prune(tally, alive, z, self.indifferent)
                        if settled:
                            stop = True
                            break
                if stop or len(alive) <= 1 or r == rounds - 1 or not deals:
                    break
                # every live candidate met the same deals: the better half goes on
                alive.sort(key=lambda i: -tally.sums[i])
                alive = alive[: (len(alive) + 1) // 2]
        self.last_deals = deals
        best = max(alive, key=lambda i: tally.sums[i] / max(1, tally.counts[i]))
        return cands[best][0]

    @contextmanager
    def _playing(
        self, k: Knowledge, cands: list[Candidate], sampler: Sampler, bonus: float, rng: Any
    ) -> Iterator[Callable[[list[int]], list[float]]]:
        """This decision's deals: a call deals once and returns each live candidate's playout
        value, compiled where it applies (the generator taken from ``rng`` and handed back
        however the caller ends, as if Python had made every draw), else in pure Python."""
        fast = self._compiled_search(k, cands, sampler, bonus, rng)
        if fast is None:
            yield self._python_deals(k, cands, sampler, bonus, rng)
            return
        fast.load(rng)
        try:
            yield fast.deal
        finally:
            fast.store(rng)

    def _compiled_search(
        self, k: Knowledge, cands: list[Candidate], sampler: Sampler, bonus: float, rng: Any
    ) -> Any:
        """The compiled deals and playouts of this decision, or ``None`` where only the
        pure-Python ones apply (not built, switched off, another generator or sampler)."""
        if (
            CompiledSearch is None
            or not self.compiled
            or type(rng) is not random.Random
            or type(sampler) is not Sampler
            or self.exact
            or len(k.melds) > 20
        ):
            return None
        equity = [bonus * 3 * e for e in _equity_after(k)] if self.match_aware else None
        hold = 1 << k.seat if self.hold else 0
        actions = [c[1] for c in cands]
        return CompiledSearch(
            k, sampler, actions, self.params, self.own, hold, equity, bonus, self.match_aware
        )

    def _python_deals(
        self, k: Knowledge, cands: list[Candidate], sampler: Sampler, bonus: float, rng: Any
    ) -> Callable[[list[int]], list[float]]:
        """One deal and the value of each live candidate played out on it, in pure Python."""
        value = self._valuer(k, bonus)
        me = k.seat
        params = self.params
        own = self.own
        hold = 1 << me if self.hold else 0

        def play_deal(alive: list[int]) -> list[float]:
            world = sampler.sample(rng)
            out = []
            for i in alive:
                sim = Sim(k, world, params, hold, own)
                _apply(sim, me, cands[i][1])
                sim.run()
                out.append(value(sim))
            return out

        return play_deal

    def answer_values(
        self,
        view: dict[str, Any],
        history: list[dict[str, Any]] | None,
        rng: random.Random,
        deals: int = 120,
    ) -> tuple[float, float]:
        """The mean playout value of challenging and of folding a pending Draw call, from the
        answering seat's own view, on ``deals`` common deals and without pruning: the fair-play
        review (``fairplay.detection``) asks how much an answer cost the seat that gave it."""
        k = read(view, history)
        cands: list[Candidate] = [({}, ("answer", True)), ({}, ("answer", False))]
        sampler = self.sampler(k)
        bias = [self._bias(c[1]) for c in cands]
        totals = [0.0, 0.0]
        collecting = gc.isenabled()
        gc.disable()
        try:
            with self._playing(k, cands, sampler, self.call_bonus, rng) as play_deal:
                for _ in range(deals):
                    for i, v in enumerate(play_deal([0, 1])):
                        totals[i] += v + bias[i]
        finally:
            if collecting:
                gc.enable()
        return totals[0] / deals, totals[1] / deals

    def sampler(self, k: Knowledge) -> Sampler:
        """What deals this decision's hidden cards, with this bot's options."""
        return self.sampler_class(
            k, self.extra, tries=self.tries, slack=self.slack, exact=self.exact, no_fit=self.no_fit
        )

    def _bias(self, action: tuple) -> float:
        if action[0] == "call":
            return self.call_bias
        if action == ("answer", True):
            return self.challenge_bias
        return 0.0

    def _valuer(self, k: Knowledge, bonus: float) -> Callable[[Sim], float]:
        """Value of a finished playout: this seat's chips in the round, plus ``win_bonus`` chips
        per third of a match that the round's winner adds to (or takes from) its match chances.
        Without ``match_aware``: plus ``win_bonus`` for a win, minus half of it for a loss."""
        me = k.seat
        if self.match_aware:
            equity = [bonus * 3 * e for e in _equity_after(k)]

            def value(sim: Sim) -> float:
                w = sim.winner
                return sim.payouts[me] + (equity[w] if w is not None else 0.0)

            return value

        def plain(sim: Sim) -> float:
            w = sim.winner
            return sim.payouts[me] + (0.0 if w is None else bonus if w == me else -bonus / 2)

        return plain


#: Round-win chances assumed when valuing a round's result for the match: this bot's, then each
#: opponent's. Only the shape matters (who is close to winning the match), not the exact values.
_ROUND_ODDS = (0.4, 0.3, 0.3)


#: Wins still needed beyond this many count as this many when valuing a round for the match: a
#: round then changes the match's chances about the same, and the recursion stays small (a match
#: of first to 99 wins would otherwise take it through a million positions).
_HORIZON = 8


@lru_cache(maxsize=4096)
def _match_win(need: tuple[int, int, int]) -> float:
    """Chance that seat 0 wins the match when the seats still need these round wins."""
    if need[0] <= 0:
        return 1.0
    if need[1] <= 0 or need[2] <= 0:
        return 0.0
    total = 0.0
    for s in range(3):
        nxt = list(need)
        nxt[s] -= 1
        total += _ROUND_ODDS[s] * _match_win((nxt[0], nxt[1], nxt[2]))
    return total


def _equity_after(k: Knowledge) -> tuple[float, float, float]:
    """Per seat winning this round: the change in this seat's chance to win the match."""
    me = k.seat
    order = (me, (me + 1) % 3, (me + 2) % 3)
    target = k.rules.wins_to_match
    need = [min(target - k.round_wins[s], _HORIZON) for s in order]
    now = _match_win((need[0], need[1], need[2]))
    out = [0.0, 0.0, 0.0]
    for i, s in enumerate(order):
        nxt = list(need)
        nxt[i] -= 1
        out[s] = _match_win((nxt[0], nxt[1], nxt[2])) - now
    return (out[0], out[1], out[2])


class Tally:
    """A search's playout values as running sums: per candidate its count and total, per pair
    of candidates the total of their differences on the deals both met and of the squares of
    those differences. Pruning then costs the same at the thousandth deal as at the tenth,
    where lists of every value cost a pass over all of them at every check."""

    __slots__ = ("counts", "sums", "diffs", "squares")

    def __init__(self, size: int) -> None:
        self.counts = [0] * size
        self.sums = [0.0] * size
        #: [i][j] for i < j: sum of (value of i - value of j), and of its square
        self.diffs = [[0.0] * size for _ in range(size)]
        self.squares = [[0.0] * size for _ in range(size)]

    def add(self, alive: list[int], values: list[float], bias: list[float]) -> None:
        """One deal: ``values[x]`` is candidate ``alive[x]``'s playout value, before its bias."""
        vals = [v + bias[i] for i, v in zip(alive, values, strict=True)]
        counts, sums, diffs, squares = self.counts, self.sums, self.diffs, self.squares
        n = len(alive)
        for x in range(n):
            i = alive[x]
            v = vals[x]
            counts[i] += 1
            sums[i] += v
            for y in range(x + 1, n):
                j = alive[y]
                if i < j:
                    d = v - vals[y]
                    diffs[i][j] += d
                    squares[i][j] += d * d
                else:
                    d = vals[y] - v
                    diffs[j][i] += d
                    squares[j][i] += d * d

    def paired(self, a: int, b: int) -> tuple[float, float]:
        """Sum of (value of ``a`` - value of ``b``) over the deals both met, and of its square."""
        if a < b:
            return self.diffs[a][b], self.squares[a][b]
        return -self.diffs[b][a], self.squares[b][a]


def _prune(
    tally: Tally, alive: list[int], z: float, indifferent: float = 0.0
) -> tuple[list[int], bool]:
    """The candidates not clearly worse than the leader (paired on the same deals), and whether
    the search can stop: no candidate left may beat the leader by ``indifferent`` or more (with
    ``indifferent`` 0, only when the leader is the last one left). Every candidate in ``alive``
    met every deal so far (a dropped one never comes back)."""
    m = tally.counts[alive[0]]
    sums = tally.sums
    lead = max(alive, key=lambda i: sums[i] / m)
    keep = []
    settled = True
    for i in alive:
        if i == lead:
            keep.append(i)
            continue
        total, squares = tally.paired(lead, i)
        mean = total / m
        var = max(0.0, squares - total * mean) / max(1, m - 1)
        margin = z * (var / m) ** 0.5
        if mean <= margin:
            keep.append(i)
            if margin - mean >= indifferent or indifferent <= 0:
                settled = False
    return keep, settled or len(keep) == 1


def _apply(sim: Sim, me: int, action: tuple) -> None:
    """Play this seat's candidate move in a playout; the rest of its turn follows the policy."""
    kind = action[0]
    if kind == "discard":
        sim.discard_card(me, action[1])
    elif kind == "draw":
        sim.draw(me)
        sim.play(me)
    elif kind == "take":
        sim.take(me, action[1])
        if sim.phase != OVER:
            sim.play(me)
    elif kind == "take_onto":
        sim.take_onto(me, action[1])
        sim.play(me)
    elif kind == "hold":
        sim.play(me)
    elif kind == "expose":
        sim.expose(me, action[1])
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
    """The legal discard command for ``card``."""
    code = CODES[card]
    for cmd in discards:
        if cmd["card"] == code:
            return cmd
    return discards[0]
