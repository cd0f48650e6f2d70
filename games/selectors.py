"""Reads of games (HackSoft styleguide: selectors read, services write, presenters shape).

Every answer about a running game is shaped for one seat by the rules core (``player_view``,
``redact_event``) through ``games.presenters``: this module decides *who* is asking (``access``,
the one rule the API and the live streams share) and what is read, never *what* a seat may see.
The game row's ``snapshot`` holds hands, stock and salt, so it never leaves this module
unredacted. The scheduler's own queries live beside it, in ``games.scheduling``.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Prefetch, QuerySet
from django.utils.translation import gettext as _

from chips import selectors as chips_selectors
from games import presenters as present
from games import seal, stakes, store, verify
from games.application import seat_of_user
from games.errors import (
    BadStep,
    NoRematch,
    NotAPlayer,
    NotFinished,
    NotStarted,
    TableNotFound,
)
from games.models import Game, Rematch, Seat
from games.players import upcast_event
from games.rules import (
    GameState,
    RuleSet,
    deck_commitment,
    fold,
    player_view,
    redact_event,
    state_to_dict,
)
from games.rules.bots import LEVEL_INFO
from ops import gauges

FEED_LIMIT = 1000


# ---------------------------------------------------------------- tables


def _with_seats(qs: QuerySet[Game]) -> QuerySet[Game]:
    return qs.select_related("created_by", "rematch", "rematch_source").prefetch_related(
        Prefetch("seats", queryset=Seat.objects.select_related("user").order_by("index"))
    )


def table_list(
    *,
    status: str | None = Game.Status.WAITING,
    limit: int = 50,
    offset: int = 0,
    watch: bool = False,
) -> list[Game]:
    """Tables, newest first; by default the open ones (waiting for players). ``watch``: the
    running public tables instead (the watch list), whatever ``status`` says."""
    qs = Game.objects.all()
    if watch:
        qs = qs.filter(status=Game.Status.ACTIVE, visibility=Game.Visibility.PUBLIC)
    elif status:
        qs = qs.filter(status=status)
    return list(_with_seats(qs.order_by("-created_at", "id"))[offset : offset + limit])


def spectators_gauge(game_id: uuid.UUID | str) -> str:
    """The gauge (``ops.gauges``) of a game's open spectator streams (``games.live.streams``)."""
    return f"spectators:{game_id}"


def spectator_counts(games: list[Game]) -> dict[Any, int]:
    """How many spectator streams are open on each of these tables, across the web processes
    (``ops.gauges``: counted every few seconds, not to the millisecond); only a started table
    that may be watched is looked up."""
    watched = [g.pk for g in games if g.visibility in WATCHABLE and g.status != Game.Status.WAITING]
    found = gauges.read([spectators_gauge(pk) for pk in watched])
    counts = dict.fromkeys((g.pk for g in games), 0)
    counts.update({pk: found.get(spectators_gauge(pk), 0) for pk in watched})
    return counts


def table_options() -> dict[str, Any]:
    """What a new table may be created with: the rule presets (every option of each), and the
    bot levels, weakest first, each with the rating it earned against the others (so a player
    can set a level against their own rating)."""
    return {
        "presets": [
            {"name": name, "rules": RuleSet.preset(name).to_dict()} for name in RuleSet.PRESETS
        ],
        "bot_levels": [
            {
                "level": level.name,
                "summary": level.summary,
                "rating": level.rating,
                "mu": level.mu,
                "sigma": level.sigma,
            }
            for level in LEVEL_INFO
        ],
    }


def table_get(*, game_id: uuid.UUID | str) -> Game:
    try:
        return _with_seats(Game.objects.all()).get(pk=game_id)
    except (Game.DoesNotExist, ValueError, ValidationError):
        raise TableNotFound() from None


# ---------------------------------------------------------------- who is asking


def seat_of(state: GameState, user: Any) -> int | None:
    """The seat the user plays at this game, from ``game_started`` (the truth, not the rows)."""
    return seat_of_user(state, getattr(user, "pk", None))


@dataclass(frozen=True)
class Reader:
    """Who reads a game, and what they may see of it (``reader``)."""

    state: GameState  # at the version this reader may see: behind the game for a delayed spectator
    seat: int | None  # None: staff or a spectator (the rules core's view for nobody)
    reveal: bool  # the match is over: everything face up
    spectator: bool  # neither a player nor staff: a watcher of an unlisted or public table
    behind: bool  # ``state`` is behind the game (a spectator of a delayed table, while it runs)


WATCHABLE = (Game.Visibility.UNLISTED, Game.Visibility.PUBLIC)


def spectator_version(version: int, status: str, delay: int) -> int:
    """The version a spectator of a table with ``spectator_delay`` ``delay`` sees of the game at
    ``version``: ``delay`` events behind while it runs (never before ``game_started``), all of
    it otherwise."""
    if delay and status == Game.Status.ACTIVE:
        return max(1, version - delay)
    return version


def reader(game: store.Head, user: Any) -> Reader:
    """Who is asking, or an error: players see their own seat's view while the match runs and
    everything once it is finished; staff may read any game (the view for nobody while it runs,
    whole after); anyone else may watch an unlisted or public table once it started, as staff
    does, but ``spectator_delay`` events behind while it runs; nobody else may read it."""
    state = game.state()
    if state is None:
        raise NotStarted()
    seat = seat_of(state, user)
    finished = game.status == Game.Status.FINISHED
    spectator = seat is None and not getattr(user, "is_staff", False)
    if spectator and game.visibility not in WATCHABLE:
        raise NotAPlayer()
    behind = False
    if spectator:
        version = spectator_version(state.version, game.status, game.spectator_delay)
        if version < state.version:
            state, behind = past_state(game.game_id, version), True
    return Reader(state, seat, finished, spectator, behind)


def access(game: store.Head, user: Any) -> tuple[GameState, int | None, bool]:
    """(state, the caller's seat, reveal all?) or an error (``reader``); the state is the one
    the caller may see (a delayed spectator's is behind the game)."""
    found = reader(game, user)
    return found.state, found.seat, found.reveal


def after_the_match(game: store.Head, user: Any) -> Reader:
    """``reader``, and 409 ``not_finished`` for a spectator while the match is not over
    (replay, audit and export read the whole stream: a spectator's only once it is done)."""
    found = reader(game, user)
    if found.spectator and game.status in (Game.Status.ACTIVE, Game.Status.WAITING):
        raise NotFinished()
    return found


class PastStates:
    """States of games at earlier versions (a delayed spectator's view), per game the last few:
    the next one is folded on from the nearest earlier one with the events between (from
    ``kept`` rows when they hold them: no query), so a spectator following the game costs a
    fold of the new events, not of the whole stream."""

    def __init__(self, games: int = 256, per_game: int = 8) -> None:
        self.games, self.per_game = games, per_game
        self._states: OrderedDict[uuid.UUID, dict[int, GameState]] = OrderedDict()
        self._lock = threading.Lock()

    def _nearest(self, game_id: uuid.UUID, version: int) -> GameState | None:
        with self._lock:
            known = self._states.get(game_id)
            if not known:
                return None
            self._states.move_to_end(game_id)
            before = [v for v in known if v <= version]
            return known[max(before)] if before else None

    def _keep(self, game_id: uuid.UUID, state: GameState) -> None:
        with self._lock:
            known = self._states.setdefault(game_id, {})
            self._states.move_to_end(game_id)
            known[state.version] = state
            while len(known) > self.per_game:
                del known[min(known)]
            while len(self._states) > self.games:
                self._states.popitem(last=False)

    def get(
        self, game_id: uuid.UUID, version: int, kept: Mapping[int, Any] | None = None
    ) -> GameState:
        base = self._nearest(game_id, version)
        if base is not None and base.version == version:
            return base
        start = base.version if base is not None else 0
        wanted = range(start + 1, version + 1)
        if kept is not None and all(seq in kept for seq in wanted):
            state = fold([kept[seq].data for seq in wanted], base)
        elif base is not None:
            state = fold(store.event_data(game_id, after=start, upto=version), base)
        else:
            state = store.fold_from_zero(game_id, upto=version)
        self._keep(game_id, state)
        return state

    def clear(self) -> None:
        with self._lock:
            self._states.clear()


past_states = PastStates()


def past_state(
    game_id: uuid.UUID | str, version: int, kept: Mapping[int, Any] | None = None
) -> GameState:
    """The game's state after its first ``version`` events (``PastStates``)."""
    return past_states.get(store.parse_id(game_id), version, kept)


# ---------------------------------------------------------------- game view


def game_view(*, game_id: uuid.UUID | str, user: Any) -> dict[str, Any]:
    """GET /games/{id}: the game as the caller's seat sees it (after the match: revealed)."""
    game = store.read(game_id)
    return _view(game, reader(game, user))


def _view(game: store.Head, found: Reader) -> dict[str, Any]:
    """The reader's view frame; a delayed spectator's without the live turn's deadline."""
    deadline = None if found.behind else game.turn_deadline
    return present.view_frame(
        game.game_id, game.status, deadline, game.settled_at, found.state, found.seat
    )


# ---------------------------------------------------------------- events


def event_feed(
    *,
    game_id: uuid.UUID | str,
    user: Any,
    after: int = 0,
    limit: int = FEED_LIMIT,
    with_game: bool = False,
) -> dict[str, Any]:
    """Events with seq > ``after`` redacted for the caller (an empty list at once if none);
    ``with_game`` adds the caller's view at that version under ``game`` (a long-poll's answer,
    as a stream follows its events with a ``view`` frame)."""
    game = store.read(game_id)
    found = reader(game, user)
    state, seat, reveal = found.state, found.seat, found.reveal
    rows = store.load_events(game.game_id, after=after, upto=state.version, limit=limit)
    answer: dict[str, Any] = {
        "version": state.version,
        "seat": seat,
        "events": [present.feed_item(row, seat, reveal) for row in rows],
        "more": bool(rows) and rows[-1].seq < state.version,
    }
    if with_game:
        answer["game"] = _view(game, found)
    return answer


def seat_feed(*, game_id: uuid.UUID | str, user: Any) -> dict[str, Any]:
    """Every event of a game the user played, as their seat saw it, even after the match: what
    an export of their data holds (never the other seats' hidden cards)."""
    game = store.read(game_id)
    state, seat, _ = access(game, user)
    rows = store.load_events(game.game_id, upto=state.version)
    return {
        "game_id": str(game.game_id),
        "status": game.status,
        "seat": seat,
        "seats": present.public_seats(state),
        "version": state.version,
        "events": [present.feed_item(row, seat, False) for row in rows],
    }


def games_of_user(*, user: Any) -> list[Game]:
    """Every table the user sits at (or sat at, for started games), oldest first."""
    seated = Seat.objects.filter(user=user).values("game_id")
    return list(_with_seats(Game.objects.filter(pk__in=seated)).order_by("created_at", "id"))


# ---------------------------------------------------------------- replay and audit


def replay(*, game_id: uuid.UUID | str, user: Any, at: int | None = None) -> dict[str, Any]:
    """The game after its first ``at`` events: the caller's view, or all of it after the match
    (a spectator's only once it is over)."""
    game = store.read(game_id)
    found = after_the_match(game, user)
    state, seat, reveal = found.state, found.seat, found.reveal
    at = state.version if at is None else at
    if not 1 <= at <= state.version:
        raise BadStep(
            _("'at' must be between 1 and %(version)s.") % {"version": state.version},
            extra={"version": state.version},
        )
    past = state if at == state.version else store.fold_from_zero(game.game_id, upto=at)
    return {
        "at": at,
        "version": state.version,
        "seat": seat,
        "revealed": reveal,
        "view": present.revealed_view(past) if reveal else player_view(past, seat),
    }


def soundness(game_id: uuid.UUID, *, finished: bool) -> dict[str, Any]:
    """The checks of docs/architecture.md "Verifiable games" over the stored stream, from its
    first event (``games.verify``, the same code as the offline verifier): the chain against
    the head, the legality of every event (deals and their commitments, the 52 cards), and,
    for a finished match, its seal. Names the first bad seq and why."""
    broken = store.verify_chain(game_id)
    records = store.records(game_id)
    failure: verify.Failure | None = None
    if broken is not None:
        failure = verify.Failure(broken, "chain", "the hash chain is broken here")
    # A table that never started has no events, and nothing to check (the chain check above
    # already fails a head whose version promises events that are not there).
    legal = None if failure or not records else verify.check_legality(records, str(game_id))
    failure = failure or legal
    seal_ok = None
    if finished:
        sealed = seal.seal_dict(seal.seal_of(game_id))
        seal_failure = verify.check_seal(
            str(game_id), records, seal.started_rules(game_id), sealed, seal.trusted_keys()
        )
        seal_ok = seal_failure is None
        failure = failure or seal_failure
    return {
        "chain_ok": broken is None,
        "first_broken_seq": broken,
        "legal_ok": None if broken is not None else legal is None,
        "seal_ok": seal_ok,
        "failure": None
        if failure is None
        else {"seq": failure.seq, "check": failure.check, "reason": failure.reason},
    }


def audit(*, game_id: uuid.UUID | str, user: Any) -> dict[str, Any]:
    """Check the hash chain, the legality of every event, every deal's commitment, the seal of
    a finished match, the snapshot against a fold from zero and, at a table played for chips,
    its settlement against its events; ``sound`` when all hold, else ``failure`` names the
    first bad seq and why.

    While the match runs the answer holds verdicts only; after it, each deal's salt, hands and
    stock too, so anyone can recompute the commitments.
    """
    game = store.read(game_id)
    found = after_the_match(game, user)
    state, reveal = found.state, found.reveal
    checks = soundness(game.game_id, finished=game.status == Game.Status.FINISHED)
    broken = checks["first_broken_seq"]
    rounds = []
    for row in store.load_events(game.game_id, upto=state.version, types=("round_started",)):
        data = row.data if isinstance(row.data, dict) else {}
        entry: dict[str, Any] = {
            "round": data.get("round"),
            "seq": row.seq,
            "deck_commitment": data.get("deck_commitment"),
            "commitment_ok": _commitment_ok(data),
        }
        if reveal:
            entry.update(salt=data.get("salt"), hands=data.get("hands"), stock=data.get("stock"))
        rounds.append(entry)
    snapshot_ok = None
    if broken is None:
        try:
            snapshot_ok = state_to_dict(store.fold_from_zero(game.game_id)) == game.snapshot
        except Exception:  # a stream that does not fold is reported, not raised
            snapshot_ok = False
    commitments_ok = all(r["commitment_ok"] for r in rounds)
    chips = table_settlement(game.game_id)
    settlement_ok = None if chips is None else not chips["problems"]
    return {
        "game_id": str(game.game_id),
        "version": game.version,
        "revealed": reveal,
        **checks,
        "rounds": rounds,
        "commitments_ok": commitments_ok,
        "snapshot_ok": snapshot_ok,
        "settlement": chips,
        "settlement_ok": settlement_ok,
        "sound": checks["failure"] is None
        and commitments_ok
        and snapshot_ok is True
        and settlement_ok is not False,
    }


def table_settlement(game_id: uuid.UUID | str) -> dict[str, Any] | None:
    """A table's chips: the ledger's buy-ins and settlement, and how they differ from what its
    events say (``problems``, empty when they agree); None for a table without chips."""
    booked = chips_selectors.settlement(game_id=game_id)
    if booked is None:
        return None
    return {**booked, "problems": stakes.problems(game_id)}


# ---------------------------------------------------------------- export


def public_keys() -> list[dict[str, Any]]:
    """GET /keys: every Ed25519 key the server has sealed matches with, retired ones too."""
    return seal.public_keys()


def export(*, game_id: uuid.UUID | str, user: Any) -> dict[str, Any]:
    """GET /games/{id}/export: one self-contained document for ``python -m games.verify``.

    After the match: the rules, the seats, every event whole (seq, type, actor, recorded_at as
    hashed, prev_hash, hash, data with its nonce), the deals' commitments and secrets, the seal
    and the public keys. While it runs: the same shape with what the feed gives this reader
    (``revealed`` false, no seal), so a player can keep the receipts.
    """
    game = store.read(game_id)
    found = after_the_match(game, user)
    state, seat, reveal = found.state, found.seat, found.reveal
    records = store.records(game.game_id, upto=state.version)
    started = records[0].data if records else {}
    events = [
        {
            "seq": r.seq,
            "type": r.type,
            "actor": r.actor,
            "recorded_at": r.recorded_at,
            "prev_hash": r.prev_hash,
            "hash": r.hash,
            "data": upcast_event(redact_event(r.data, seat, reveal=reveal)),
        }
        for r in records
    ]
    for event in events:
        event["nonce"] = event["data"].get("nonce")
    deals = []
    for r in records:
        if r.type == "round_started":
            entry = {
                "round": r.data.get("round"),
                "seq": r.seq,
                "deck_commitment": r.data.get("deck_commitment"),
            }
            if reveal:
                entry["salt"] = r.data.get("salt")
            deals.append(entry)
    sealed = seal.seal_dict(seal.seal_of(game.game_id)) if reveal else None
    return {
        "format": verify.EXPORT_FORMAT,
        "game": str(game.game_id),
        "status": game.status,
        "version": state.version,
        "revealed": reveal,
        "seat": seat,
        "rules": started.get("rules", {}),
        "rules_digest": verify.rules_digest(started.get("rules", {})),
        "seats": [
            {k: v for k, v in entry.items() if k != "username"}
            for entry in present.public_seats(state)
        ],
        "events": events,
        "deals": deals,
        "seal": sealed,
        "keys": [
            {
                **k,
                "valid_from": present.iso(k["valid_from"]),
                "valid_to": present.iso(k["valid_to"]),
            }
            for k in seal.public_keys()
        ]
        if reveal
        else [],
    }


def _commitment_ok(data: dict[str, Any]) -> bool:
    try:
        hands, stock = data["hands"], data["stock"]
        return deck_commitment(data["salt"], hands, stock) == data["deck_commitment"]
    except (KeyError, TypeError, IndexError):
        return False


# ---------------------------------------------------------------- rematches


def match_people(game: Game, user: Any) -> list[Seat]:
    """The finished match's seats (with their users), if ``user`` is one of its people (or
    staff); else ``NotAPlayer``."""
    seats = list(game.seats.select_related("user").order_by("index"))
    if not any(s.user_id == user.pk for s in seats) and not getattr(user, "is_staff", False):
        raise NotAPlayer(_("You did not play this match."))
    return seats


def rematch_view(*, game_id: uuid.UUID | str, user: Any) -> dict[str, Any]:
    """GET /games/{id}/rematch: the proposal to play this match again, who answered what and,
    once it started, the next game; for the match's people (and staff)."""
    game = store.get_game(game_id)
    seats = match_people(game, user)
    rematch = Rematch.objects.filter(game=game).first()
    if rematch is None:
        raise NoRematch()
    return present.rematch_dict(rematch, seats)


def rematches_changed(user_id: int, since: Any) -> list[dict[str, Any]]:
    """The rematches of the user's matches written after ``since``, oldest write first, as
    ``/me/stream``'s ``rematch`` frames show them (``games.live.rematch``)."""
    played = Seat.objects.filter(user_id=user_id).values("game_id")
    rows = list(
        Rematch.objects.filter(game_id__in=played, updated_at__gt=since).order_by(
            "updated_at", "game_id"
        )[:100]
    )
    seats: dict[Any, list[Seat]] = {}
    for seat in Seat.objects.filter(game_id__in=[r.game_id for r in rows]).select_related("user"):
        seats.setdefault(seat.game_id, []).append(seat)
    return [
        present.rematch_dict(r, sorted(seats.get(r.game_id, []), key=lambda s: s.index))
        for r in rows
    ]
