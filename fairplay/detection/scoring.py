"""One finished match's fair-play signals, from its events alone: pure, no Django.

The event log holds every hidden card, so folding it up to a decision rebuilds exactly what the
deciding seat saw. Each decision is judged from that seat's own view, with the bots' own
judgements, and only where a decision could favour one opponent over the other:

- **feed**: a discard that the next seat (the only one who may take it) took into a meld,
  while the discarder held a loose card that fewer unseen cards could meld with (the normal and
  hard bots' ``take_risk``: a safer discard was in hand);
- **spare**: a turn that ended holding a loose card that fitted an opponent's exposed meld
  (the bots lay off every loose card they can, opponents first: it also blocks their Draw);
- **answer**: a Draw answer (challenge or fold) that the hard bot's playouts value below the
  other answer by more than ``ANSWER_MARGIN`` chips, from the answering seat's view, in a round
  an opponent won. The normal bot's rule screens first: an answer it would give itself is taken
  as sound, so the expensive search runs only on the few answers that differ.

Moves the server played for a seat (a time-out, a resigned seat) are not decisions and are never
judged. Per ordered pair (a, b) the match adds: games and rounds together, the chips a paid b at
the settlement (a table's result split into flows from losers to winners), rounds b won while a
had resigned or timed out in them, matches b won that a resigned, and the three signals'
opportunities (``*_n``) and hits (``*_k``). ``fairplay.detection.stats`` weighs them against
the population; the simulation (``fairplay.detection.simulate``) runs this same code.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from games.rules.bots.heuristics import take_risk, targets
from games.rules.bots.knowledge import read
from games.rules.bots.normal import NormalBot
from games.rules.cards import BIT, CODES, FULL_DECK, parse_card
from games.rules.melds import SET, best_arrangement, deadwood_of
from games.rules.state import GameState, evolve
from games.rules.views import player_view, redact_event

#: Chips by which the hard bot must value the answer given below the other one for it to count
#: as against the seat's own interest (its playouts' noise on 120 deals is about half a chip).
ANSWER_MARGIN = 1.5
#: Sampled deals per judged Draw answer.
ANSWER_DEALS = 120

#: ``(view, history, rng) -> (value of challenging, value of folding)`` from the seat's view.
AnswerJudge = Callable[[dict[str, Any], list[dict[str, Any]], random.Random], tuple[float, float]]


@dataclass
class Counts:
    """One ordered pair's record (a toward b); every field a whole number, so sums are exact
    and a rebuild equals the live projection to the chip."""

    games: int = 0
    rounds: int = 0
    chips: int = 0  # chips a paid b, net, at the settlements (negative: b paid a)
    flow_milli: int = 0  # per game, the chips a paid b in thousandths of the buy-in, summed
    flow_sq: int = 0  # the same per game, squared and divided by 1000, summed (its spread)
    rounds_off: int = 0  # rounds b won while a had resigned or timed out in them
    matches_off: int = 0  # matches b won that a had resigned
    feed_n: int = 0  # a's discards with b next to take them
    feed_k: int = 0  # ... that b took into a meld while a held a safer loose card
    spare_n: int = 0  # a's turns that could lay off on b's melds
    spare_k: int = 0  # ... that ended holding a loose card that fitted b's meld
    answer_n: int = 0  # a's Draw answers with a choice, b at the table
    answer_k: int = 0  # ... against a's own interest, in a round b won

    def add(self, other: Counts) -> None:
        for f in FIELDS:
            setattr(self, f, getattr(self, f) + getattr(other, f))

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Counts))


@dataclass
class MatchSignals:
    """What one match adds: per ordered pair of accounts its counts, and the decisions that hit."""

    pairs: dict[tuple[int, int], Counts] = field(default_factory=dict)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    judged: int = 0  # decisions looked at
    searched: int = 0  # Draw answers the hard bot's playouts valued

    def pair(self, a: int, b: int) -> Counts:
        counts = self.pairs.get((a, b))
        if counts is None:
            counts = self.pairs[(a, b)] = Counts()
        return counts

    def to_json(self) -> dict[str, Any]:
        """The JSON the projection stores (pairs keyed ``"a:b"``, only non-zero fields)."""
        return {
            "pairs": {
                f"{a}:{b}": {k: v for k, v in c.as_dict().items() if v}
                for (a, b), c in sorted(self.pairs.items())
            },
            "decisions": self.decisions,
        }

    @staticmethod
    def pairs_from_json(data: dict[str, Any]) -> dict[tuple[int, int], Counts]:
        out = {}
        for key, values in data.get("pairs", {}).items():
            a, _, b = key.partition(":")
            out[(int(a), int(b))] = Counts(**values)
        return out


def pair_flows(paid: Sequence[int]) -> list[tuple[int, int, int]]:
    """A zero-sum three-seat result as flows ``(from_seat, to_seat, chips)``: each loser pays
    the winner, or the loser pays each winner what that winner got (with one winner or one
    loser the split is the only one there is)."""
    losers = [s for s, p in enumerate(paid) if p < 0]
    winners = [s for s, p in enumerate(paid) if p > 0]
    flows = []
    if len(winners) == 1:
        for s in losers:
            flows.append((s, winners[0], -paid[s]))
    elif len(losers) == 1:
        for s in winners:
            flows.append((losers[0], s, paid[s]))
    return flows


def _round_winners(events: Sequence[dict[str, Any]]) -> list[int | None]:
    """Per event index, the winner of the round it belongs to (None: no winner, or no round)."""
    out: list[int | None] = [None] * len(events)
    winner: int | None = None
    for i in range(len(events) - 1, -1, -1):
        e = events[i]
        if e["type"] == "round_ended":
            winner = e.get("winner")
        elif e["type"] == "round_started":
            out[i] = winner
            winner = None
            continue
        out[i] = winner
    return out


def _opp_targets(state: GameState, owner: int) -> int:
    """Cards that fit one of ``owner``'s exposed melds (secret sets take none)."""
    ah = state.rules.ace_high_runs
    out = 0
    for m in state.melds:
        if m.owner == owner and not m.hidden:
            out |= targets(m.mask, m.kind == SET, ah)
    return out


def _unknown_to(state: GameState, seat: int) -> int:
    """Every card ``seat`` cannot place: not in its hand, on the table face up, or discarded."""
    seen = state.hands[seat]
    for m in state.melds:
        if not m.hidden or m.owner == seat:
            seen |= m.mask
    for c in state.discard:
        seen |= BIT[c]
    return FULL_DECK & ~seen


def _loose(state: GameState, seat: int) -> int:
    hand = state.hands[seat]
    cover = 0
    for m in best_arrangement(hand, state.rules.ace_high_runs)[1]:
        cover |= m
    return hand & ~cover


def score_match(
    game_id: str,
    events: Sequence[dict[str, Any]],
    accounts: Sequence[int | None],
    paid: Sequence[int] | None = None,
    buy_in: int = 0,
    judge: AnswerJudge | None = None,
) -> MatchSignals:
    """The signals of one finished match. ``events`` as stored (dicts, from ``game_started``);
    ``accounts`` the account of each seat (None: a bot or a deleted account, left out);
    ``paid`` the settlement's result per seat at a table played for chips (``buy_in`` > 0);
    ``judge`` values Draw answers (default: the hard bot, ``hard_judge``)."""
    judge = judge or hard_judge
    out = MatchSignals()
    seats = list(accounts)
    people = [s for s in range(3) if seats[s] is not None]
    pairs = [(a, b) for a in people for b in people if a != b and seats[a] != seats[b]]
    if not pairs:
        return out
    for a, b in pairs:
        out.pair(seats[a], seats[b]).games += 1  # type: ignore[arg-type]
    if paid is not None and buy_in > 0:
        for s, t, chips in pair_flows(paid):
            if (s, t) in pairs:
                ab, ba = out.pair(seats[s], seats[t]), out.pair(seats[t], seats[s])  # type: ignore[arg-type]
                milli = chips * 1000 // buy_in
                ab.chips += chips
                ba.chips -= chips
                ab.flow_milli += milli
                ba.flow_milli -= milli
                ab.flow_sq += milli * milli // 1000
                ba.flow_sq += milli * milli // 1000

    winners = _round_winners(events)
    state: GameState | None = None
    auto: set[int] = set()  # seats whose current turn the server plays (a time-out)
    timed_out: set[int] = set()  # seats that timed out in this round
    laid: dict[tuple[int, int], int] = {}  # (seat, owner) -> lay-offs onto owner's melds this turn
    for i, e in enumerate(events):
        kind = e["type"]
        seq = i + 1
        if state is not None and state.in_round:
            s = e.get("seat", -1)
            decided = 0 <= s <= 2 and s not in auto and s not in state.resigned
            if kind == "discarded" and decided and seats[s] is not None:
                out.judged += 1
                _discard(out, state, seats, events, i, seq, game_id, laid, pairs)
            elif kind in ("challenged", "folded") and decided and state.opened(s):
                if seats[s] is not None:
                    out.judged += 1
                    _answer(out, state, seats, events, i, seq, game_id, winners[i], judge, pairs)
            elif kind == "laid_off" and decided:
                meld_id = e["meld_id"]
                if 1 <= meld_id <= len(state.melds):
                    owner = state.melds[meld_id - 1].owner
                    if owner != s:
                        laid[(s, owner)] = laid.get((s, owner), 0) + 1
        if kind == "turn_timed_out":
            auto.add(e["seat"])
            timed_out.add(e["seat"])
        elif kind == "discarded":
            auto.discard(e["seat"])
            for key in [k for k in laid if k[0] == e["seat"]]:
                del laid[key]
        elif kind in ("challenged", "folded"):
            auto.discard(e["seat"])
        elif kind == "round_ended" and state is not None:
            w = e.get("winner")
            for a, b in pairs:
                c = out.pair(seats[a], seats[b])  # type: ignore[arg-type]
                c.rounds += 1
                if w == b and (a in state.resigned or a in timed_out):
                    c.rounds_off += 1
            auto.clear()
            timed_out.clear()
            laid.clear()
        elif kind == "match_ended" and state is not None:
            w = e.get("winner")
            for a, b in pairs:
                if w == b and a in state.resigned:
                    out.pair(seats[a], seats[b]).matches_off += 1  # type: ignore[arg-type]
        state = evolve(state, e)
    return out


def _discard(
    out: MatchSignals,
    state: GameState,
    seats: Sequence[int | None],
    events: Sequence[dict[str, Any]],
    i: int,
    seq: int,
    game_id: str,
    laid: dict[tuple[int, int], int],
    pairs: list[tuple[int, int]],
) -> None:
    """Judge a discard: fed the next seat, and spared an opponent's melds from lay-offs."""
    e = events[i]
    s = e["seat"]
    card = parse_card(e["card"])
    ah = state.rules.ace_high_runs
    loose = _loose(state, s)
    nxt = (s + 1) % 3
    if (s, nxt) in pairs:
        c = out.pair(seats[s], seats[nxt])  # type: ignore[arg-type]
        c.feed_n += 1
        j = i + 1
        while j < len(events) and events[j]["type"] == "client_seed_set":
            j += 1
        follow = events[j] if j < len(events) else {}
        taken = (
            follow.get("type") == "took_discard"
            and follow.get("seat") == nxt
            and not follow.get("lay_off")
            and follow.get("card") == e["card"]
        )
        if taken:
            unknown = _unknown_to(state, s)
            risk = take_risk(card, unknown, ah)
            safer = loose & ~BIT[card]
            held = -1
            while safer:
                low = safer & -safer
                other = low.bit_length() - 1
                safer ^= low
                if take_risk(other, unknown, ah) < risk:
                    held = other
                    break
            if held >= 0:
                c.feed_k += 1
                out.decisions.append(
                    {
                        "game": game_id,
                        "seq": seq,
                        "signal": "feed",
                        "by": seats[s],
                        "for": seats[nxt],
                        "card": CODES[card],
                        "safer": CODES[held],
                    }
                )
    for o in ((s + 1) % 3, (s + 2) % 3):
        if (s, o) not in pairs:
            continue
        fits = loose & _opp_targets(state, o)
        if not fits and not laid.get((s, o)):
            continue
        c = out.pair(seats[s], seats[o])  # type: ignore[arg-type]
        c.spare_n += 1
        if fits:
            c.spare_k += 1
            out.decisions.append(
                {
                    "game": game_id,
                    "seq": seq,
                    "signal": "spare",
                    "by": seats[s],
                    "for": seats[o],
                    "cards": [CODES[x] for x in range(52) if fits >> x & 1],
                }
            )


_NORMAL = NormalBot()


def _answer(
    out: MatchSignals,
    state: GameState,
    seats: Sequence[int | None],
    events: Sequence[dict[str, Any]],
    i: int,
    seq: int,
    game_id: str,
    winner: int | None,
    judge: AnswerJudge,
    pairs: list[tuple[int, int]],
) -> None:
    """Judge a Draw answer: the normal bot's rule first, the hard bot's playouts if they differ."""
    e = events[i]
    s = e["seat"]
    for o in ((s + 1) % 3, (s + 2) % 3):
        if (s, o) in pairs:
            out.pair(seats[s], seats[o]).answer_n += 1  # type: ignore[arg-type]
    if winner is None or winner == s or (s, winner) not in pairs:
        return  # nobody else at the table gained from it
    challenged = e["type"] == "challenged"
    view = player_view(state, s)
    k = read(view)
    dw = deadwood_of(state.hands[s], state.rules)
    if _NORMAL.wants_challenge(k, dw) == challenged:
        return
    history = [redact_event(x, s) for x in events[:i]]
    rng = random.Random(f"{game_id}:{seq}")
    out.searched += 1
    v_challenge, v_fold = judge(view, history, rng)
    given, other = (v_challenge, v_fold) if challenged else (v_fold, v_challenge)
    if given < other - ANSWER_MARGIN:
        out.pair(seats[s], seats[winner]).answer_k += 1  # type: ignore[arg-type]
        out.decisions.append(
            {
                "game": game_id,
                "seq": seq,
                "signal": "answer",
                "by": seats[s],
                "for": seats[winner],
                "answer": e["type"],
                "value_given": round(given, 2),
                "value_other": round(other, 2),
            }
        )


def hard_judge(
    view: dict[str, Any], history: list[dict[str, Any]], rng: random.Random
) -> tuple[float, float]:
    """The hard bot's values of challenging and folding, with no time cap (reproducible: the
    same events and seed give the same values, so a rebuild equals the live projection)."""
    from games.rules.bots.hard import HardBot

    return HardBot(time_limit=None).answer_values(view, history, rng, ANSWER_DEALS)


__all__ = [
    "ANSWER_MARGIN",
    "Counts",
    "FIELDS",
    "MatchSignals",
    "hard_judge",
    "pair_flows",
    "score_match",
]
