"""A user's inbox: written by the projector and the receivers, read and marked by the API.

Writes go through ``add``: one INSERT ... ON CONFLICT DO NOTHING per cause, so the same cause
seen twice (a restart, a second projector, a rebuild) is one notification. ``announce`` tells
every web process, on commit, whose inbox grew, so an open ``/me/stream`` sends it at once.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
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
SELECT u, %(kind)s, %(cause)s, %(game)s, %(data)s::jsonb, %(at)s
FROM unnest(%(users)s::bigint[]) AS u
WHERE EXISTS (SELECT 1 FROM accounts_user WHERE id = u AND deleted_at IS NULL)
ON CONFLICT (user_id, cause) DO NOTHING
RETURNING id, user_id
"""


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
    if not user_ids:
        return []
    params = {
        "kind": str(kind),
        "cause": cause,
        "game": str(game_id) if game_id else None,
        "data": orjson.dumps(data).decode(),
        "at": at,
        "users": list(user_ids),
    }
    with connection.cursor() as cur:
        cur.execute(_INSERT, params)
        rows = cur.fetchall()
    return [
        Notification(
            id=pk,
            user_id=user_id,
            kind=str(kind),
            cause=cause,
            game_id=params["game"],
            data=data,
            created_at=at,
        )
        for pk, user_id in rows
    ]


def announce(notes: Iterable[Notification]) -> None:
    """Wake, on commit, the ``/me/stream`` of each user with a new notification."""
    for user_id in sorted({n.user_id for n in notes}):
        notices.send(WAKE_USER, str(user_id))


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
