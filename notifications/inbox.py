"""A user's inbox: written by the projector and the receivers, read and marked by the API.

Writes go through ``add`` / ``add_many``: INSERT ... ON CONFLICT DO NOTHING, one statement for
a projector run's causes, so the same cause seen twice (a restart, a second projector, a
rebuild) is one notification. ``announce`` tells
every web process, on commit, whose inbox grew, so an open ``/me/stream`` sends it at once.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone

from core import notices
from games.live.listener import WAKE_USER
from games.live.streams import frame, to_json
from notifications.models import Notification

_INSERT = """
INSERT INTO notifications_notification (user_id, kind, cause, game_id, data, created_at)
SELECT t.u, t.kind, t.cause, t.game, t.data::jsonb, t.at
FROM unnest(
    %(users)s::bigint[], %(kinds)s::text[], %(causes)s::text[], %(games)s::uuid[],
    %(datas)s::text[], %(ats)s::timestamptz[]
) AS t(u, kind, cause, game, data, at)
WHERE EXISTS (SELECT 1 FROM accounts_user WHERE id = t.u AND deleted_at IS NULL)
ON CONFLICT (user_id, cause) DO NOTHING
RETURNING id, user_id, cause
"""


@dataclass(frozen=True)
class Cause:
    """One cause of notifications: the users it concerns, and what each of them is told."""

    user_ids: Sequence[int]
    kind: str
    cause: str
    game_id: uuid.UUID | str | None
    data: dict[str, Any]
    at: datetime


def add(
    user_ids: Sequence[int],
    kind: str,
    *,
    cause: str,
    game_id: uuid.UUID | str | None,
    data: dict[str, Any],
    at: datetime,
) -> list[Notification]:
    """Write one notification per user for ``cause``, unless that user already has it; the new
    ones (with their ids), for the pushes and the live streams."""
    return add_many([Cause(user_ids, str(kind), cause, game_id, data, at)])


def add_many(causes: Sequence[Cause]) -> list[Notification]:
    """``add`` for many causes in one statement (a projector run's), in their order."""
    seen: set[tuple[int, str]] = set()
    rows: list[tuple[int, Cause]] = []
    for c in causes:
        for uid in c.user_ids:
            if (uid, c.cause) not in seen:  # a user is told of a cause once
                seen.add((uid, c.cause))
                rows.append((uid, c))
    if not rows:
        return []
    dumped = {id(c): orjson.dumps(c.data).decode() for c in causes}
    params = {
        "users": [uid for uid, _ in rows],
        "kinds": [str(c.kind) for _, c in rows],
        "causes": [c.cause for _, c in rows],
        "games": [str(c.game_id) if c.game_id else None for _, c in rows],
        "datas": [dumped[id(c)] for _, c in rows],
        "ats": [c.at for _, c in rows],
    }
    with connection.cursor() as cur:
        cur.execute(_INSERT, params)
        written = {(user_id, cause): pk for pk, user_id, cause in cur.fetchall()}
    out = []
    for uid, c in rows:
        pk = written.get((uid, c.cause))
        if pk is not None:
            out.append(
                Notification(
                    id=pk,
                    user_id=uid,
                    kind=str(c.kind),
                    cause=c.cause,
                    game_id=str(c.game_id) if c.game_id else None,
                    data=c.data,
                    created_at=c.at,
                )
            )
    return out


def announce(notes: Iterable[Notification]) -> None:
    """Wake, on commit, the ``/me/stream`` of each user with a new notification."""
    notices.send_many(WAKE_USER, [str(u) for u in sorted({n.user_id for n in notes})])


def stream_more(user_id: int, last_id: int) -> tuple[list[bytes], int]:
    """``/me/stream``'s ``notification`` frames after ``last_id`` (``streams.MeSource``)."""
    notes = after(user_id, last_id)
    if not notes:
        return [], last_id
    unread = Notification.objects.filter(user_id=user_id, read_at__isnull=True).count()
    frames = [frame("notification", to_json({**as_dict(n), "unread": unread})) for n in notes]
    return frames, notes[-1].id


def as_dict(note: Notification) -> dict[str, Any]:
    """The API's and the stream's shape of one notification."""
    return {
        "id": note.id,
        "kind": note.kind,
        "game_id": str(note.game_id) if note.game_id else None,
        "data": note.data,
        "created_at": note.created_at.isoformat().replace("+00:00", "Z"),
        "read": note.read_at is not None,
    }


# ---------------------------------------------------------------- reads and marks


def of(user: Any, *, before: int | None = None, unread: bool = False) -> QuerySet[Notification]:
    """The user's notifications, newest first (``before``: ids below it, the next page)."""
    qs = Notification.objects.filter(user=user)
    if before is not None:
        qs = qs.filter(id__lt=before)
    if unread:
        qs = qs.filter(read_at__isnull=True)
    return qs.order_by("-id")


def unread_count(user: Any) -> int:
    return Notification.objects.filter(user=user, read_at__isnull=True).count()


def after(user_id: int, last_id: int, limit: int = 50) -> list[Notification]:
    """The user's notifications newer than ``last_id``, oldest first (the live stream)."""
    qs = Notification.objects.filter(user_id=user_id, id__gt=last_id).order_by("id")
    return list(qs[:limit])


def latest_id(user_id: int) -> int:
    note = Notification.objects.filter(user_id=user_id).order_by("-id").only("id").first()
    return note.id if note else 0


def mark_read(user: Any, ids: Sequence[int] | None = None) -> int:
    """Mark the user's notifications read (``ids``; all when None); how many changed."""
    qs = Notification.objects.filter(user=user, read_at__isnull=True)
    if ids is not None:
        qs = qs.filter(id__in=list(ids))
    return qs.update(read_at=timezone.now())
