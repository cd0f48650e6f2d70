"""Reads of the table chat: who may read which channel of a table, its messages, a user's mutes
and export (HackSoft styleguide: selectors read, ``chat.services`` writes).

Who reads what (``reader``): a game's readers are those ``games.selectors.access`` lets in (its
players, staff, and spectators where the games allow them). Players read the players' channel;
spectators (readers without a seat) the spectators' channel, when the table allows spectator
chat; staff both. Nobody receives the messages of a user they mute; a hidden message is
withheld from everyone but staff (who see it flagged, with who hid it), and so is one whose text
went with its author's account. A table's chat is readable (and open) from its start until
``TONGITS_CHAT_KEEP_SECONDS`` after the match ended (``finished_at``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Max, QuerySet
from django.utils import timezone

from chat.errors import ChatClosed, MessageNotFound
from chat.models import Channel, Hidden, Message, Mute, Report
from games import players, store
from games import selectors as games_selectors
from games.models import Game

PAGE = 100

#: Apps above chat that keep people apart (blocks: ``social``) register ``hidden(user_id)`` here
#: at start-up: the ids of the users whose messages that reader does not receive, as a mute does.
#: Each answers for both sides of what it hides (whoever a person blocked, and whoever blocked
#: them), so neither of two people kept apart reads the other.
HIDDEN_AUTHORS: list[Callable[[int], set[int]]] = []


def hidden_authors(user_id: int) -> set[int]:
    """Whose messages ``user_id`` does not receive besides the ones they mute."""
    found: set[int] = set()
    for hidden in HIDDEN_AUTHORS:
        found |= hidden(user_id)
    return found


@dataclass(frozen=True)
class Reader:
    """Someone reading (or writing at) one table's chat, once ``access`` let them in."""

    game_id: uuid.UUID
    user_id: int
    seat: int | None
    staff: bool
    #: The channels they read, in order.
    channels: tuple[str, ...]
    #: The one channel they may write in (None: none).
    writes: str | None
    finished_at: datetime | None


def spectator_chat(game_id: uuid.UUID | str) -> bool:
    """Whether the table gives its spectators a channel (``Game.spectator_chat``, where the
    games have it; off otherwise)."""
    game = Game.objects.filter(pk=game_id).first()
    return bool(getattr(game, "spectator_chat", False))


def channels_of(*, seat: int | None, staff: bool, spectators: bool) -> tuple[str, ...]:
    if staff:
        return (Channel.PLAYERS.value, Channel.SPECTATORS.value)
    if seat is not None:
        return (Channel.PLAYERS.value,)
    return (Channel.SPECTATORS.value,) if spectators else ()


def closes_at(finished_at: datetime | None) -> datetime | None:
    """When a table's chat closes: ``TONGITS_CHAT_KEEP_SECONDS`` after the match ended."""
    if finished_at is None:
        return None
    return finished_at + timedelta(seconds=float(settings.TONGITS_CHAT_KEEP_SECONDS))


def reader(*, game_id: uuid.UUID | str, user: Any, now: datetime | None = None) -> Reader:
    """The caller as a reader of the table's chat: 404 no such table, 409 ``not_started``,
    403 ``not_a_player`` (who may not read the game), 409 ``chat_closed`` (past the keep time)."""
    head = store.read(game_id)
    _, seat, _ = games_selectors.access(head, user)
    closes = closes_at(head.finished_at)
    if closes is not None and (now or timezone.now()) >= closes:
        raise ChatClosed()
    staff = bool(getattr(user, "is_staff", False))
    spectators = seat is None and spectator_chat(head.game_id)
    if seat is not None:
        writes: str | None = Channel.PLAYERS.value
    else:
        writes = Channel.SPECTATORS.value if spectators else None
    return Reader(
        game_id=head.game_id,
        user_id=user.pk,
        seat=seat,
        staff=staff,
        channels=channels_of(seat=seat, staff=staff, spectators=spectators),
        writes=writes,
        finished_at=head.finished_at,
    )


def muted_ids(user_id: int) -> QuerySet[Mute]:
    return Mute.objects.filter(user_id=user_id).values("muted_id")


def visible(
    qs: QuerySet[Message], *, user_id: int, channels: tuple[str, ...], staff: bool
) -> QuerySet[Message]:
    """The messages of ``qs`` the reader receives: their channels, nobody they mute or are kept
    apart from (``HIDDEN_AUTHORS``), and (but for staff) neither hidden ones nor ones whose text
    is gone."""
    qs = qs.filter(channel__in=channels).exclude(user_id__in=muted_ids(user_id))
    apart = hidden_authors(user_id)
    if apart:
        qs = qs.exclude(user_id__in=apart)
    if not staff:
        qs = qs.filter(hidden__isnull=True, body__isnull=False)
    return qs


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def as_dicts(messages: list[Message], *, staff: bool) -> list[dict[str, Any]]:
    """The API's and the streams' shape of messages (``select_related("body", "hidden")``)."""
    wanted = {m.user_id for m in messages}
    if staff:
        wanted |= {m.hidden.by_id for m in messages if _hidden(m) is not None}
    found = players.profiles(wanted)
    names = {uid: shown.username for uid, shown in found.items()}
    out = []
    for message in messages:
        hidden = _hidden(message)
        author = found.get(message.user_id, players.GONE)
        out.append(
            {
                "id": message.pk,
                "game_id": str(message.game_id),
                "channel": message.channel,
                "user_id": message.user_id,
                "username": author.username,
                "display_name": author.display_name,
                "avatar": author.avatar,
                "text": _text(message),
                "created_at": _iso(message.created_at),
                "hidden": None
                if hidden is None or not staff
                else {
                    "by": names.get(hidden.by_id, players.DELETED_NAME),
                    "at": _iso(hidden.at),
                    "reason": hidden.reason,
                },
            }
        )
    return out


def _hidden(message: Message) -> Hidden | None:
    """Its hide, if any (a missing reverse one-to-one raises an AttributeError subclass)."""
    return getattr(message, "hidden", None)


def _text(message: Message) -> str | None:
    """Its text; None once the author's account was deleted."""
    body = getattr(message, "body", None)
    return body.text if body is not None else None


def _rows(qs: QuerySet[Message]) -> QuerySet[Message]:
    return qs.select_related("body", "hidden")


def message_list(
    *, game_id: uuid.UUID | str, user: Any, after: int = 0, limit: int = PAGE
) -> dict[str, Any]:
    """GET /games/{id}/chat: the messages after ``after`` the caller may read, oldest first."""
    who = reader(game_id=game_id, user=user)
    qs = visible(
        Message.objects.filter(game_id=who.game_id, id__gt=after),
        user_id=who.user_id,
        channels=who.channels,
        staff=who.staff,
    )
    rows = list(_rows(qs).order_by("id")[: limit + 1])
    return {
        "channels": list(who.channels),
        "writes": who.writes,
        "closes_at": closes_at(who.finished_at),
        "messages": as_dicts(rows[:limit], staff=who.staff),
        "more": len(rows) > limit,
    }


def message_get(*, game_id: uuid.UUID | str, message_id: int) -> Message:
    message = _rows(Message.objects.filter(pk=message_id, game_id=game_id)).first()
    if message is None:
        raise MessageNotFound()
    return message


def latest(game_id: str) -> tuple[int, int]:
    """The newest message id and hide id of a table (0 for none): where a stream starts."""
    message = Message.objects.filter(game_id=game_id).aggregate(top=Max("id"))["top"]
    hidden = Hidden.objects.filter(message__game_id=game_id).aggregate(top=Max("id"))["top"]
    return message or 0, hidden or 0


# ---------------------------------------------------------------- a user's own


def mute_list(*, user: Any) -> list[dict[str, Any]]:
    rows = list(Mute.objects.filter(user=user).order_by("-created_at", "-id"))
    names = players.names(row.muted_id for row in rows)
    return [
        {"username": names.get(row.muted_id, players.DELETED_NAME), "created_at": row.created_at}
        for row in rows
    ]


def export(user: Any) -> dict[str, Any]:
    """``/me/export``'s ``chat``: every message the user wrote (with its text unless it went,
    and whether staff hid it), the users they mute, the messages they reported."""
    messages = _rows(Message.objects.filter(user=user)).order_by("id")
    reports = Report.objects.filter(user=user).select_related("message").order_by("id")
    return {
        "messages": [
            {
                "id": m.pk,
                "game_id": str(m.game_id),
                "channel": m.channel,
                "text": _text(m),
                "created_at": m.created_at,
                "hidden": _hidden(m) is not None,
            }
            for m in messages
        ],
        "mutes": mute_list(user=user),
        "reports": [
            {
                "message_id": r.message_id,
                "game_id": str(r.message.game_id),
                "reason": r.reason,
                "at": r.at,
            }
            for r in reports
        ],
    }
