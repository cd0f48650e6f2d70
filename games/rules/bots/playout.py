"""A fast, self-contained round simulator on card masks, for the ``hard`` bot's playouts.

The engine (``decide``/``evolve``) is exact but builds events, views and command dicts; a playout
needs none of that, only the rules' consequences, thousands of times per decision. This mirrors
docs/rules.md closely (takes, melds, lay-offs and Draw blocks, Tongits, Draw calls at the start of a
turn or, under ``in_turn`` timing, also instead of the discard, stock out, burning). Who wins a
round and what it pays come from ``scoring``, the engine's own functions. It is only ever used to
*estimate* a decision's worth, so a divergence costs strength, never correctness: the real move
still goes through ``decide``.

Every seat plays the same quick policy (close to the ``normal`` bot), judging from what it could
see itself: its own hand, the table and the discard pile.
"""

from __future__ import annotations

from ..cards import BIT, FULL_DECK, POINTS
from ..melds import RANK_MASKS, best_arrangement, candidate_melds
from ..ruleset import RuleSet
from ..scoring import round_payouts, round_winner
from .heuristics import (
    ACES,
    Params,
    left_after_lay_offs,
    meld_partners,
    pairs_for,
    pick_opener,
    targets,
    typical_deadwood,
)
from .knowledge import Knowledge
from .sampling import World

START, PLAY, DRAW_CALL, OVER = 0, 1, 2, 3
_RANKS_DOWN = tuple(range(12, -1, -1))
_PHASES = {"start": START, "play": PLAY, "draw_call": DRAW_CALL}


def _is_set(mask: int) -> bool:
    first = (mask & -mask).bit_length() - 1
    return mask & ~RANK_MASKS[first % 13] == 0


class Sim:
    """One round from a determinized position to its end."""

    __slots__ = (
        "rules",
        "ah",
        "in_turn",
        "p",
        "hands",
        "stock",
        "discard",
        "melds",
        "opened",
        "blocked",
        "turn",
        "phase",
        "last_drawer",
        "dealer",
        "dead",
        "caller",
        "answers",
        "winner",
        "reason",
        "payouts",
        "steps",
        "hold",
        "own",
    )

    def __init__(
        self,
        k: Knowledge,
        world: World,
        params: Params,
        hold: int = 0,
        own: Params | None = None,
    ) -> None:
        self.rules: RuleSet = k.rules
        self.ah = k.rules.ace_high_runs
        self.in_turn = k.rules.draw_call and k.rules.in_turn
        self.p = params
        self.hands = list(world.hands)
        self.stock = world.stock[::-1]  # top last, so drawing is pop()
        self.discard = list(k.discard)
        melds = []
        dead = 0
        for i, m in enumerate(k.melds):
            mask = m.mask or world.hidden_masks.get(i, 0)
            melds.append([m.owner, m.is_set, mask, m.hidden])
            dead |= mask
        for c in self.discard:
            dead |= BIT[c]
        self.melds = melds
        self.dead = dead
        self.opened = list(k.opened)
        blocked = 0
        for s in k.blocked:
            blocked |= 1 << s
        self.blocked = blocked
        self.turn = k.turn
        self.phase = _PHASES.get(k.phase, OVER)
        self.last_drawer = k.last_drawer
        self.dealer = k.dealer
        self.caller = k.draw_caller
        self.answers = list(k.answers)
        self.winner: int | None = None
        self.reason = ""
        self.payouts = (0, 0, 0)
        self.steps = 0
        self.hold = hold  # bitmask of seats that keep their melds in hand
        self.own = own or params  # the Draw judgement of the seats in ``hold``

    # ------------------------------------------------------------ the loop

    def run(self) -> None:
        """Play on with the policy until the round ends."""
        while self.phase != OVER:
            self.steps += 1
            if self.steps > 200:  # the turn cap: never reached in practice
                self._end("turn_cap", None)
                return
            if self.phase == START:
                self.start_turn(self.turn)
            elif self.phase == PLAY:
                self.play(self.turn)
            else:
                self.answer(self.turn, self.wants_challenge(self.turn))

    # ------------------------------------------------------------ start of a turn

    def start_turn(self, s: int) -> None:
        hand = self.hands[s]
        if self.rules.draw_call and self.opened[s] and not self.blocked >> s & 1:
            dw = best_arrangement(hand, self.ah)[0]
            if self.wants_call(s, dw):
                self.call_draw(s)
                return
        top = self.discard[-1] if self.discard else -1
        if top >= 0:
            if meld_partners(top, hand, self.ah):
                used = self.best_take(hand, top)
                if used:
                    self.take(s, used)
                    return
            if self.rules.take_discard_to_lay_off:
                for i, m in enumerate(self.melds):
                    if m[0] == s and not m[3] and targets(m[2], m[1], self.ah) & BIT[top]:
                        self.take_onto(s, i)
                        return
        self.draw(s)

    def wants_call(self, s: int, dw: int) -> bool:
        est = 99
        for o in ((s + 1) % 3, (s + 2) % 3):
            if self.opened[o]:
                e = typical_deadwood(self.hands[o].bit_count())
                if e < est:
                    est = e
        p = self.own if self.hold >> s & 1 else self.p
        return est == 99 or dw <= p.call_frac * est

    def wants_challenge(self, s: int) -> bool:
        if not self.opened[s]:
            return False
        dw = best_arrangement(self.hands[s], self.ah)[0]
        est = typical_deadwood(self.hands[self.caller].bit_count())
        p = self.own if self.hold >> s & 1 else self.p
        return dw <= p.challenge_frac * est or dw <= 3

    def best_take(self, hand: int, top: int) -> int:
        top_bit = BIT[top]
        best = 0
        best_dw = best_arrangement(hand, self.ah)[0]
        for m in candidate_melds(hand | top_bit, self.rules):
            if m & top_bit:
                used = m & ~top_bit
                if used.bit_count() < 2:
                    continue
                after = best_arrangement(hand & ~used, self.ah)[0]
                if after <= best_dw:
                    best, best_dw = used, after
        return best

    def draw(self, s: int) -> None:
        c = self.stock.pop()
        self.hands[s] |= BIT[c]
        self.last_drawer = s
        if not self.in_turn:
            self.blocked &= ~(1 << s)
        self.phase = PLAY

    def take(self, s: int, used: int) -> None:
        top = self.discard.pop()
        mask = used | BIT[top]
        self.melds.append([s, _is_set(mask), mask, False])
        self.opened[s] = True
        self.hands[s] &= ~used
        self.dead |= mask
        if not self.in_turn:
            self.blocked &= ~(1 << s)
        self.phase = PLAY
        if not self.hands[s]:
            self._end("tongits", s)

    def take_onto(self, s: int, idx: int) -> None:
        top = self.discard.pop()
        self.melds[idx][2] |= BIT[top]
        if not self.in_turn:
            self.blocked &= ~(1 << s)
        self.phase = PLAY

    # ------------------------------------------------------------ melds, lay-offs, discard

    def meld_and_lay_off(self, s: int) -> int:
        """Expose melds and lay off every loose card that fits; return the loose cards.

        A seat in ``hold`` exposes only one meld to open and keeps the rest in hand (they cost no
        deadwood there, take no lay-offs, and hide its strength), unless it can go out now."""
        hand = self.hands[s]
        _, ms = best_arrangement(hand, self.ah)
        held = 0
        if ms and self.hold >> s & 1:
            cover = 0
            for m in ms:
                cover |= m
            table = [(m[2], m[1]) for m in self.melds if not m[3]]
            if left_after_lay_offs(hand & ~cover, table, self.ah).bit_count() > 1:
                keep = ms
                if not self.opened[s]:
                    opener = pick_opener(ms, FULL_DECK & ~(hand | self.dead), self.ah)
                    keep = tuple(m for m in ms if m != opener)
                    ms = (opener,)
                else:
                    ms = ()
                for m in keep:
                    held |= m
        for m in ms:
            self._put_down(s, m)
            hand &= ~m
        free = hand & ~held
        moved = True
        # opponents' melds first (a lay-off there also blocks their Draw call), then its own
        order = [m for m in self.melds if m[0] != s and not m[3]]
        order += [m for m in self.melds if m[0] == s and not m[3]]
        while free and moved:
            moved = False
            for m in order:
                fit = targets(m[2], m[1], self.ah) & free
                if fit:
                    low = fit & -fit
                    m[2] |= low
                    free &= ~low
                    self.dead |= low
                    if m[0] != s:
                        self.blocked |= 1 << m[0]
                    moved = True
        hand = free | held
        self.hands[s] = hand
        if not hand:
            self._end("tongits", s)
        return free

    def _put_down(self, s: int, m: int) -> None:
        """Meld ``m`` of seat ``s`` on the table (a four of a kind as a secret set); the caller
        takes its cards out of the hand."""
        is_set = _is_set(m)
        self.melds.append([s, is_set, m, self.rules.secret_sets and is_set and m.bit_count() == 4])
        self.opened[s] = True
        self.dead |= m

    def expose(self, s: int, m: int) -> None:
        """Put meld ``m`` of seat ``s``'s hand on the table, alone (the hard bot's search)."""
        self._put_down(s, m)
        self.hands[s] &= ~m
        if not self.hands[s]:
            self._end("tongits", s)

    def play(self, s: int) -> None:
        free = self.meld_and_lay_off(s)
        if self.phase == OVER:
            return
        # h19 "Fight": call Draw instead of discarding, judged like a call at the start
        if (
            self.in_turn
            and self.opened[s]
            and not self.blocked >> s & 1
            and self.wants_call(s, best_arrangement(self.hands[s], self.ah)[0])
        ):
            self.call_draw(s)
            return
        self.discard_card(s, self.pick_discard(s, free or self.hands[s]))

    def pick_discard(self, s: int, pool: int) -> int:
        """The policy's discard from ``pool``, judged against the whole hand."""
        hand = self.hands[s]
        unknown = FULL_DECK & ~(hand | self.dead)
        nxt = (s + 1) % 3
        q = self.hands[nxt].bit_count() / (unknown.bit_count() or 1)
        danger = self.p.danger * q * q
        keep = self.p.keep
        cap = self.p.danger
        own = 0  # house rules: cards the next seat could take onto a meld of its own
        if self.rules.take_discard_to_lay_off:
            for m in self.melds:
                if m[0] == nxt and not m[3]:
                    own |= targets(m[2], m[1], self.ah)
        pairs = pairs_for(self.ah)
        best, best_score = -1, -1e9
        for r in _RANKS_DOWN:  # highest points first: stop once no lower card can do better
            b = pool & RANK_MASKS[r]
            if not b:
                continue
            if POINTS[r] + 0.13 < best_score:
                break
            while b:
                low = b & -b
                c = low.bit_length() - 1
                b ^= low
                pot = 0
                risk = 0
                for pm in pairs[c]:
                    h = hand & pm
                    if not h:
                        if unknown & pm == pm:
                            risk += 1
                    elif h != pm and unknown & (pm ^ h):
                        pot += 1
                x = danger * risk + (cap if own & low else 0.0)
                score = POINTS[c] + r * 0.01 - keep * pot - (x if x < cap else cap)
                if score > best_score:
                    best, best_score = c, score
        return best

    def discard_card(self, s: int, card: int) -> None:
        bit = BIT[card]
        self.hands[s] &= ~bit
        self.discard.append(card)
        self.dead |= bit
        if self.in_turn:
            self.blocked &= ~(1 << s)  # a block lasts through the whole turn
        if not self.hands[s]:
            self._end("tongits", s)
        elif not self.stock:
            self._end("stock_out", None)
        else:
            self.turn = (s + 1) % 3
            self.phase = START

    # ------------------------------------------------------------ Draw calls

    def call_draw(self, s: int) -> None:
        self.caller = s
        self.answers = []
        self.phase = DRAW_CALL
        self.turn = (s + 1) % 3
        self._auto_answers()

    def answer(self, s: int, challenge: bool) -> None:
        self.answers.append((s, "challenge" if challenge and self.opened[s] else "fold"))
        self.turn = (s + 1) % 3
        self._auto_answers()

    def _auto_answers(self) -> None:
        while len(self.answers) < 2:
            if self.opened[self.turn]:
                return
            self.answers.append((self.turn, "fold"))
            self.turn = (self.turn + 1) % 3
        self._end("draw", None)

    # ------------------------------------------------------------ round end

    def _end(self, reason: str, tongits_seat: int | None) -> None:
        """End the round: winner, burned seats and payouts as the engine reckons them."""
        self.phase = OVER
        self.reason = reason
        rules = self.rules
        hands = self.hands
        if reason == "tongits":
            dw = [0, 0, 0]  # not needed: a Tongits winner is known and nobody compares
        else:
            ah = self.ah
            dw = [best_arrangement(h, ah)[0] for h in hands]
        winner, challenged, burned = round_winner(
            rules,
            reason,
            tongits_seat,
            dw,
            self.opened,
            [h.bit_count() for h in hands],
            self.caller,
            self.answers,
            self.last_drawer,
            self.dealer,
        )
        self.winner = winner
        if winner is None:
            return
        aces = (hands[winner] & ACES).bit_count()
        secret = 0
        for m in self.melds:
            if m[0] == winner:
                aces += (m[2] & ACES).bit_count()
                if m[3]:
                    secret += 1
        self.payouts = round_payouts(
            rules, reason, winner, challenged, self.answers, burned, aces, secret
        )
