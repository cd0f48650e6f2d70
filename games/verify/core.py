"""What a player can check without trusting the server (docs/architecture.md, "Verifiable games").

Pure: the rules core, the standard library and (for the seal only) ``cryptography``. No Django,
no database: the server's ``/audit`` and ``manage.py verify_events`` and the offline verifier
(``python -m games.verify``) all call these same functions, so they cannot disagree.

- ``event_hash``: the chain link (``sha256(prev_hash + canonical JSON of the envelope)``).
- ``check_chain``: every link of a list of events.
- ``check_legality``: a re-fold from the first event; every player event is what ``decide``
  gives for the command it records, every automatic one what ``decide``, ``deal`` or
  ``time_out`` gives, every deal matches its commitment, and the 52 cards are each in exactly
  one place after every event.
- ``seal_payload`` / ``check_seal``: the Ed25519 seal of a finished match.
- ``verify_export``: all of it, over one exported document (``GET /games/{id}/export``).

Each check answers ``None`` (sound) or a ``Failure`` naming the first bad seq and why.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from games.rules import (
    GameState,
    IllegalMove,
    abort,
    decide,
    deck_commitment,
    event_from_dict,
    event_to_dict,
    evolve,
    moves_at_once,
    next_dealer,
    resign,
    seeded_deck,
    set_client_seed,
    time_out,
)
from games.rules.cards import CODES

GENESIS_HASH = "0" * 64
ALL_CARDS = (1 << 52) - 1
SYSTEM_ACTOR = "system"
#: Keys the server adds to an event's data outside the rules core (random, so no re-fold can
#: reproduce them): hashed with the event, ignored when comparing it with what the rules give.
SERVER_EXTRAS = frozenset({"nonce", "next_server_seed", "next_server_seed_hash"})
#: The ``format`` of a game export (``GET /games/{id}/export``).
EXPORT_FORMAT = "tongits-export/1"


def canonical_json(value: Any) -> str:
    """The one text form that is hashed and signed: sorted keys, no spaces, ASCII only."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def event_hash(
    prev_hash: str, *, game_id: str, seq: int, actor: str, recorded_at: str, data: Any
) -> str:
    """The chain link of one event: binds its content (nonce included), position, author and
    time (``recorded_at`` as ISO text, exactly as hashed) to the past."""
    envelope = {
        "game": str(game_id),
        "seq": seq,
        "actor": actor,
        "recorded_at": recorded_at,
        "data": data,
    }
    return sha256_hex(prev_hash + canonical_json(envelope))


def rules_digest(rules: Mapping[str, Any]) -> str:
    return sha256_hex(canonical_json(rules))


@dataclass(frozen=True)
class Failure:
    """The first thing that does not hold: the seq it concerns (None: the game as a whole)."""

    seq: int | None
    check: str  # "chain", "legality", "commitment", "cards", "seal", "format"
    reason: str

    def __str__(self) -> str:
        where = f"seq {self.seq}" if self.seq is not None else "the game"
        return f"{self.check} fails at {where}: {self.reason}"


@dataclass(frozen=True)
class Record:
    """One stored event as the checks need it."""

    seq: int
    type: str
    actor: str
    recorded_at: str
    prev_hash: str
    hash: str
    data: dict[str, Any]


# ---------------------------------------------------------------- chain


def check_chain(game_id: str, records: Sequence[Record]) -> Failure | None:
    """Consecutive seqs from 1, each ``prev_hash`` the previous ``hash``, each hash recomputed."""
    prev = GENESIS_HASH
    for expected_seq, rec in enumerate(records, start=1):
        if rec.seq != expected_seq:
            return Failure(min(rec.seq, expected_seq), "chain", f"seq {expected_seq} is missing")
        if rec.prev_hash != prev:
            return Failure(rec.seq, "chain", "prev_hash is not the previous event's hash")
        data_type = rec.data.get("type") if isinstance(rec.data, dict) else None
        if rec.type != data_type:
            return Failure(rec.seq, "chain", "the type column disagrees with the data")
        digest = event_hash(
            prev,
            game_id=game_id,
            seq=rec.seq,
            actor=rec.actor,
            recorded_at=rec.recorded_at,
            data=rec.data,
        )
        if digest != rec.hash:
            return Failure(rec.seq, "chain", "the hash does not match the event")
        prev = rec.hash
    return None


# ---------------------------------------------------------------- legality


def actor_of_seat(spec: Mapping[str, Any]) -> str:
    """The actor label a seat's own commands are recorded with (``games.application.resolve``)."""
    if spec.get("kind") == "bot":
        return f"bot:{spec.get('level', 'normal')}"
    return f"user:{spec.get('user_id')}"


def command_of(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """The command a player event records (None: the event is not a player's command)."""
    kind = data.get("type")
    if kind == "drew":
        return {"type": "draw"}
    if kind == "took_discard":
        if data.get("lay_off"):
            return {"type": "take_discard", "meld_id": data.get("meld_id")}
        cards = [c for c in data.get("cards", []) if c != data.get("card")]
        return {"type": "take_discard", "cards": cards}
    if kind == "melded":
        cards = list(data.get("cards", []))
        return {"type": "meld", "cards": cards, "hidden": bool(data.get("hidden"))}
    if kind == "laid_off":
        return {"type": "lay_off", "card": data.get("card"), "meld_id": data.get("meld_id")}
    if kind == "discarded":
        return {"type": "discard", "card": data.get("card")}
    if kind == "draw_called":
        return {"type": "call_draw"}
    if kind == "challenged":
        return {"type": "challenge"}
    if kind == "folded":
        return {"type": "fold"}
    return None


def _normal(data: Mapping[str, Any]) -> dict[str, Any]:
    """An event's rules content: server extras dropped, upcast and spelled as the core does."""
    return event_to_dict({k: v for k, v in data.items() if k not in SERVER_EXTRAS})


def _cards_fault(state: GameState) -> str | None:
    """None when the 52 cards are each in exactly one place (hands, stock, discards, melds)."""
    if state.round == 0:
        return None
    masks = list(state.hands)
    for card in state.stock:
        masks.append(1 << card)
    for card in state.discard:
        masks.append(1 << card)
    masks.extend(m.mask for m in state.melds)
    seen = 0
    total = 0
    for mask in masks:
        seen |= mask
        total += mask.bit_count()
    if seen != ALL_CARDS:
        return f"{52 - seen.bit_count()} card(s) are nowhere"
    if total != 52:
        return f"{total - 52} card(s) are in two places at once"
    return None


def _deal_shape_fault(state: GameState, data: Mapping[str, Any]) -> str | None:
    """Why a deal is not the next round's, by the dealer the rules name, of 13/12/12 cards and
    15 in the stock (None: it is)."""
    if state.phase not in ("dealing", "round_over"):
        return f"a deal in phase {state.phase}"
    if data.get("round") != state.round + 1:
        return f"round {data.get('round')} dealt after round {state.round}"
    dealer = next_dealer(state)
    if data.get("dealer") != dealer:
        return f"dealer {data.get('dealer')}, but the rules make seat {dealer} the dealer"
    hands, stock = data.get("hands"), data.get("stock")
    if not isinstance(hands, list) or len(hands) != 3 or not isinstance(stock, list):
        return "the deal has no three hands and a stock"
    sizes = [len(h) for h in hands]
    want = [12, 12, 12]
    want[dealer] = 13
    if sizes != want or len(stock) != 15:
        return f"hands of {sizes} and a stock of {len(stock)} cards"
    return None


def _seeds_fault(state: GameState, data: Mapping[str, Any], game_id: str) -> str | None:
    """Why a deal is not the shuffle of the server seed committed to before it and the three
    client seeds it records (None: it is)."""
    seed = data.get("server_seed")
    if not isinstance(seed, str) or sha256_hex(seed) != state.next_server_seed_hash:
        return "the server seed is not the one committed to before the deal"
    seeds = data.get("client_seeds")
    if not isinstance(seeds, list) or len(seeds) != 3 or not all(isinstance(c, str) for c in seeds):
        return "the deal does not record three client seeds"
    hands, stock, dealer = data["hands"], data["stock"], next_dealer(state)
    deck = [CODES[c] for c in seeded_deck(seed, game_id, state.round + 1, seeds)]
    order = [deck[:13], deck[13:25], deck[25:37]]
    if any(hands[(dealer + k) % 3] != order[k] for k in range(3)) or stock != deck[37:]:
        return "the deal is not the shuffle of its seeds"
    return None


def check_deal(state: GameState, data: Mapping[str, Any], game_id: str) -> str | None:
    """Why a ``round_started`` is not the deal the rules give here (None: it is). Where the
    server committed to a seed for it, the deal must be that seed's shuffle."""
    shape = _deal_shape_fault(state, data)
    if shape is not None:
        return shape
    try:
        commitment = deck_commitment(str(data.get("salt", "")), data["hands"], data["stock"])
    except TypeError:
        return "the deal's cards are not card codes"
    if commitment != data.get("deck_commitment"):
        return "the deck commitment does not match the salt and the deal"
    if state.next_server_seed_hash:
        return _seeds_fault(state, data, game_id)
    return None


def _decided(command: dict[str, Any], state: GameState, seat: int, _data: Any) -> list:
    return decide(state, seat, command)


#: Events a seat causes that record no game command: what the rules give for them.
SEAT_STEPS: dict[str, Callable[[GameState, int, Mapping[str, Any]], list]] = {
    "client_seed_set": lambda s, seat, d: [set_client_seed(s, seat, d.get("client_seed"))],
    "resigned": lambda s, seat, _d: resign(s, seat),
}
#: Events only the server writes, and what the rules give for them.
SYSTEM_STEPS: dict[str, Callable[[GameState, Mapping[str, Any]], list]] = {
    "turn_timed_out": lambda s, _d: time_out(s),
    "aborted": lambda s, d: abort(s, str(d.get("reason", ""))),
}


@dataclass
class Refold:
    """A re-fold in progress: the records, the index of the next one to check and the state
    before it."""

    records: Sequence[Record]
    game_id: str
    state: GameState
    i: int = 1

    def replay(self, actor: str, expected: Sequence[Any]) -> Failure | None:
        """The records from ``i`` on are ``expected``, each by ``actor``, and leave the 52 cards
        each in one place; the re-fold moves past them."""
        records, i, n = self.records, self.i, len(self.records)
        for k, event in enumerate(expected):
            want = event_to_dict(event)
            if i + k >= n:
                return Failure(records[i].seq + k, "legality", f"missing {want['type']}")
            got = records[i + k]
            if got.actor != actor:
                return Failure(got.seq, "legality", f"actor {got.actor}, expected {actor}")
            if not _same_event(got.data, want):
                return Failure(got.seq, "legality", f"the rules give {canonical_json(want)}")
            self.state = evolve(self.state, got.data)
            cards = _cards_fault(self.state)
            if cards is not None:
                return Failure(got.seq, "cards", cards)
        self.i += len(expected)
        return None


def _same_event(data: Mapping[str, Any], want: dict[str, Any]) -> bool:
    """Whether a stored event's rules content is ``want``."""
    stripped = {k: v for k, v in data.items() if k not in SERVER_EXTRAS}
    try:  # the stored form is the core's own, but an old event may need its upcast
        return stripped == want or _normal(stripped) == want
    except ValueError:
        return False


#: What one record leads the re-fold to expect: the actor and the events the rules give from it
#: on, or the Failure that stops it.
Expectation = tuple[str, list] | Failure


def _expect_by_server(state: GameState, rec: Record) -> Expectation:
    """An event only the server writes (``SYSTEM_STEPS``)."""
    kind = rec.data["type"]
    if rec.actor != SYSTEM_ACTOR:
        return Failure(rec.seq, "legality", f"{kind} by {rec.actor}, not the server")
    try:
        return SYSTEM_ACTOR, SYSTEM_STEPS[kind](state, rec.data)
    except IllegalMove as exc:
        return Failure(rec.seq, "legality", f"no {kind} is possible here ({exc.code})")


def _expect_of_seat(
    state: GameState, rec: Record, step: Callable[[GameState, int, Any], list], label: str
) -> Expectation:
    """An event a seat causes: by that seat's actor, what ``step`` gives for it."""
    seat = rec.data.get("seat")
    if not isinstance(seat, int) or not 0 <= seat <= 2:
        return Failure(rec.seq, "legality", f"seat {seat!r} is not a seat")
    actor = actor_of_seat(state.seats[seat])
    if rec.actor != actor:
        return Failure(rec.seq, "legality", f"actor {rec.actor} does not play seat {seat}")
    try:
        return actor, step(state, seat, rec.data)
    except IllegalMove as exc:
        return Failure(rec.seq, "legality", f"{label} is illegal: {exc.code}")


def _expect_seat_step(state: GameState, rec: Record) -> Expectation:
    """A seat's event that records no game command (``SEAT_STEPS``)."""
    kind = rec.data["type"]
    return _expect_of_seat(state, rec, SEAT_STEPS[kind], kind)


def _expect_command(state: GameState, rec: Record) -> Expectation:
    """A seat's command, as ``decide`` plays it; any other event has no cause here."""
    command = command_of(rec.data)
    if command is None:
        kind = rec.data.get("type")
        return Failure(rec.seq, "legality", f"{kind} without the command that causes it")
    return _expect_of_seat(state, rec, partial(_decided, command), command["type"])


#: Per event type, what a record of it leads the re-fold to expect (a command otherwise).
EXPECTATIONS: dict[str, Callable[[GameState, Record], Expectation]] = {
    **dict.fromkeys(SYSTEM_STEPS, _expect_by_server),
    **dict.fromkeys(SEAT_STEPS, _expect_seat_step),
}


def _check_deal_event(refold: Refold, rec: Record) -> Failure | None:
    """A ``round_started``: by the server, it folds, keeps the cards whole and is the deal the
    rules give (``check_deal``)."""
    if rec.actor != SYSTEM_ACTOR:
        return Failure(rec.seq, "legality", f"a deal by {rec.actor}, not by the server")
    state = refold.state
    try:
        dealt = evolve(state, rec.data)
    except (ValueError, TypeError, KeyError) as exc:
        return Failure(rec.seq, "legality", f"the deal does not fold: {exc}")
    cards = _cards_fault(dealt) if state.phase in ("dealing", "round_over") else None
    if cards is not None:
        return Failure(rec.seq, "cards", cards)
    fault = check_deal(state, rec.data, refold.game_id)
    if fault is not None:
        check = "commitment" if "commit" in fault or "seed" in fault else "legality"
        return Failure(rec.seq, check, fault)
    refold.state = dealt
    refold.i += 1
    return None


def _check_play(refold: Refold, rec: Record) -> Failure | None:
    """Any other event: it and those after it are what the rules give for it."""
    owed = moves_at_once(refold.state) if rec.actor == SYSTEM_ACTOR else []
    kind = rec.data.get("type")
    if owed and kind not in SYSTEM_STEPS:
        # A resigned seat to act is played by the server at once (docs/rules.md "Time").
        return refold.replay(SYSTEM_ACTOR, owed)
    expectation = EXPECTATIONS.get(kind, _expect_command)(refold.state, rec)
    if isinstance(expectation, Failure):
        return expectation
    return refold.replay(*expectation)


#: Per event type, its check (``_check_play`` for every type not listed).
CHECKS: dict[str, Callable[[Refold, Record], Failure | None]] = {
    "round_started": _check_deal_event,
}


def _started(first: Record) -> GameState | Failure:
    """The state ``game_started`` folds to: three seats and a first dealer among them."""
    if first.data.get("type") != "game_started":
        return Failure(first.seq, "legality", "the first event is not game_started")
    try:
        state = evolve(None, first.data)
    except (ValueError, TypeError, KeyError) as exc:
        return Failure(first.seq, "legality", f"game_started does not fold: {exc}")
    if len(state.seats) != 3 or state.first_dealer not in (0, 1, 2):
        return Failure(first.seq, "legality", "not three seats and a first dealer among them")
    return state


def check_legality(records: Sequence[Record], game_id: str) -> Failure | None:
    """Re-fold the game from its first event and check that each event is what the rules give.

    Player events: the seat's own actor, and exactly the events ``decide`` gives for the command
    the event records, in the state before it (a command's automatic consequences, an auto-fold,
    the round's and the match's end, follow it as ``decide`` lists them). ``turn_timed_out``:
    by ``system``, followed by what ``time_out`` plays. ``round_started``: by ``system``, the
    next round, the dealer the rules name, 13/12/12 cards and 15 in the stock, the commitment.
    After every event the 52 cards are each in exactly one place. Each event type's check is in
    ``CHECKS`` (and what it expects in ``EXPECTATIONS``).
    """
    if not records:
        return Failure(None, "legality", "the game has no events")
    started = _started(records[0])
    if isinstance(started, Failure):
        return started
    refold = Refold(records, game_id, started)
    while refold.i < len(records):
        rec = records[refold.i]
        try:
            event_from_dict(rec.data)
        except ValueError as exc:
            return Failure(rec.seq, "legality", str(exc))
        failure = CHECKS.get(rec.data.get("type"), _check_play)(refold, rec)
        if failure is not None:
            return failure
    return None


# ---------------------------------------------------------------- seal


def seal_payload(game_id: str, version: int, last_hash: str, rules: Mapping[str, Any]) -> str:
    """The text a seal signs: canonical JSON of {game, version, hash, rules_digest}."""
    return canonical_json(
        {
            "game": str(game_id),
            "version": version,
            "hash": last_hash,
            "rules_digest": rules_digest(rules),
        }
    )


def key_id(public_key_hex: str) -> str:
    """A public key's id: the first 16 hex digits of sha256 of its raw 32 bytes' hex text."""
    return sha256_hex(public_key_hex)[:16]


def verify_signature(public_key_hex: str, signature_hex: str, message: str) -> bool:
    """Ed25519 (``cryptography``, imported here only: the rest of the checks need no library)."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex))
        key.verify(bytes.fromhex(signature_hex), message.encode("ascii"))
    except (InvalidSignature, ValueError):
        return False
    return True


def check_seal(
    game_id: str,
    records: Sequence[Record],
    rules: Mapping[str, Any],
    seal: Mapping[str, Any] | None,
    public_keys: Mapping[str, str],
) -> Failure | None:
    """The seal signs this stream's last event: version, hash and rules, by a listed key."""
    if seal is None:
        return Failure(None, "seal", "the finished match has no seal")
    last = records[-1] if records else None
    version = last.seq if last else 0
    if seal.get("version") != version or (last and seal.get("hash") != last.hash):
        return Failure(version or None, "seal", "the seal is for another version or hash")
    public = public_keys.get(str(seal.get("key_id")))
    if public is None:
        return Failure(None, "seal", f"unknown key id {seal.get('key_id')!r}")
    message = seal_payload(game_id, version, last.hash if last else GENESIS_HASH, rules)
    if not verify_signature(public, str(seal.get("signature", "")), message):
        return Failure(version or None, "seal", "the signature does not verify")
    return None


# ---------------------------------------------------------------- a whole export


def records_of(events: Iterable[Mapping[str, Any]]) -> list[Record]:
    return [
        Record(
            seq=e["seq"],
            type=e["type"],
            actor=e["actor"],
            recorded_at=e["recorded_at"],
            prev_hash=e["prev_hash"],
            hash=e["hash"],
            data=e["data"],
        )
        for e in events
    ]


def verify_export(
    doc: Mapping[str, Any], public_keys: Mapping[str, str] | None = None
) -> Failure | None:
    """Chain, receipts, commitments, legality and seal of one exported game.

    ``public_keys`` (key id -> hex): the keys to trust; by default the export's own ``keys``
    (then the seal proves only integrity since signing, not who signed: pass the server's key).
    """
    if doc.get("format") != EXPORT_FORMAT:
        return Failure(None, "format", f"not a {EXPORT_FORMAT} document")
    if not doc.get("revealed"):
        return Failure(None, "format", "the match is not over: the export is redacted")
    game_id = str(doc["game"])
    try:
        records = records_of(doc["events"])
    except (KeyError, TypeError) as exc:
        return Failure(None, "format", f"an event lacks {exc}")
    failure = check_chain(game_id, records)
    if failure is None and records and doc.get("version") != records[-1].seq:
        failure = Failure(records[-1].seq, "chain", "the stream ends before the game's version")
    if failure is None and records:
        started = records[0].data.get("rules")
        if started != doc.get("rules"):
            failure = Failure(records[0].seq, "format", "rules differ from game_started's")
    if failure is None:
        failure = check_legality(records, game_id)
    if failure is None:
        keys = (
            dict(public_keys)
            if public_keys
            else {k["id"]: k["public_key"] for k in doc.get("keys", [])}
        )
        failure = check_seal(game_id, records, doc.get("rules", {}), doc.get("seal"), keys)
    return failure
