"""Events: immutable facts in the past tense, with the JSON form stored in PostgreSQL.

Card fields hold card codes (strings) exactly as stored, so an event object and its dict carry
the same information; ``event_from_dict`` normalises input spellings ("10H" -> "TH") and upcasts
older payloads by filling fields added later with their defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from .cards import CODES, parse_card


@dataclass(frozen=True, slots=True)
class Event:
    type: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        for name in _FIELD_NAMES[type(self)]:
            value = getattr(self, name)
            if name in _OPTIONAL_FIELDS and not value:
                continue  # no seeded shuffle, no chips at stake: the old shape
            out[name] = _plain(value)
        return out


#: Fields left out of an event's dict while empty: seeded shuffles, a table's buy-in.
_OPTIONAL_FIELDS = frozenset(
    {
        "next_server_seed",
        "next_server_seed_hash",
        "server_seed",
        "client_seeds",
        "buy_in",
        "fee_percent",
    }
)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclass(frozen=True, slots=True)
class GameStarted(Event):
    type: ClassVar[str] = "game_started"
    rules: dict[str, Any]
    seats: tuple[dict[str, Any], ...]
    first_dealer: int
    rated: bool = True  # a casual match (False) changes no rating; older events were rated
    # The server's commitment to the seed of the first deal (sha256 of the seed's hex text),
    # and the seed itself, redacted from every reader until the match is over.
    next_server_seed_hash: str = ""
    next_server_seed: str = ""
    # Table stakes: the chips each seat put in escrow at the start (0: nothing at stake). Nobody
    # loses more than this over the match (``scoring.table_stakes``).
    buy_in: int = 0
    # The room's service fee: this percent of each person's winnings goes to the house at the
    # settlement (0: none).
    fee_percent: int = 0


@dataclass(frozen=True, slots=True)
class RoundStarted(Event):
    type: ClassVar[str] = "round_started"
    round: int
    dealer: int
    hands: tuple[tuple[str, ...], ...]
    stock: tuple[str, ...]
    salt: str = ""
    deck_commitment: str = ""
    # Seeded shuffles (docs/architecture.md "Verifiable games"): the committed server seed
    # (hidden like the stock while the round runs) and the client seed of each seat ("" when
    # none was sent).
    server_seed: str = ""
    client_seeds: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Drew(Event):
    type: ClassVar[str] = "drew"
    seat: int
    card: str


@dataclass(frozen=True, slots=True)
class TookDiscard(Event):
    type: ClassVar[str] = "took_discard"
    seat: int
    card: str
    meld_id: int
    kind: str
    cards: tuple[str, ...]
    lay_off: bool = False


@dataclass(frozen=True, slots=True)
class Melded(Event):
    type: ClassVar[str] = "melded"
    seat: int
    meld_id: int
    kind: str
    cards: tuple[str, ...]
    hidden: bool = False


@dataclass(frozen=True, slots=True)
class LaidOff(Event):
    type: ClassVar[str] = "laid_off"
    seat: int
    card: str
    meld_id: int


@dataclass(frozen=True, slots=True)
class Discarded(Event):
    type: ClassVar[str] = "discarded"
    seat: int
    card: str


@dataclass(frozen=True, slots=True)
class DrawCalled(Event):
    type: ClassVar[str] = "draw_called"
    seat: int


@dataclass(frozen=True, slots=True)
class Challenged(Event):
    type: ClassVar[str] = "challenged"
    seat: int


@dataclass(frozen=True, slots=True)
class Folded(Event):
    type: ClassVar[str] = "folded"
    seat: int


@dataclass(frozen=True, slots=True)
class TurnTimedOut(Event):
    type: ClassVar[str] = "turn_timed_out"
    seat: int


@dataclass(frozen=True, slots=True)
class Resigned(Event):
    """The seat's player left the match: the server plays the seat from now on (docs/rules.md
    "Time"), and the player is placed last in the result."""

    type: ClassVar[str] = "resigned"
    seat: int


@dataclass(frozen=True, slots=True)
class Aborted(Event):
    """The match was called off before its end (a table idle too long): no result, no rating."""

    type: ClassVar[str] = "aborted"
    reason: str


@dataclass(frozen=True, slots=True)
class ClientSeedSet(Event):
    """A seat's seed for the next deal's shuffle (the latest before the deal counts)."""

    type: ClassVar[str] = "client_seed_set"
    seat: int
    client_seed: str


@dataclass(frozen=True, slots=True)
class RoundEnded(Event):
    type: ClassVar[str] = "round_ended"
    round: int
    reason: str
    winner: int | None
    deadwood: tuple[int, ...]
    burned: tuple[int, ...]
    payouts: tuple[int, ...]
    # The ended round's server seed, revealed; the commitment to the next deal's (and that seed,
    # redacted from every reader until the match is over).
    server_seed: str = ""
    next_server_seed_hash: str = ""
    next_server_seed: str = ""


@dataclass(frozen=True, slots=True)
class MatchEnded(Event):
    type: ClassVar[str] = "match_ended"
    winner: int
    round_wins: tuple[int, ...] = field(default=(0, 0, 0))


EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        GameStarted,
        RoundStarted,
        Drew,
        TookDiscard,
        Melded,
        LaidOff,
        Discarded,
        DrawCalled,
        Challenged,
        Folded,
        TurnTimedOut,
        Resigned,
        Aborted,
        ClientSeedSet,
        RoundEnded,
        MatchEnded,
    )
}
_FIELD_NAMES: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in fields(cls)) for cls in EVENT_TYPES.values()
}
_CARD_FIELDS = {"card"}
_CARD_LIST_FIELDS = {"cards", "stock"}


def _code(value: Any) -> str:
    return CODES[parse_card(value)]


def _convert(name: str, value: Any) -> Any:
    if name in _CARD_FIELDS:
        return _code(value)
    if name in _CARD_LIST_FIELDS:
        return tuple(_code(v) for v in value)
    if name == "hands":
        return tuple(tuple(_code(v) for v in hand) for hand in value)
    if name == "seats":
        return tuple(
            dict(s) if isinstance(s, dict) else {"kind": "user", "name": str(s)} for s in value
        )
    if name == "rules":
        return value
    if isinstance(value, list):
        return tuple(value)
    return value


def event_from_dict(data: dict[str, Any] | Event) -> Event:
    """The event object for a stored or hand-written dict (idempotent on event objects)."""
    if isinstance(data, Event):
        return data
    try:
        cls = EVENT_TYPES[data["type"]]
    except (KeyError, TypeError):
        raise ValueError(f"not an event: {data!r}") from None
    kwargs = {}
    for name in _FIELD_NAMES[cls]:
        if name in data:
            kwargs[name] = _convert(name, data[name])
    if cls is GameStarted:
        kwargs.setdefault("rules", {})
        kwargs.setdefault("seats", tuple({"kind": "user"} for _ in range(3)))
        kwargs.setdefault("first_dealer", 0)
    elif cls is RoundStarted and "dealer" not in kwargs and "hands" in kwargs:
        sizes = [len(h) for h in kwargs["hands"]]
        kwargs["dealer"] = sizes.index(max(sizes))
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ValueError(f"bad {cls.type} event: {exc}") from None


def event_to_dict(event: Event | dict[str, Any]) -> dict[str, Any]:
    """The JSON-ready dict of an event; ``"type"`` is the discriminator."""
    if isinstance(event, dict):
        return event_from_dict(event).to_dict()
    return event.to_dict()
