"""Determinization: deal the cards a seat cannot see, consistent with what it has seen.

Hard facts are always kept: the seat's own hand, the table, the discard pile, every hand count,
the stock count, and that another seat's secret set is four cards of one rank nobody has seen.
On top, a few soft guesses about how opponents play, each the behaviour of any sensible player:
- once a seat has played a turn it has exposed every meld it held, so its hand holds none;
- it sheds high loose cards, so its hand is a little lower than a random one (``extra``);
- it took any discard it could meld, so it holds no two cards that meld with a discard it
  declined;
- a seat that called Draw believed its deadwood low.
Uniform deals make opponents look far weaker than they are, and a search then calls Draw into
sure losses; these guesses fix most of that at the cost of a few microseconds per deal.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..cards import BIT, FULL_DECK, POINTS
from ..melds import RANK_MASKS, best_arrangement
from .heuristics import pairs_for, typical_deadwood
from .knowledge import Knowledge
from .normal import discard_score, feed_chance


@dataclass(slots=True)
class World:
    """One full deal consistent with a seat's knowledge: every hand, the stock, secret sets."""

    hands: list[int]
    stock: list[int]  # top first
    hidden_masks: dict[int, int]  # meld index -> sampled cards of another seat's secret set


class Sampler:
    """Draws ``World`` s for one decision; the per-decision tables are built once."""

    def __init__(
        self,
        k: Knowledge,
        extra: int = 2,
        caller_tries: int = 12,
        tries: int = 6,
        slack: float = 2.0,
        keep: float = 6.0,
        call_slack: int = 0,
        call_weight: int = 2,
        exact: bool = False,
        danger: float = 10.0,
        no_fit: bool = False,
    ) -> None:
        self.exact = exact
        self.danger = danger
        self.call_slack = call_slack
        self.call_weight = call_weight
        self.k = k
        self.extra = extra
        self.caller_tries = caller_tries
        self.tries = tries
        self.slack = slack
        self.keep = keep
        ah = k.rules.ace_high_runs
        self.pairs = pairs_for(ah)
        self.ah = ah
        self.hidden = k.hidden_others()
        # per opponent: card -> cards it must not hold together with it (a declined discard)
        self.partner: dict[int, dict[int, int]] = {}
        for o in k.opponents:
            table: dict[int, int] = {}
            passed = k.passed[o] & ~k.table
            while passed:
                low = passed & -passed
                x = low.bit_length() - 1
                passed ^= low
                for p in self.pairs[x]:
                    y = p & -p
                    z = p ^ y
                    yc, zc = y.bit_length() - 1, z.bit_length() - 1
                    table[yc] = table.get(yc, 0) | z
                    table[zc] = table.get(zc, 0) | y
            self.partner[o] = table
        # a seat lays off every card it can before it discards: it holds none that fitted a meld
        self.fits = {o: k.fits[o] & k.unknown if no_fit else 0 for o in k.opponents}
        self.caller_limit = -1
        if k.phase == "draw_call" and k.draw_caller >= 0 and k.draw_caller != k.seat:
            self.caller_limit = _call_limit(k, k.draw_caller)

    def sample(self, rng: random.Random) -> World:
        k = self.k
        unknown = k.unknown
        hidden_masks: dict[int, int] = {}
        for i in self.hidden:
            ranks = [r for r in range(13) if unknown & RANK_MASKS[r] == RANK_MASKS[r]]
            r = rng.choice(ranks) if ranks else 0
            hidden_masks[i] = RANK_MASKS[r]
            unknown &= ~RANK_MASKS[r]
        pool = []
        b = unknown
        while b:
            low = b & -b
            pool.append(low.bit_length() - 1)
            b ^= low
        rng.shuffle(pool)
        hands = [0, 0, 0]
        hands[k.seat] = k.hand
        for o in k.opponents:
            if o == k.draw_caller and self.caller_limit >= 0:
                continue
            hands[o], pool = self._deal(o, pool, rng)
        if self.caller_limit >= 0:
            o = k.draw_caller
            best_hand, best_pool, best_dw = 0, pool, 1 << 30
            for _ in range(self.caller_tries):
                hand, rest = self._deal(o, pool, rng)
                dw = best_arrangement(hand, self.ah)[0]
                if dw < best_dw:
                    best_hand, best_pool, best_dw = hand, rest, dw
                if dw <= self.caller_limit:
                    break
                rng.shuffle(pool)
            hands[o], pool = best_hand, best_pool
        rng.shuffle(pool)
        return World(hands, pool, hidden_masks)

    def _deal(self, o: int, pool: list[int], rng: random.Random) -> tuple[int, list[int]]:
        """The likeliest of a few hands for ``o`` (see ``_misfits``), and the cards left over."""
        d = self.k.last_discard[o]
        if self.tries <= 1 or d < 0:
            return self._deal_once(o, pool, rng)
        best = None
        best_bad = 1 << 30
        for _ in range(self.tries):
            hand, rest = self._deal_once(o, pool, rng)
            bad = self._misfits(o, hand, d)
            if bad < best_bad:
                best, best_bad = (hand, rest), bad
                if bad == 0:
                    break
            rng.shuffle(pool)
        assert best is not None
        return best

    def _misfits(self, o: int, hand: int, d: int) -> float:
        """Cards of ``hand`` that a sensible seat would have discarded rather than ``d``, its
        last discard: more points and no more half-melds to keep them for."""
        live = ~(hand | self.k.dead)
        pairs = self.pairs
        keep = self.keep

        def worth(c: int, h: int) -> float:
            pot = 0
            for p in pairs[c]:
                x = h & p
                if x and x != p and live & (p ^ x):
                    pot += 1
            return POINTS[c] - keep * pot

        bad: float = 0
        limit = self.k.no_call_limit[o]
        if limit >= 0 and best_arrangement(hand | BIT[d], self.ah)[0] <= limit - self.call_slack:
            bad += self.call_weight
        if self.exact:
            return bad + self._discard_gap(o, hand, d)
        bar = worth(d, hand) + self.slack
        b = hand
        while b:
            low = b & -b
            c = low.bit_length() - 1
            b ^= low
            if POINTS[c] > bar and worth(c, hand) > bar:
                bad += 1
        return bad

    def _discard_gap(self, o: int, hand: int, d: int) -> float:
        """How much better than ``d`` the best card of ``hand`` was to shed, by the ``normal``
        bot's discard score (0: ``d`` was the seat's own choice), less ``slack``."""
        before = hand | BIT[d]
        unknown = FULL_DECK & ~before & ~self.k.dead
        q2 = feed_chance(self.k.hand_counts[(o + 1) % 3], unknown)
        ah = self.ah
        keep = self.keep
        danger = self.danger

        def score(c: int) -> float:
            return discard_score(c, before, unknown, q2, 0, ah, keep, danger)

        bar = score(d) + self.slack
        gap = 0.0
        b = hand
        while b:
            low = b & -b
            c = low.bit_length() - 1
            b ^= low
            if POINTS[c] + 0.13 > bar:  # only a card worth this many points could beat d
                g = score(c) - bar
                if g > gap:
                    gap = g
        return gap

    def _deal_once(self, o: int, pool: list[int], rng: random.Random) -> tuple[int, list[int]]:
        """One hand for ``o`` from the front of ``pool``; the rest, in random order."""
        k = self.k
        n = k.hand_counts[o]
        if not k.discarded[o]:  # has not played a turn yet: any hand will do
            return _mask(pool[:n]), pool[n:]
        want = n + min(self.extra, k.discarded[o].bit_count())
        pairs = self.pairs
        forbid = self.partner[o]
        fits = self.fits[o]
        hand = 0
        got = 0
        rest = []
        for i, c in enumerate(pool):
            if got == want:
                rest.extend(pool[i:])
                break
            ok = not (fits & BIT[c] or forbid and hand & forbid.get(c, 0))
            if ok:
                for p in pairs[c]:
                    if hand & p == p:
                        ok = False
                        break
            if ok:
                hand |= BIT[c]
                got += 1
            else:
                rest.append(c)
        while got > n:  # shed the highest card, as the seat itself would have
            worst, worst_pts = -1, -1
            b = hand
            while b:
                low = b & -b
                c = low.bit_length() - 1
                b ^= low
                pts = POINTS[c] * 4 + rng.randrange(4)
                if pts > worst_pts:
                    worst, worst_pts = c, pts
            hand &= ~BIT[worst]
            rest.append(worst)
            got -= 1
        if got < n:  # constraints could not all be met: fill up plainly
            extra = rest[: n - got]
            hand |= _mask(extra)
            rest = rest[n - got :]
        return hand, rest


def _call_limit(k: Knowledge, caller: int) -> int:
    """The deadwood under which a sensible seat calls Draw, as the ``normal`` bot judges it."""
    threats = [s for s in range(3) if s != caller and k.opened[s]]
    if not threats:
        return 1 << 30
    est = min(typical_deadwood(k.hand_counts[s]) for s in threats)
    return int(1.2 * est)


def _mask(cards: list[int]) -> int:
    m = 0
    for c in cards:
        m |= BIT[c]
    return m
