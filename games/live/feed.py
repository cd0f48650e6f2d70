"""The reads of live streams and long-polls (synchronous: they run in ``games.live.db``).

Everything a reader sees goes through ``games.selectors``: ``_access`` decides who may read,
``feed_item`` shapes each event for the reader's seat exactly as ``/events`` does, and
``game_payload`` is the view. Nothing here keeps a second copy of the events: a stream reads
the ``games_event`` rows after its last seq every time it is woken.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from core.errors import Invalid
from games import presenters as present
from games import selectors, store
from games.errors import NotStarted
from games.live.models import StreamTicket
from games.models import Game, Seat
from games.projection import turn_key
from games.rules import IN_ROUND_PHASES, GameState, fold

TICKET_SECONDS = 60


class BadResumePoint(Invalid):
    code = "invalid_last_event_id"
    detail = gettext_lazy(
        "Last-Event-ID (or after) must be a whole number from 0 to the game's version."
    )


def server_time() -> str:
    return present.iso(timezone.now()) or ""


# ---------------------------------------------------------------- a game's stream


@dataclass(frozen=True)
class OpenedStream:
    """What a game stream needs once the request has been checked: no model instances."""

    game_id: str
    user_id: int
    seat: int | None
    after: int
    # A watcher of an unlisted or public table (neither a player nor staff), and the events it
    # is held behind the running match (the table's ``spectator_delay``).
    spectator: bool = False
    delay: int = 0


def parse_resume_point(value: str | None) -> int | None:
    """``Last-Event-ID`` / ``after`` as a seq, ``None`` when absent; 400 when malformed."""
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    if not text.isascii() or not text.isdigit() or len(text) > 10:
        raise BadResumePoint(_("%(value)s is not a whole number.") % {"value": repr(value[:40])})
    return int(text)


def open_game_stream(*, game_id: uuid.UUID | str, user: Any, after: int) -> OpenedStream:
    """403/404/409 as ``/events`` would answer; 400 when ``after`` is past the version."""
    head = store.read(game_id)
    found = selectors.reader(head, user)
    version = found.state.version  # a delayed spectator's: behind the game
    if after > version:
        raise BadResumePoint(
            _("Event %(after)s does not exist yet: the game is at version %(version)s.")
            % {"after": after, "version": version},
            extra={"version": version},
        )
    return OpenedStream(
        game_id=str(head.game_id),
        user_id=user.pk,
        seat=found.seat,
        after=after,
        spectator=found.spectator,
        delay=head.spectator_delay if found.spectator else 0,
    )


@dataclass(frozen=True)
class GameHead:
    """What a reader needs of the game's row (no model instance: reads built from a notice have
    none)."""

    game_id: str
    status: str
    turn_deadline: datetime | None
    settled_at: datetime | None
    awaiting: str


@dataclass
class GameRead:
    """One read of a game: its head, its state and the event rows after a seq."""

    game: GameHead
    state: GameState
    rows: list[Any]  # Event rows, or store.StoredEvents from a notice

    @property
    def version(self) -> int:
        return self.state.version

    @property
    def finished(self) -> bool:
        return self.game.status == Game.Status.FINISHED

    @property
    def done(self) -> bool:
        """Nothing will ever change: the match was aborted, or it ended and it is settled."""
        if self.game.status == Game.Status.ABORTED:
            return True
        return self.finished and (self.game.settled_at is not None or not self.game.awaiting)


def read_game(game_id: str, after: int) -> GameRead:
    game = store.get_game(game_id)
    state = store.state_of(game)
    if state is None:  # cannot happen once a stream is open (the game had started)
        raise NotStarted()
    rows = []
    if after < state.version:
        rows = list(store.load_events(game.pk, after=after, upto=state.version))
    head = GameHead(str(game.pk), game.status, game.turn_deadline, game.settled_at, game.awaiting)
    return GameRead(game=head, state=state, rows=rows)


def jsonb_order(value: Any) -> Any:
    """``value`` with every object's keys in the order PostgreSQL's jsonb keeps them (shorter
    keys first, then bytewise), so an event from a notice renders to the same bytes as the
    stored row that ``/events`` reads."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda key: (len(key.encode()), key.encode()))
        return {key: jsonb_order(value[key]) for key in keys}
    if isinstance(value, list):
        return [jsonb_order(item) for item in value]
    return value


def read_from_notice(previous: GameRead, note: dict[str, Any]) -> GameRead | None:
    """The read that follows ``previous`` from an append's notice (``store.notice``): its
    rows, its head columns and the state folded on from ``previous.state``, without a query.
    ``None`` when the notice does not follow on from ``previous`` (a notice missed or doubled:
    the reader queries instead)."""
    stored = note["rows"]
    if not stored or stored[0]["seq"] != previous.version + 1:
        return None
    game_id = uuid.UUID(previous.game.game_id)
    rows = [
        store.StoredEvent(
            game_id=game_id,
            seq=row["seq"],
            type=row["type"],
            data=jsonb_order(row["data"]),
            actor=row["actor"],
            recorded_at=datetime.fromisoformat(row["recorded_at"]),
            prev_hash=row["prev_hash"],
            hash=row["hash"],
        )
        for row in stored
    ]
    state = fold([row.data for row in rows], previous.state)
    game = previous.game
    head = GameHead(
        game.game_id,
        note["status"],
        store.time_from_iso(note["turn_deadline"]),
        game.settled_at,
        note["awaiting"],
    )
    return GameRead(game=head, state=state, rows=rows)


def view_payload(read: GameRead, seat: int | None) -> dict[str, Any]:
    """The reader's view, the same object as GET /games/{id} (``presenters.view_frame``); the
    stream adds ``server_time`` when it sends it."""
    game = read.game
    return present.view_frame(
        game.game_id, game.status, game.turn_deadline, game.settled_at, read.state, seat
    )


# ---------------------------------------------------------------- a player's own tables


@dataclass
class MyTable:
    game_id: str
    status: str
    seat: int
    version: int
    phase: str
    round: int
    is_my_turn: bool
    turn_deadline: str | None
    settled: bool
    updated_at: datetime
    turn_key: tuple | None = field(default=None, compare=False)
    invitation: str | None = None
    invitation_expires_at: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "status": self.status,
            "seat": self.seat,
            "version": self.version,
            "phase": self.phase,
            "round": self.round,
            "is_my_turn": self.is_my_turn,
            "draw_answer": self.is_my_turn and self.phase == "draw_call",
            "turn_deadline": self.turn_deadline,
            "settled": self.settled,
            "invitation": self.invitation,
            "invitation_expires_at": self.invitation_expires_at,
        }


def _turn_key(game: Game) -> tuple | None:
    """Changes exactly when a new turn (or Draw answer) starts, as the deadline does."""
    return turn_key(store.state_of(game))


def my_tables(user_id: int, also: tuple[str, ...] = ()) -> list[MyTable]:
    """The user's waiting and active tables (and the games ``also`` names, whatever their
    status), their turn first, then by deadline, then the most recently changed."""
    wanted = Q(game__status__in=[Game.Status.WAITING, Game.Status.ACTIVE])
    if also:
        wanted |= Q(game_id__in=list(also))
    lapsed = timezone.now() - timedelta(seconds=settings.TONGITS_INVITATION_SECONDS)
    seats = (
        Seat.objects.filter(wanted, user_id=user_id)
        .exclude(invitation=Seat.Invitation.PENDING, invited_at__lt=lapsed)
        .select_related("game")
    )
    out = []
    for seat in seats:
        game = seat.game
        expires = None
        if seat.invitation == Seat.Invitation.PENDING and seat.invited_at is not None:
            expires = seat.invited_at + timedelta(seconds=settings.TONGITS_INVITATION_SECONDS)
        mine = (
            game.status == Game.Status.ACTIVE
            and game.phase in IN_ROUND_PHASES
            and game.current_seat == seat.index
        )
        out.append(
            MyTable(
                game_id=str(game.pk),
                status=game.status,
                seat=seat.index,
                version=game.version,
                phase=game.phase,
                round=game.round,
                is_my_turn=mine,
                turn_deadline=present.iso(game.turn_deadline),
                settled=game.settled_at is not None,
                updated_at=game.updated_at,
                turn_key=_turn_key(game) if mine else None,
                invitation=seat.invitation or None,
                invitation_expires_at=present.iso(expires),
            )
        )
    out.sort(
        key=lambda t: (
            not t.is_my_turn,
            t.turn_deadline is None,
            t.turn_deadline or "",  # ISO times in UTC: text order is time order
            t.status != Game.Status.ACTIVE,
            -t.updated_at.timestamp(),
        )
    )
    return out


def my_games(user: Any) -> dict[str, Any]:
    """GET /me/games."""
    return {
        "games": [t.as_dict() for t in my_tables(user.pk)],
        "server_time": server_time(),
    }


def seated_users(game_id: str) -> tuple[int, ...]:
    seats = Seat.objects.filter(game_id=game_id, user_id__isnull=False)
    return tuple(seats.values_list("user_id", flat=True))


# ---------------------------------------------------------------- tickets


def _digest(ticket: str) -> str:
    return hashlib.sha256(ticket.encode()).hexdigest()


def issue_ticket(
    *, user: Any, game_id: uuid.UUID | str | None, session_id: Any = None
) -> dict[str, Any]:
    """A one-time ticket for ``?ticket=`` (the game's stream, or /me/stream for ``None``), bound
    to the session that asked (``session_id``): it opens nothing once that session has ended."""
    now = timezone.now()
    if game_id is not None:  # only a reader of the game gets one (403/404/409 otherwise)
        selectors.access(store.read(game_id), user)
    StreamTicket.objects.filter(expires_at__lt=now - timedelta(hours=1)).delete()
    ticket = secrets.token_urlsafe(32)
    expires = now + timedelta(seconds=TICKET_SECONDS)
    StreamTicket.objects.create(
        digest=_digest(ticket),
        user=user,
        game_id=game_id,
        session_id=session_id,
        expires_at=expires,
    )
    return {"ticket": ticket, "expires_at": present.iso(expires), "expires_in": TICKET_SECONDS}


def use_ticket(ticket: str, game_id: uuid.UUID | str | None) -> StreamTicket | None:
    """The ticket (its user read with it), or None when it is unknown, used, expired, for
    another stream, or its holder may no longer stream (``refused``: the account suspended or
    gone, the session that asked for it ended).

    One UPDATE marks it used, so two requests with the same ticket cannot both pass."""
    now = timezone.now()
    found = StreamTicket.objects.filter(
        digest=_digest(ticket), used_at__isnull=True, expires_at__gt=now
    )
    found = found.filter(game_id=game_id) if game_id is not None else found.filter(game_id=None)
    ids = list(found.values_list("id", flat=True)[:1])
    if not ids or not StreamTicket.objects.filter(id=ids[0], used_at__isnull=True).update(
        used_at=now
    ):
        return None
    used = StreamTicket.objects.select_related("user").get(id=ids[0])
    if not used.user.is_active or refused([holder_of(used.user_id, used.session_id)]):
        return None
    return used


# ---------------------------------------------------------------- who holds a stream

#: An open stream's holder: its account's id and the session it was opened with (None: not
#: known, a test's forced log-in), as text.
Holder = tuple[int, str | None]

#: ``check(holders) -> {holder: reason}``: which of these holders may no longer hold a stream
#: open, and why (``"suspended"``, ``"signed_out"``). Registered by the app that owns accounts
#: and sessions (``accounts``): games knows neither.
HOLDER_CHECKS: list[Callable[[list[Holder]], dict[Holder, str]]] = []


def holder_of(user_id: int, session_id: Any) -> Holder:
    return user_id, (str(session_id) if session_id is not None else None)


def refused(holders: list[Holder]) -> dict[Holder, str]:
    """Each of ``holders`` that may no longer stream, with its reason (``HOLDER_CHECKS``)."""
    out: dict[Holder, str] = {}
    for check in HOLDER_CHECKS:
        for holder, reason in check(holders).items():
            out.setdefault(holder, reason)
    return out
