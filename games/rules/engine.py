"""``decide``, ``legal_commands``, ``time_out``, ``new_game`` and ``deal``: commands in, events out.

``decide`` validates against the current state, then emits events while folding them into a
scratch state, so automatic consequences (auto-folds, round end, match end) are computed from
exactly the state the events will produce on replay.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Callable
from typing import Any, Protocol

from . import scoring
from .cards import BIT, CODES, POINTS, cards_of, codes_of, parse_card
from .errors import IllegalMove
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
)
from .melds import (
    RANK_MASKS,
    SET,
    best_arrangement,
    can_lay_off,
    candidate_melds,
    deadwood_of,
    lay_off_targets,
    meld_kind,
    run_display,
)
from .ruleset import RuleSet
from .state import (
    ABORTED,
    DEALING,
    DRAW_CALL,
    MATCH_OVER,
    PLAY,
    ROUND_OVER,
    START,
    GameState,
    evolve,
)

log = logging.getLogger(__name__)

COMMAND_TYPES = (
    "draw",
    "take_discard",
    "meld",
    "lay_off",
    "discard",
    "call_draw",
    "challenge",
    "fold",
)


class Rng(Protocol):
    def shuffle(self, x: list[Any]) -> None: ...
    def randrange(self, stop: int) -> int: ...
    def getrandbits(self, k: int) -> int: ...


# ---------------------------------------------------------------- command parsing


def _card(command: dict[str, Any], key: str = "card") -> int:
    try:
        return parse_card(command[key])
    except KeyError:
        raise IllegalMove("bad_command", f"'{key}' is required") from None
    except ValueError:
        raise IllegalMove("bad_command", f"'{command[key]}' is not a card") from None


def _cards(command: dict[str, Any]) -> int:
    raw = command.get("cards")
    if not isinstance(raw, list) or not raw:
        raise IllegalMove("bad_command", "'cards' must be a list of card codes")
    mask = 0
    for code in raw:
        try:
            bit = BIT[parse_card(code)]
        except ValueError:
            raise IllegalMove("bad_command", f"'{code}' is not a card") from None
        if mask & bit:
            raise IllegalMove("bad_command", f"card {CODES[bit.bit_length() - 1]} given twice")
        mask |= bit
    return mask


def _meld_index(state: GameState, command: dict[str, Any]) -> int:
    meld_id = command.get("meld_id")
    if not isinstance(meld_id, int) or isinstance(meld_id, bool):
        raise IllegalMove("bad_command", "'meld_id' must be an integer")
    if not 1 <= meld_id <= len(state.melds):
        raise IllegalMove("unknown_meld", f"no meld {meld_id} on the table")
    return meld_id - 1


# ---------------------------------------------------------------- decide


def decide(state: GameState, seat: int, command: dict[str, Any]) -> list[Event]:
    """The events a seat's command causes, or ``IllegalMove``; ``state`` is never changed."""
    if not isinstance(command, dict) or not isinstance(command.get("type"), str):
        raise IllegalMove("bad_command", "a command is an object with a 'type'")
    kind = command["type"]
    if kind not in COMMAND_TYPES:
        raise IllegalMove("unknown_command", f"unknown command type {kind!r}")
    if not isinstance(seat, int) or not 0 <= seat <= 2:
        raise IllegalMove("bad_command", "seat must be 0, 1 or 2")
    phase = state.phase
    if phase not in (START, PLAY, DRAW_CALL):
        raise IllegalMove("no_round_in_play")
    if kind in ("challenge", "fold"):
        if phase != DRAW_CALL:
            raise IllegalMove("no_draw_call_pending")
        if seat != state.turn:
            raise IllegalMove("not_your_turn")
        return _answer(state, seat, kind)
    if seat != state.turn:
        raise IllegalMove("not_your_turn")
    if phase == DRAW_CALL:
        raise IllegalMove("wrong_phase", "answer the Draw call: challenge or fold")
    return _HANDLERS[kind](state, seat, command)


def _draw(state: GameState, seat: int, command: dict[str, Any]) -> list[Event]:
    if state.phase != START:
        raise IllegalMove("already_drew")
    if not state.stock:
        raise IllegalMove("stock_empty")
    return [Drew(seat, CODES[state.stock[0]])]


def _take_discard(state: GameState, seat: int, command: dict[str, Any]) -> list[Event]:
    if state.phase != START:
        raise IllegalMove("already_drew")
    rules = state.rules
    has_meld_id = "meld_id" in command and command["meld_id"] is not None
    has_cards = "cards" in command and command["cards"] is not None
    if has_meld_id == has_cards:
        raise IllegalMove("bad_command", "give either 'cards' or 'meld_id'")
    if has_meld_id and not rules.take_discard_to_lay_off:
        raise IllegalMove("rule_disabled", "the taken discard must go into a new meld")
    if not state.discard:
        raise IllegalMove("discard_not_usable", "the discard pile is empty")
    top = state.discard[-1]
    top_bit = BIT[top]
    if has_meld_id:
        idx = _meld_index(state, command)
        meld = state.melds[idx]
        own = meld.owner == seat and not meld.hidden
        if not own or not can_lay_off(meld.mask, meld.kind, top_bit, rules):
            raise IllegalMove("invalid_lay_off", "the discard can only go onto a meld of your own")
        cards = tuple(run_display(meld.mask | top_bit))
        return [TookDiscard(seat, CODES[top], meld.meld_id, meld.kind, cards, True)]
    cards = _cards(command)
    hand = state.hands[seat]
    if cards & ~hand:
        raise IllegalMove("card_not_in_hand", ", ".join(codes_of(cards & ~hand)))
    kind = meld_kind(cards | top_bit, rules)
    if kind is None:
        raise IllegalMove("discard_not_usable", "the discard and those cards make no meld")
    event = TookDiscard(
        seat, CODES[top], len(state.melds) + 1, kind, tuple(run_display(cards | top_bit)), False
    )
    return _after_hand_change(state, [event], seat)


def _meld(state: GameState, seat: int, command: dict[str, Any]) -> list[Event]:
    if state.phase != PLAY:
        raise IllegalMove("must_draw_first")
    hidden = command.get("hidden", False)
    if not isinstance(hidden, bool):
        raise IllegalMove("bad_command", "'hidden' must be true or false")
    cards = _cards(command)
    hand = state.hands[seat]
    if cards & ~hand:
        raise IllegalMove("card_not_in_hand", ", ".join(codes_of(cards & ~hand)))
    kind = meld_kind(cards, state.rules)
    if kind is None:
        raise IllegalMove("invalid_meld")
    if hidden:
        if not state.rules.secret_sets:
            raise IllegalMove("rule_disabled", "secret sets are off")
        if kind != SET or cards.bit_count() != 4:
            raise IllegalMove("invalid_meld", "a secret set is four of a kind")
    event = Melded(seat, len(state.melds) + 1, kind, tuple(run_display(cards)), hidden)
    return _after_hand_change(state, [event], seat)


def _lay_off(state: GameState, seat: int, command: dict[str, Any]) -> list[Event]:
    if state.phase != PLAY:
        raise IllegalMove("must_draw_first")
    card = _card(command)
    idx = _meld_index(state, command)
    if not state.hands[seat] & BIT[card]:
        raise IllegalMove("card_not_in_hand", CODES[card])
    meld = state.melds[idx]
    if meld.hidden:
        raise IllegalMove("invalid_lay_off", "nobody may lay off on a secret set")
    if not can_lay_off(meld.mask, meld.kind, BIT[card], state.rules):
        raise IllegalMove("invalid_lay_off")
    return _after_hand_change(state, [LaidOff(seat, CODES[card], meld.meld_id)], seat)


def _discard(state: GameState, seat: int, command: dict[str, Any]) -> list[Event]:
    if state.phase != PLAY:
        raise IllegalMove("must_draw_first")
    card = _card(command)
    if not state.hands[seat] & BIT[card]:
        raise IllegalMove("card_not_in_hand", CODES[card])
    events: list[Event] = [Discarded(seat, CODES[card])]
    after = evolve(state, events[0])
    if after.hands[seat] == 0:
        return events + _end_round(after, "tongits", seat)
    if not after.stock:
        return events + _end_round(after, "stock_out", None)
    if after.turns >= state.rules.turn_cap:
        # unreachable under these rules (the stock runs out first): reaching it means a bug
        log.error("round %s reached the turn cap of %s", state.round, state.rules.turn_cap)
        return events + _end_round(after, "turn_cap", None)
    return events


def _call_draw(state: GameState, seat: int, command: dict[str, Any]) -> list[Event]:
    # in_turn (h19 "Fight"): also after the turn's draw or take, instead of the discard
    if state.phase != START and not state.rules.in_turn:
        raise IllegalMove("already_drew")
    if not state.rules.draw_call:
        raise IllegalMove("rule_disabled", "Draw calls are off")
    if not state.opened(seat):
        raise IllegalMove("not_opened")
    if seat in state.blocked:
        raise IllegalMove("draw_blocked")
    event = DrawCalled(seat)
    return [event, *_auto_answers(evolve(state, event))]


def _answer(state: GameState, seat: int, kind: str) -> list[Event]:
    if kind == "challenge" and not state.opened(seat):  # cannot happen: such seats auto-fold
        raise IllegalMove("not_opened")
    event = Challenged(seat) if kind == "challenge" else Folded(seat)
    return [event, *_auto_answers(evolve(state, event))]


def _auto_answers(state: GameState) -> list[Event]:
    """Fold for every seat that has not opened, then end the round once all have answered."""
    events: list[Event] = []
    while len(state.answers) < 2:
        if state.opened(state.turn):
            return events
        event = Folded(state.turn)
        events.append(event)
        state = evolve(state, event)
    return events + _end_round(state, "draw", None)


def _after_hand_change(state: GameState, events: list[Event], seat: int) -> list[Event]:
    after = state
    for e in events:
        after = evolve(after, e)
    if after.hands[seat] == 0:
        return events + _end_round(after, "tongits", seat)
    return events


_HANDLERS = {
    "draw": _draw,
    "take_discard": _take_discard,
    "meld": _meld,
    "lay_off": _lay_off,
    "discard": _discard,
    "call_draw": _call_draw,
}


# ---------------------------------------------------------------- round end and payouts


def _end_round(state: GameState, reason: str, tongits_seat: int | None) -> list[Event]:
    rules = state.rules
    hands = state.hands
    deadwood = tuple(deadwood_of(h, rules) for h in hands)
    winner, challenged, burned = scoring.round_winner(
        rules,
        reason,
        tongits_seat,
        deadwood,
        tuple(state.opened(s) for s in range(3)),
        tuple(h.bit_count() for h in hands),
        state.draw_caller,
        state.answers,
        state.last_drawer,
        state.dealer,
    )
    aces = secret = 0
    if winner is not None:
        aces = (hands[winner] & ACES).bit_count()
        for m in state.melds:
            if m.owner == winner:
                aces += (m.mask & ACES).bit_count()
                secret += 1 if m.hidden else 0
    payouts = scoring.round_payouts(
        rules, reason, winner, challenged, state.answers, burned, aces, secret
    )
    events: list[Event] = [
        RoundEnded(state.round, reason, winner, deadwood, burned, payouts, state.server_seed)
    ]
    if winner is not None and state.round_wins[winner] + 1 >= rules.wins_to_match:
        wins = list(state.round_wins)
        wins[winner] += 1
        events.append(MatchEnded(winner, tuple(wins)))
    return events


ACES = RANK_MASKS[0]


# ---------------------------------------------------------------- time-outs


def time_out(state: GameState) -> list[Event]:
    """What the server plays for the seat whose deadline passed (docs/rules.md "Time")."""
    if not state.in_round:
        raise IllegalMove("no_round_in_play")
    first = TurnTimedOut(state.turn)
    return [first, *_play_for(evolve(state, first))]


def resign(state: GameState, seat: int) -> list[Event]:
    """``resigned`` for ``seat``, then whatever the server plays for it at once (docs/rules.md
    "Time": a resigned seat is played by the time-out rule whenever it is to act)."""
    if state.phase not in (DEALING, START, PLAY, DRAW_CALL, ROUND_OVER):
        raise IllegalMove("no_round_in_play", "the match is over")
    if not isinstance(seat, int) or not 0 <= seat <= 2:
        raise IllegalMove("bad_command", "seat must be 0, 1 or 2")
    if seat in state.resigned:
        raise IllegalMove("already_resigned", "this seat has already resigned")
    first = Resigned(seat)
    return [first, *play_resigned(evolve(state, first))]


def moves_at_once(
    state: GameState, deal: Callable[[GameState], Event] | None = None
) -> list[Event]:
    """What the server writes with any write that reaches ``state``, before anyone may act: the
    next deal, when the table deals at once (``deal`` makes it: the server's policy, not a
    rule), then the moves of a resigned seat to act (docs/rules.md "Time"). The write door appends
    them; the verifier expects them."""
    events: list[Event] = []
    s = state
    if deal is not None and s.phase in (DEALING, ROUND_OVER):
        dealt = deal(s)
        events.append(dealt)
        s = evolve(s, dealt)
    return events + play_resigned(s)


def play_resigned(state: GameState) -> list[Event]:
    """The moves the server plays at once while a resigned seat is to act (none otherwise):
    the time-out rule without the ``turn_timed_out`` (no deadline passed), seat after seat."""
    events: list[Event] = []
    s = state
    while s.in_round and s.turn in s.resigned:
        played = _play_for(s)
        for e in played:
            s = evolve(s, e)
        events.extend(played)
    return events


def abort(state: GameState, reason: str) -> list[Event]:
    """``aborted``: the match is called off unfinished (no result, no rating)."""
    if state.phase in (MATCH_OVER, ABORTED):
        raise IllegalMove("no_round_in_play", "the match is over")
    return [Aborted(reason)]


def _play_for(state: GameState) -> list[Event]:
    """The time-out rule's moves for the seat to act (docs/rules.md "Time")."""
    seat = state.turn
    events: list[Event] = []
    s = state

    def play(command: dict[str, Any]) -> bool:
        nonlocal s
        new = decide(s, seat, command)
        for e in new:
            s = evolve(s, e)
        events.extend(new)
        return s.phase in (PLAY, START) and s.turn == seat

    if s.phase == DRAW_CALL:
        play({"type": "fold"})
        return events
    if s.phase == START:
        play({"type": "draw"})
    _, melds = best_arrangement(s.hands[seat], s.rules.ace_high_runs)
    for m in melds:
        if not play({"type": "meld", "cards": codes_of(m)}):
            return events
    hand = s.hands[seat]
    worst = max(cards_of(hand), key=lambda c: (POINTS[c], c % 13, c // 13))
    play({"type": "discard", "card": CODES[worst]})
    return events


# ---------------------------------------------------------------- new games and deals


def new_game(
    rules: RuleSet,
    seats: list[dict[str, Any]] | None,
    rng: Rng,
    creator_seat: int | None = None,
    rated: bool = True,
    buy_in: int = 0,
    first_dealer: int | None = None,
    fee_percent: int = 0,
) -> GameStarted:
    """``game_started`` with the first dealer drawn from ``rng``; where ``rules.first_dealer`` is
    ``creator``, the first dealer is ``creator_seat`` (the seat of the table's creator) when
    given. ``first_dealer``, when given, is the first dealer whatever the rules say (a rematch:
    the seat after the last match's first dealer, ``rematch_dealer``). ``rng`` is drawn from
    in every case, so the rest of its stream does not depend on it. ``buy_in`` records the
    table stakes each seat escrowed (0: no chips at stake), ``fee_percent`` the room's service fee
    on winnings (0: none)."""
    seats = list(seats) if seats is not None else [{"kind": "user"} for _ in range(3)]
    if len(seats) != 3:
        raise ValueError("Tongits is played by exactly three seats")
    if creator_seat is not None and (
        isinstance(creator_seat, bool) or creator_seat not in (0, 1, 2)
    ):
        raise ValueError("creator_seat must be 0, 1 or 2")
    if first_dealer is not None and (
        isinstance(first_dealer, bool) or first_dealer not in (0, 1, 2)
    ):
        raise ValueError("first_dealer must be 0, 1 or 2")
    dealer = rng.randrange(3)
    if rules.first_dealer == "creator" and creator_seat is not None:
        dealer = creator_seat
    if first_dealer is not None:
        dealer = first_dealer
    if isinstance(buy_in, bool) or not isinstance(buy_in, int) or buy_in < 0:
        raise ValueError("buy_in must be a non-negative integer")
    if isinstance(fee_percent, bool) or not isinstance(fee_percent, int):
        raise ValueError("fee_percent must be a whole number from 0 to 100")
    if not 0 <= fee_percent <= 100:
        raise ValueError("fee_percent must be a whole number from 0 to 100")
    seated = tuple(dict(s) for s in seats)
    return GameStarted(
        rules.to_dict(), seated, dealer, bool(rated), buy_in=buy_in, fee_percent=fee_percent
    )


def rematch_dealer(state: GameState) -> int:
    """The first dealer of a rematch of the match in ``state``: the seat after that match's
    first dealer, so the deal goes round from one match to the next."""
    return (state.first_dealer + 1) % 3


def next_dealer(state: GameState) -> int:
    if state.round == 0:
        return state.first_dealer
    last = state.last_round
    if last is not None and last.winner is not None:
        return last.winner
    return (state.dealer + 1) % 3


def deck_commitment(salt: str, hands: list[list[str]], stock: list[str]) -> str:
    """sha256 of the salt and the whole deal, published before play and checkable after."""
    text = salt + ":" + ",".join(hands[0] + hands[1] + hands[2] + stock)
    return hashlib.sha256(text.encode()).hexdigest()


def seeded_deck(
    server_seed: str, game_id: str, round_no: int, client_seeds: tuple[str, ...] | list[str]
) -> list[int]:
    """The deck a seeded deal shuffles (docs/architecture.md "Verifiable games", docs/verifying.md):
    HMAC-SHA256 of the server seed over the game, round and client seeds keys a counter-mode
    byte stream; a Fisher-Yates shuffle of the canonical deck draws from it without bias."""
    message = json.dumps(
        {"v": 1, "game": game_id, "round": round_no, "client_seeds": list(client_seeds)},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
    ).encode("ascii")
    key = hmac.new(server_seed.encode("ascii"), message, hashlib.sha256).digest()
    buffer = b""
    counter = 0

    def next_u32() -> int:
        nonlocal buffer, counter
        if len(buffer) < 4:
            buffer += hmac.new(key, counter.to_bytes(8, "big"), hashlib.sha256).digest()
            counter += 1
        value, buffer = int.from_bytes(buffer[:4], "big"), buffer[4:]
        return value

    def uniform(n: int) -> int:
        limit = 2**32 - (2**32 % n)
        while True:
            u = next_u32()
            if u < limit:
                return u % n

    deck = list(range(52))
    for i in range(51, 0, -1):
        j = uniform(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


CLIENT_SEED_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def set_client_seed(state: GameState, seat: int, client_seed: Any) -> ClientSeedSet:
    """A seat's seed for the next deal (1 to 64 of ``A-Z a-z 0-9 _ -``); any time before the
    match is over. The latest one a seat sent since the last deal is mixed into the next."""
    if not isinstance(seat, int) or not 0 <= seat <= 2:
        raise IllegalMove("bad_command", "seat must be 0, 1 or 2")
    if (
        not isinstance(client_seed, str)
        or not 1 <= len(client_seed) <= 64
        or not set(client_seed) <= CLIENT_SEED_CHARS
    ):
        raise IllegalMove("bad_command", "a client seed is 1 to 64 of A-Z a-z 0-9 _ -")
    if state.phase == MATCH_OVER:
        raise IllegalMove("wrong_phase", "the match is over")
    return ClientSeedSet(seat, client_seed)


def deal(state: GameState, rng: Rng, game_id: str = "") -> RoundStarted:
    """The next ``round_started`` and its salted commitment. Where the server committed to a
    seed for this deal (``state.next_server_seed``), the shuffle is ``seeded_deck`` of it, the
    game id and the client seeds; else (the pure core's own games) a shuffle from ``rng``.
    ``rng`` always supplies the salt; the client seeds are the seats' latest since the last
    deal (``""`` for a seat that sent none)."""
    if state.phase not in (DEALING, ROUND_OVER):
        raise IllegalMove("wrong_phase", "a round is in play or the match is over")
    server_seed = state.next_server_seed
    if server_seed:
        seeds = tuple(state.client_seeds)
        deck = seeded_deck(server_seed, game_id, state.round + 1, seeds)
    else:
        deck = list(range(52))
        rng.shuffle(deck)
        seeds = ()
    dealer = next_dealer(state)
    hands: list[list[str]] = [[], [], []]
    hands[dealer] = [CODES[c] for c in deck[:13]]
    hands[(dealer + 1) % 3] = [CODES[c] for c in deck[13:25]]
    hands[(dealer + 2) % 3] = [CODES[c] for c in deck[25:37]]
    stock = [CODES[c] for c in deck[37:]]
    salt = f"{rng.getrandbits(128):032x}"
    return RoundStarted(
        state.round + 1,
        dealer,
        tuple(tuple(h) for h in hands),
        tuple(stock),
        salt,
        deck_commitment(salt, hands, stock),
        server_seed,
        seeds,
    )


# ---------------------------------------------------------------- legal commands


def legal_commands(state: GameState, seat: int) -> list[dict[str, Any]]:
    """Every command ``seat`` may send now, concrete; ``[]`` when it may not act."""
    if state.turn != seat or state.phase not in (START, PLAY, DRAW_CALL):
        return []
    rules = state.rules
    if state.phase == DRAW_CALL:
        out = [{"type": "fold"}]
        if state.opened(seat):
            out.insert(0, {"type": "challenge"})
        return out
    hand = state.hands[seat]
    if state.phase == START:
        out: list[dict[str, Any]] = []
        if state.stock:
            out.append({"type": "draw"})
        if state.discard:
            top = state.discard[-1]
            top_bit = BIT[top]
            for m in candidate_melds(hand | top_bit, rules):
                if m & top_bit:
                    out.append({"type": "take_discard", "cards": codes_of(m & ~top_bit)})
            if rules.take_discard_to_lay_off:
                for meld in state.melds:
                    if (
                        meld.owner == seat
                        and not meld.hidden
                        and can_lay_off(meld.mask, meld.kind, top_bit, rules)
                    ):
                        out.append({"type": "take_discard", "meld_id": meld.meld_id})
        if rules.draw_call and seat not in state.blocked and state.opened(seat):
            out.append({"type": "call_draw"})
        return out
    out = []
    for m in candidate_melds(hand, rules):
        out.append({"type": "meld", "cards": codes_of(m)})
        if rules.secret_sets and m.bit_count() == 4 and meld_kind(m, rules) == SET:
            out.append({"type": "meld", "cards": codes_of(m), "hidden": True})
    cards = cards_of(hand)
    for meld in state.melds:
        if meld.hidden:
            continue
        fits = lay_off_targets(meld.mask, meld.kind, rules) & hand
        while fits:
            low = fits & -fits
            c = low.bit_length() - 1
            out.append({"type": "lay_off", "card": CODES[c], "meld_id": meld.meld_id})
            fits ^= low
    for c in sorted(cards, key=lambda c: (c % 13, c // 13)):
        out.append({"type": "discard", "card": CODES[c]})
    if rules.draw_call and rules.in_turn and seat not in state.blocked and state.opened(seat):
        out.append({"type": "call_draw"})  # h19 "Fight": instead of the discard
    return out


def command_key(command: dict[str, Any]) -> tuple:
    """A canonical, hashable form of a command, so differently spelled equals compare equal."""
    kind = command.get("type")
    cards = command.get("cards")
    card_set = frozenset(parse_card(c) for c in cards) if isinstance(cards, list) else None
    card = parse_card(command["card"]) if "card" in command else None
    return (kind, card_set, card, command.get("meld_id"), bool(command.get("hidden", False)))


def deadwood(cards: list[str] | tuple[str, ...], rules: RuleSet | None = None) -> int:
    """Least deadwood points of a hand over all ways to form melds from it."""
    mask = 0
    for code in cards:
        mask |= BIT[parse_card(code)]
    return deadwood_of(mask, rules or _STANDARD)


_STANDARD = RuleSet()
