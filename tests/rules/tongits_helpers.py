"""Shared helpers for the rules-core tests.

Positions are built exactly as outside code would build them: by folding a ``game_started`` and a
``round_started`` event given as JSON dicts, then advancing with ``decide`` + ``evolve``.
Only the public contract of ``games.rules`` is used.
"""

import dataclasses
import json

import pytest

from games.rules import (
    IllegalMove,
    RuleSet,
    decide,
    event_to_dict,
    evolve,
    fold,
    player_view,
)

SEATS = [
    {"kind": "user", "name": "a"},
    {"kind": "user", "name": "b"},
    {"kind": "user", "name": "c"},
]
RANKS = "A23456789TJQK"
SUITS = "CDHS"
DECK = [r + s for s in SUITS for r in RANKS]
POINTS = {r: min(i + 1, 10) for i, r in enumerate(RANKS)}

DRAW = {"type": "draw"}
CALL = {"type": "call_draw"}
CHALLENGE = {"type": "challenge"}
FOLD = {"type": "fold"}


def cards(spec):
    """'2C 3C 4C' -> ['2C', '3C', '4C']; lists pass through."""
    return spec.split() if isinstance(spec, str) else list(spec)


def norm(code):
    return "T" + code[2:] if code.startswith("10") else code


def same(a, b):
    """Card lists equal as multisets (order is not meaningful)."""
    return sorted(norm(c) for c in a) == sorted(norm(c) for c in cards(b))


def points(hand):
    return sum(POINTS[c[0]] for c in cards(hand))


def standard(**changes):
    return dataclasses.replace(RuleSet.preset("standard"), **changes)


def house(**changes):
    return dataclasses.replace(RuleSet.preset("house"), **changes)


def h19(**changes):
    return dataclasses.replace(RuleSet.preset("h19"), **changes)


def game_started(rules=None, first_dealer=0):
    return {
        "type": "game_started",
        "rules": (rules or standard()).to_dict(),
        "seats": [dict(s) for s in SEATS],
        "first_dealer": first_dealer,
    }


def round_started(hands, stock, dealer=0, round_no=1):
    return {
        "type": "round_started",
        "round": round_no,
        "dealer": dealer,
        "hands": [cards(h) for h in hands],
        "stock": cards(stock),
    }


def position(hands, stock, dealer=0, rules=None):
    """State at the start of round 1 with the given hands (index = seat) and stock (top first)."""
    return fold([game_started(rules, first_dealer=dealer), round_started(hands, stock, dealer)])


def view(state, seat=0):
    return player_view(state, seat)


def views_json(state):
    return json.dumps([player_view(state, s) for s in range(3)], sort_keys=True, default=str)


def turn(state):
    return player_view(state, 0)["turn"]


def phase(state):
    return player_view(state, 0)["phase"]


def act(state, seat, command):
    """Apply one command; return (new state, list of event dicts)."""
    events = decide(state, seat, command)
    dicts = [event_to_dict(e) for e in events]
    for e in events:
        state = evolve(state, e)
    return state, dicts


def play(state, *moves):
    """Apply (seat, command) moves in order; return (state, all event dicts)."""
    out = []
    for seat, command in moves:
        state, dicts = act(state, seat, command)
        out.extend(dicts)
    return state, out


def apply_events(state, events):
    for e in events:
        state = evolve(state, e)
    return state


def illegal(state, seat, command):
    """decide must raise IllegalMove and change nothing; return its code."""
    before = views_json(state)
    with pytest.raises(IllegalMove) as info:
        decide(state, seat, command)
    assert views_json(state) == before, "decide changed the state while refusing a move"
    code = info.value.code
    assert isinstance(code, str)
    return code


def meld(spec, hidden=False):
    command = {"type": "meld", "cards": cards(spec)}
    if hidden:
        command["hidden"] = True
    return command


def lay(card, meld_id):
    return {"type": "lay_off", "card": card, "meld_id": meld_id}


def discard(card):
    return {"type": "discard", "card": card}


def take(spec):
    return {"type": "take_discard", "cards": cards(spec)}


def take_on(meld_id):
    return {"type": "take_discard", "meld_id": meld_id}


def types(events):
    return [e["type"] for e in events]


def of_type(events, type_):
    return [e for e in events if e["type"] == type_]


def one(events, type_):
    found = of_type(events, type_)
    assert len(found) == 1, f"expected one {type_} in {types(events)}"
    return found[0]


def round_end(events):
    return one(events, "round_ended")


def meld_in_view(state, meld_id, seat=0):
    for m in player_view(state, seat)["melds"]:
        if m["meld_id"] == meld_id:
            return m
    raise AssertionError(f"meld {meld_id} not on the table")


# A standard opening used by several files: dealer 0 owns meld 1 (2C 3C 4C) after its first turn.
FILL = "KC QC JC TC 9C KD QD JD TD 9D"
MELDS = {0: "2C 3C 4C", 1: "5D 6D 7D", 2: "9S TS JS"}


def draw_setup(caller, rest, opened=(0, 1, 2), rules=None, melds=None, hidden=()):
    """Position where ``caller`` is about to start a turn and may call Draw.

    Seat s holds MELDS[s] (exposed in its first turn when s in ``opened``, face down when s in
    ``hidden``) plus ``rest[s]``; the dealer (0) also holds KH, discarded in its first turn.
    Every later turn draws a stock card (FILL order) and discards it at once, so when the call
    comes each seat's hand is exactly ``rest[s]``.  No lay-offs happen, so nobody is blocked.
    """
    melds = {**MELDS, **(melds or {})}
    hands = []
    for s in range(3):
        hand = (cards(melds[s]) if s in opened else []) + cards(rest[s])
        if s == 0:
            hand.append("KH")
        hands.append(hand)
    stock = cards(FILL)
    state = position(hands, stock, dealer=0, rules=rules)

    def expose(s):
        return [(s, meld(melds[s], hidden=s in hidden))] if s in opened else []

    moves = expose(0) + [(0, discard("KH"))]
    drawn = iter(stock)
    order = [1, 2] + ([0] if caller >= 1 else []) + ([1] if caller == 2 else [])
    first_turn = {1, 2}
    for s in order:
        card = next(drawn)
        moves.append((s, DRAW))
        if s in first_turn:
            moves.extend(expose(s))
            first_turn.discard(s)
        moves.append((s, discard(card)))
    state, _ = play(state, *moves)
    assert turn(state) == caller and phase(state) == "start"
    return state


def blocked_position(rules=None):
    """Dealer 0 opens with 2C 3C 4C; seat 1 lays 5C off on it; seat 0 is about to start."""
    state = position(
        ["2C 3C 4C 9H 9D 6S 2D KH", "5C 8S", "9S 7S"], "KC QC JC TC 8C 7C KD QD", rules=rules
    )
    state, _ = play(
        state,
        (0, meld("2C 3C 4C")),
        (0, discard("KH")),
        (1, DRAW),
        (1, lay("5C", 1)),
        (1, discard("KC")),
        (2, DRAW),
        (2, discard("9S")),
    )
    assert turn(state) == 0 and phase(state) == "start" and 0 in view(state, 0)["blocked"]
    return state
