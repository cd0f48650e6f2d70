"""The immutable game state and ``evolve``/``fold``: one pure step per event.

States are frozen; ``evolve`` returns a new state and shares everything that did not change, so a
snapshot is just a reference and ``fold`` of a whole match costs a few milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any, NamedTuple

from .cards import BIT, parse_card
from .events import (
    Aborted,
    Challenged,
    ClientSeedSet,
    Discarded,
    DrawCalled,
    Drew,
    Event,
    Folded,
    GameStarted,
    LaidOff,
    MatchEnded,
    Melded,
    Resigned,
    RoundEnded,
    RoundStarted,
    TookDiscard,
    TurnTimedOut,
    event_from_dict,
)
from .ruleset import RuleSet

DEALING = "dealing"
START = "start"
PLAY = "play"
DRAW_CALL = "draw_call"
ROUND_OVER = "round_over"
MATCH_OVER = "match_over"
ABORTED = "aborted"
PHASES = (DEALING, START, PLAY, DRAW_CALL, ROUND_OVER, MATCH_OVER, ABORTED)
#: The phases of a round in play: a seat is to act (a turn or a Draw answer).
IN_ROUND_PHASES = (START, PLAY, DRAW_CALL)


class Meld(NamedTuple):
    meld_id: int
    owner: int
    kind: str
    mask: int
    hidden: bool = False


class GameState(NamedTuple):
    """Everything the rules need; hands and melds are 52-bit card masks.

    A named tuple: immutable, and ``_replace`` is several times cheaper than a dataclass's.
    """

    rules: RuleSet
    seats: tuple[dict[str, Any], ...] = ()
    first_dealer: int = 0
    version: int = 0
    phase: str = DEALING
    round: int = 0
    dealer: int = -1
    turn: int = -1
    hands: tuple[int, int, int] = (0, 0, 0)
    stock: tuple[int, ...] = ()
    discard: tuple[int, ...] = ()
    melds: tuple[Meld, ...] = ()
    blocked: frozenset[int] = frozenset()
    last_drawer: int = -1
    turns: int = 0
    draw_caller: int = -1
    answers: tuple[tuple[int, str], ...] = ()
    round_wins: tuple[int, int, int] = (0, 0, 0)
    chips: tuple[int, int, int] = (0, 0, 0)
    last_round: RoundEnded | None = None
    match_winner: int | None = None
    salt: str = ""
    deck_commitment: str = ""
    rated: bool = True
    buy_in: int = 0  # table stakes: each seat's escrowed chips (0: none)
    fee_percent: int = 0  # the room's service fee on winnings, in percent (0: none)
    resigned: frozenset[int] = frozenset()
    server_seed: str = ""  # the round's (seeded shuffles); secret until the round ends
    next_server_seed: str = ""  # committed for the next deal; secret until that round ends
    next_server_seed_hash: str = ""
    client_seeds: tuple[str, str, str] = ("", "", "")  # sent since the last deal, per seat

    def opened(self, seat: int) -> bool:
        return any(m.owner == seat for m in self.melds)

    @property
    def in_round(self) -> bool:
        return self.phase in IN_ROUND_PHASES


def _with(t: tuple, i: int, value: Any) -> tuple:
    return t[:i] + (value,) + t[i + 1 :]


def _mask(codes: Iterable[str]) -> int:
    m = 0
    for c in codes:
        m |= BIT[parse_card(c)]
    return m


def _game_started(state: GameState | None, e: GameStarted) -> GameState:
    return GameState(
        rules=RuleSet.from_dict(e.rules),
        seats=tuple(e.seats),
        first_dealer=e.first_dealer,
        rated=e.rated,
        buy_in=e.buy_in,
        fee_percent=e.fee_percent,
        next_server_seed=e.next_server_seed,
        next_server_seed_hash=e.next_server_seed_hash,
    )


def _round_started(s: GameState, e: RoundStarted) -> GameState:
    hands = tuple(_mask(h) for h in e.hands)
    hands = hands + (0,) * (3 - len(hands))
    return s._replace(
        phase=PLAY,  # the dealer's first turn has no draw
        round=e.round,
        dealer=e.dealer,
        turn=e.dealer,
        hands=hands,
        stock=tuple(parse_card(c) for c in e.stock),
        discard=(),
        melds=(),
        blocked=frozenset(),
        last_drawer=-1,
        turns=0,
        draw_caller=-1,
        answers=(),
        salt=e.salt,
        deck_commitment=e.deck_commitment,
        server_seed=e.server_seed,
        next_server_seed="",
        next_server_seed_hash="",
        client_seeds=("", "", ""),  # the deal used them
    )


def _unblock_at_start(s: GameState, seat: int) -> frozenset[int]:
    """A block on ``seat`` ends when its turn starts with a draw or take, except under
    ``in_turn`` timing, where it lasts until that turn's discard."""
    return s.blocked if s.rules.in_turn else s.blocked - {seat}


def _drew(s: GameState, e: Drew) -> GameState:
    bit = BIT[parse_card(e.card)]
    stock = (
        s.stock[1:]
        if s.stock and BIT[s.stock[0]] == bit
        else tuple(c for c in s.stock if BIT[c] != bit)
    )
    return s._replace(
        phase=PLAY,
        hands=_with(s.hands, e.seat, s.hands[e.seat] | bit),
        stock=stock,
        blocked=_unblock_at_start(s, e.seat),
        last_drawer=e.seat,
    )


def _took_discard(s: GameState, e: TookDiscard) -> GameState:
    cards = _mask(e.cards)
    taken = BIT[parse_card(e.card)]
    from_hand = cards & ~taken
    melds = s.melds
    if e.lay_off:
        idx = e.meld_id - 1
        if 0 <= idx < len(melds):
            old = melds[idx]
            melds = _with(melds, idx, old._replace(mask=old.mask | taken))
            from_hand = 0
    else:
        melds = melds + (Meld(e.meld_id, e.seat, e.kind, cards),)
    return s._replace(
        phase=PLAY,
        hands=_with(s.hands, e.seat, s.hands[e.seat] & ~from_hand),
        discard=s.discard[:-1],
        melds=melds,
        blocked=_unblock_at_start(s, e.seat),
    )


def _melded(s: GameState, e: Melded) -> GameState:
    cards = _mask(e.cards)
    return s._replace(
        hands=_with(s.hands, e.seat, s.hands[e.seat] & ~cards),
        melds=s.melds + (Meld(e.meld_id, e.seat, e.kind, cards, e.hidden),),
    )


def _laid_off(s: GameState, e: LaidOff) -> GameState:
    bit = BIT[parse_card(e.card)]
    idx = e.meld_id - 1
    melds = s.melds
    blocked = s.blocked
    if 0 <= idx < len(melds):
        old = melds[idx]
        melds = _with(melds, idx, old._replace(mask=old.mask | bit))
        if old.owner != e.seat:
            blocked = blocked | {old.owner}
    return s._replace(
        hands=_with(s.hands, e.seat, s.hands[e.seat] & ~bit), melds=melds, blocked=blocked
    )


def _discarded(s: GameState, e: Discarded) -> GameState:
    card = parse_card(e.card)
    return s._replace(
        phase=START,
        hands=_with(s.hands, e.seat, s.hands[e.seat] & ~BIT[card]),
        discard=s.discard + (card,),
        turns=s.turns + 1,
        turn=(e.seat + 1) % 3,
        # in_turn: a block lasts through the blocked seat's whole turn, up to its discard
        blocked=s.blocked - {e.seat} if s.rules.in_turn else s.blocked,
    )


def _draw_called(s: GameState, e: DrawCalled) -> GameState:
    return s._replace(phase=DRAW_CALL, draw_caller=e.seat, answers=(), turn=(e.seat + 1) % 3)


def _answered(s: GameState, e: Challenged | Folded) -> GameState:
    kind = "challenge" if isinstance(e, Challenged) else "fold"
    return s._replace(answers=s.answers + ((e.seat, kind),), turn=(e.seat + 1) % 3)


def _timed_out(s: GameState, e: TurnTimedOut) -> GameState:
    return s


def _resigned(s: GameState, e: Resigned) -> GameState:
    return s._replace(resigned=s.resigned | {e.seat})


def _aborted(s: GameState, e: Aborted) -> GameState:
    return s._replace(phase=ABORTED, turn=-1)


def _client_seed_set(s: GameState, e: ClientSeedSet) -> GameState:
    if not 0 <= e.seat <= 2:
        return s
    return s._replace(client_seeds=_with(s.client_seeds, e.seat, e.client_seed))


def _round_ended(s: GameState, e: RoundEnded) -> GameState:
    wins = s.round_wins
    if e.winner is not None:
        wins = _with(wins, e.winner, wins[e.winner] + 1)
    payouts = tuple(e.payouts) + (0,) * (3 - len(e.payouts))
    chips = tuple(c + p for c, p in zip(s.chips, payouts, strict=True))
    return s._replace(
        phase=ROUND_OVER,
        turn=-1,
        round_wins=wins,
        chips=chips,
        last_round=e,
        next_server_seed=e.next_server_seed,
        next_server_seed_hash=e.next_server_seed_hash,
    )


def _match_ended(s: GameState, e: MatchEnded) -> GameState:
    return s._replace(phase=MATCH_OVER, turn=-1, match_winner=e.winner)


_MUTATORS = {
    Drew: _drew,
    Discarded: _discarded,
    Melded: _melded,
    LaidOff: _laid_off,
    TookDiscard: _took_discard,
    DrawCalled: _draw_called,
    Challenged: _answered,
    Folded: _answered,
    TurnTimedOut: _timed_out,
    Resigned: _resigned,
    Aborted: _aborted,
    ClientSeedSet: _client_seed_set,
    RoundStarted: _round_started,
    RoundEnded: _round_ended,
    MatchEnded: _match_ended,
}


def evolve(state: GameState | None, event: Event | dict[str, Any]) -> GameState:
    """The state after one event. Pure and total: a stored event is never refused here."""
    if not isinstance(event, Event):
        event = event_from_dict(event)
    if isinstance(event, GameStarted):
        new = _game_started(state, event)
    else:
        if state is None:
            raise ValueError("the first event of a game must be game_started")
        new = _MUTATORS[type(event)](state, event)
    return new._replace(version=(state.version if state is not None else 0) + 1)


def fold(events: Iterable[Event | dict[str, Any]], state: GameState | None = None) -> GameState:
    """The state after ``events``, optionally continuing from a snapshot ``state``."""
    for event in events:
        state = evolve(state, event)
    if state is None:
        raise ValueError("no events")
    return state


__all__ = [
    "GameState",
    "IN_ROUND_PHASES",
    "Meld",
    "PHASES",
    "evolve",
    "fold",
    "state_from_dict",
    "state_to_dict",
]


def state_to_dict(state: GameState) -> dict[str, Any]:
    """A JSON-ready snapshot of a state, so a store can resume without re-folding the stream."""
    return {
        "v": 1,
        "rules": state.rules.to_dict(),
        "seats": [dict(s) for s in state.seats],
        "first_dealer": state.first_dealer,
        "version": state.version,
        "phase": state.phase,
        "round": state.round,
        "dealer": state.dealer,
        "turn": state.turn,
        "hands": list(state.hands),
        "stock": list(state.stock),
        "discard": list(state.discard),
        "melds": [[m.meld_id, m.owner, m.kind, m.mask, m.hidden] for m in state.melds],
        "blocked": sorted(state.blocked),
        "last_drawer": state.last_drawer,
        "turns": state.turns,
        "draw_caller": state.draw_caller,
        "answers": [list(a) for a in state.answers],
        "round_wins": list(state.round_wins),
        "chips": list(state.chips),
        "last_round": state.last_round.to_dict() if state.last_round else None,
        "match_winner": state.match_winner,
        "salt": state.salt,
        "deck_commitment": state.deck_commitment,
        "rated": state.rated,
        "buy_in": state.buy_in,
        "fee_percent": state.fee_percent,
        "resigned": sorted(state.resigned),
        "server_seed": state.server_seed,
        "next_server_seed": state.next_server_seed,
        "next_server_seed_hash": state.next_server_seed_hash,
        "client_seeds": list(state.client_seeds),
    }


@lru_cache(maxsize=256)
def _rules_of(items: tuple[tuple[str, Any], ...]) -> RuleSet:
    return RuleSet.from_dict(dict(items))


def _rules(data: dict[str, Any]) -> RuleSet:
    """A snapshot's RuleSet; tables share a few variants, so each is built (and checked) once."""
    try:
        return _rules_of(tuple(sorted(data.items())))
    except TypeError:  # an unhashable value: not a cacheable rules dict
        return RuleSet.from_dict(data)


def state_from_dict(data: dict[str, Any]) -> GameState:
    """The state a ``state_to_dict`` snapshot describes."""
    last = data.get("last_round")
    return GameState(
        rules=_rules(data["rules"]),
        seats=tuple(data["seats"]),
        first_dealer=data["first_dealer"],
        version=data["version"],
        phase=data["phase"],
        round=data["round"],
        dealer=data["dealer"],
        turn=data["turn"],
        hands=tuple(data["hands"]),
        stock=tuple(data["stock"]),
        discard=tuple(data["discard"]),
        melds=tuple(Meld(i, o, k, m, h) for i, o, k, m, h in data["melds"]),
        blocked=frozenset(data["blocked"]),
        last_drawer=data["last_drawer"],
        turns=data["turns"],
        draw_caller=data["draw_caller"],
        answers=tuple((s, a) for s, a in data["answers"]),
        round_wins=tuple(data["round_wins"]),
        chips=tuple(data["chips"]),
        last_round=event_from_dict(last) if last else None,  # type: ignore[arg-type]
        match_winner=data["match_winner"],
        salt=data["salt"],
        deck_commitment=data["deck_commitment"],
        rated=data.get("rated", True),  # snapshots written before these fields
        buy_in=data.get("buy_in", 0),
        fee_percent=data.get("fee_percent", 0),
        resigned=frozenset(data.get("resigned", ())),
        server_seed=data.get("server_seed", ""),
        next_server_seed=data.get("next_server_seed", ""),
        next_server_seed_hash=data.get("next_server_seed_hash", ""),
        client_seeds=tuple(data.get("client_seeds", ("", "", ""))),
    )
