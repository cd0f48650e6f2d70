"""What one seat knows, as card masks: its ``player_view`` plus its redacted event history.

Bots reason from this and nothing else, so a bot cannot read a hidden card even by mistake: the
only inputs are the view and the events as ``redact_event`` shows them to that seat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..cards import BIT, FULL_DECK, mask_of_codes, parse_card
from ..melds import SET
from ..ruleset import RuleSet
from .heuristics import targets, typical_deadwood

_RULES_CACHE: dict[tuple, RuleSet] = {}


def group_by_type(legal: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The legal commands grouped by their ``type``, in their order: every bot decides by kind
    first (draw or take, meld or discard), then among the commands of that kind."""
    out: dict[str, list[dict[str, Any]]] = {}
    for cmd in legal:
        out.setdefault(cmd["type"], []).append(cmd)
    return out


def rules_of(view: dict[str, Any]) -> RuleSet:
    """The view's RuleSet, cached: bots look at it on every decision."""
    raw = view["rules"]
    key = tuple(sorted(raw.items()))
    rules = _RULES_CACHE.get(key)
    if rules is None:
        rules = _RULES_CACHE[key] = RuleSet.from_dict(dict(raw))
    return rules


@dataclass(slots=True)
class TableMeld:
    meld_id: int
    owner: int
    is_set: bool
    mask: int  # 0 for another seat's secret set (its cards are unknown)
    hidden: bool
    size: int


@dataclass(slots=True)
class Knowledge:
    """The public state plus the seat's own hand; ``unknown`` is every card it cannot place."""

    seat: int
    rules: RuleSet
    phase: str
    turn: int
    dealer: int
    hand: int
    melds: list[TableMeld]
    discard: list[int]
    stock_count: int
    hand_counts: list[int]
    opened: list[bool]
    blocked: frozenset[int]
    turns: int
    draw_caller: int
    answers: list[tuple[int, str]]
    round_wins: list[int]
    unknown: int
    table: int  # every visible card on the table
    dead: int  # cards out of play for everyone: table and discard pile
    last_drawer: int = -1
    #: per seat: discards it declined (drew from the stock while the card lay on top)
    passed: list[int] = field(default_factory=lambda: [0, 0, 0])
    #: per seat: cards it discarded this round
    discarded: list[int] = field(default_factory=lambda: [0, 0, 0])
    #: per seat: at the start of its latest turn it could have called Draw and did not, so its
    #: deadwood was likely above this (-1: no such inference)
    no_call_limit: list[int] = field(default_factory=lambda: [-1, -1, -1])
    #: per seat: its latest discard this round (-1: none yet)
    last_discard: list[int] = field(default_factory=lambda: [-1, -1, -1])
    #: per seat: cards that fitted an exposed meld when it last discarded (a seat that lays off
    #: all it can holds none of them)
    fits: list[int] = field(default_factory=lambda: [0, 0, 0])

    @property
    def opponents(self) -> tuple[int, int]:
        return ((self.seat + 1) % 3, (self.seat + 2) % 3)

    def hidden_others(self) -> list[int]:
        """Indices (into ``melds``) of secret sets whose cards this seat cannot see."""
        return [i for i, m in enumerate(self.melds) if m.hidden and m.mask == 0]


def read(view: dict[str, Any], history: list[dict[str, Any]] | None = None) -> Knowledge:
    """Build a seat's knowledge from its view and (optionally) its redacted history."""
    seat = view["seat"]
    hand = mask_of_codes(view["hand"])
    melds = []
    table = 0
    for m in view["melds"]:
        cards = m["cards"]
        mask = mask_of_codes(cards) if cards is not None else 0
        table |= mask
        melds.append(
            TableMeld(m["meld_id"], m["owner"], m["kind"] == SET, mask, m["hidden"], m["size"])
        )
    discard = [parse_card(c) for c in view["discard_pile"]]
    dmask = 0
    for c in discard:
        dmask |= BIT[c]
    draw_call = view.get("draw_call")
    k = Knowledge(
        seat=seat,
        rules=rules_of(view),
        phase=view["phase"],
        turn=view["turn"] if view["turn"] is not None else -1,
        dealer=view["dealer"],
        hand=hand,
        melds=melds,
        discard=discard,
        stock_count=view["stock_count"],
        hand_counts=list(view["hand_counts"]),
        opened=list(view["opened"]),
        blocked=frozenset(view["blocked"]),
        turns=view["turns"],
        draw_caller=draw_call["caller"] if draw_call else -1,
        answers=[(a["seat"], a["answer"]) for a in draw_call["answers"]] if draw_call else [],
        round_wins=list(view["round_wins"]),
        unknown=FULL_DECK & ~(hand | table | dmask),
        table=table,
        dead=table | dmask,
    )
    if history:
        _read_history(k, history)
    return k


def _read_history(k: Knowledge, history: list[dict[str, Any]]) -> None:
    start = 0
    for i in range(len(history) - 1, -1, -1):
        if history[i].get("type") == "round_started":
            start = i
            break
    pile: list[int] = []
    first = history[start] if history and history[start].get("type") == "round_started" else {}
    counts = list(first.get("hand_counts", k.hand_counts))
    owner: dict[int, int] = {}
    exposed: dict[int, list] = {}  # meld id -> [mask, is_set] of the melds anyone may lay off on
    ah = k.rules.ace_high_runs
    opened = [False, False, False]
    blocked = [False, False, False]
    draw_call = k.rules.draw_call
    in_turn = k.rules.in_turn  # a block lasts until the blocked seat's discard, not its draw
    for e in history[start + 1 :] if first else history[start:]:
        kind = e.get("type")
        s = e.get("seat", -1)
        if kind in ("drew", "took_discard"):
            # the seat could have called Draw instead: note the deadwood it must have had
            k.no_call_limit[s] = -1
            if draw_call and first and opened[s] and not blocked[s]:
                threats = [x for x in range(3) if x != s and opened[x]]
                if threats:
                    k.no_call_limit[s] = int(_CALL_FRAC * min(_typical(counts[x]) for x in threats))
            if not in_turn:
                blocked[s] = False
            if kind == "drew":
                if pile:
                    k.passed[s] |= BIT[pile[-1]]
                k.last_drawer = s
                counts[s] += 1
            else:
                if pile:
                    pile.pop()
                owner.setdefault(e["meld_id"], s)
                if e.get("lay_off"):
                    if e["meld_id"] in exposed:
                        exposed[e["meld_id"]][0] |= BIT[parse_card(e["card"])]
                else:  # its cards include the one taken
                    exposed[e["meld_id"]] = [mask_of_codes(e["cards"]), e.get("kind") == SET]
                    counts[s] -= len(e["cards"]) - 1
                    opened[s] = True
        elif kind == "melded":
            owner[e["meld_id"]] = s
            if e.get("cards") and not e.get("hidden"):
                exposed[e["meld_id"]] = [mask_of_codes(e["cards"]), e.get("kind") == SET]
            opened[s] = True
            counts[s] -= len(e["cards"]) if e.get("cards") else e.get("size", 4)
        elif kind == "laid_off":
            counts[s] -= 1
            if e["meld_id"] in exposed:
                exposed[e["meld_id"]][0] |= BIT[parse_card(e["card"])]
            o = owner.get(e["meld_id"], s)
            if o != s:
                blocked[o] = True
        elif kind == "discarded":
            if in_turn:
                blocked[s] = False
            c = parse_card(e["card"])
            pile.append(c)
            counts[s] -= 1
            k.discarded[s] |= BIT[c]
            k.last_discard[s] = c
            fits = 0
            for mask, is_set in exposed.values():
                fits |= targets(mask, is_set, ah)
            k.fits[s] = fits


_CALL_FRAC = 1.2  # the normal bot's Draw-call margin: what a sensible seat would call with


def _typical(n: int) -> int:
    return typical_deadwood(max(0, n))
