"""``/me/stream``'s ``presence`` frames: a ``games.live.streams.MeSource`` (registered by
``SocialConfig.ready``).

``social.presence`` wakes a person's friends (``WAKE_USER``, on commit) whenever their presence
may have changed, and both people when a friendship begins or ends. The stream then reads its
friendships with each friend's ``changed_at`` (one query), and sends one ``presence`` frame per
friend whose presence changed since it last looked and now differs from what it last sent
(``{"user_id", "username", "display_name", "avatar", "friend": true, "presence": {...} or
null, "server_time"}``), and ``"friend": false`` for each friendship that ended. Reading only
the friends that changed keeps a wake cheap however many friends there are. As with the
``rematch`` frames (``games.live.rematch``), the position is the time of the last look (less a
margin, for a write committed just after an earlier clock reading) and what was sent of each
friend that changed since, so a change is sent once however the commits interleave.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.utils import timezone

from games import players
from games.live import feed
from games.live.streams import frame, to_json
from games.presenters import iso
from social import selectors
from social.models import Friendship, Presence

#: How far before a look a change still counts as new to the next one.
MARGIN = timedelta(seconds=5)
#: A friend the stream has sent nothing of since the margin began.
_UNSENT = object()

_FRIENDS = f"""
SELECT f.other, f.accepted_at, p.changed_at
FROM (
    SELECT CASE WHEN user_low_id = %(user)s THEN user_high_id ELSE user_low_id END, accepted_at
    FROM {Friendship._meta.db_table}
    WHERE (user_low_id = %(user)s OR user_high_id = %(user)s) AND accepted_at IS NOT NULL
) AS f(other, accepted_at)
LEFT JOIN {Presence._meta.db_table} p ON p.user_id = f.other
"""


@dataclass(frozen=True)
class Position:
    since: datetime
    friends: frozenset[int]
    #: What was sent (or, at the start, already true) of each friend that changed since.
    sent: dict[int, Any]


def _friends(user_id: int) -> list[tuple[int, datetime, datetime | None]]:
    with connection.cursor() as cursor:
        cursor.execute(_FRIENDS, {"user": user_id})
        return cursor.fetchall()


def _changed(rows: list[tuple[int, datetime, datetime | None]], since: datetime) -> list[int]:
    return [
        other
        for other, accepted_at, changed_at in rows
        if accepted_at >= since or (changed_at is not None and changed_at >= since)
    ]


def _shown(value: dict[str, Any] | None) -> dict[str, Any] | None:
    if value is None:
        return None
    return {**value, "last_seen": iso(value["last_seen"])}


def stream_start(user_id: int) -> Position:
    """Where the stream starts: what its friends look like now is no news."""
    since = timezone.now() - MARGIN
    rows = _friends(user_id)
    changed = _changed(rows, since)
    return Position(
        since,
        frozenset(other for other, _, _ in rows),
        selectors.presences(changed) if changed else {},
    )


def stream_more(user_id: int, position: Position) -> tuple[list[bytes], Position]:
    """A ``presence`` frame per friend whose presence changed, or whose friendship began or
    ended, since the last look."""
    looked = timezone.now() - MARGIN
    rows = _friends(user_id)
    friends = frozenset(other for other, _, _ in rows)
    changed = _changed(rows, position.since)
    gone = position.friends - friends
    now = selectors.presences(changed) if changed else {}
    news = [other for other in changed if position.sent.get(other, _UNSENT) != now[other]]
    frames = []
    if news or gone:
        found = players.profiles([*news, *gone])
        stamp = feed.server_time()
        for other, friend in [*((o, True) for o in news), *((o, False) for o in sorted(gone))]:
            body = {
                "user_id": other,
                **found.get(other, players.GONE).fields(),
                "friend": friend,
                "presence": _shown(now.get(other)),
                "server_time": stamp,
            }
            frames.append(frame("presence", to_json(body)))
    # Only what changed within the margin can be read again next time.
    return frames, Position(max(position.since, looked), friends, now)
