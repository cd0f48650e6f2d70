"""``/me/stream``'s ``rematch`` frames: a ``streams.MeSource`` (registered by the games app).

``games.rematch`` wakes each person of a match (``WAKE_USER``, on commit) whenever its rematch
is proposed, answered, started or lapses; the stream then sends one ``rematch`` frame per
rematch of the user's matches that changed since it last looked (the API's rematch object,
with ``server_time``). The position is the time of the last look (less a margin, for a write
committed just after an earlier clock reading) and what each rematch written since looked like
when last sent, so a write is sent once however the commits interleave.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from games import selectors
from games.live import feed
from games.live.streams import frame, to_json

#: How far before the stream opened a rematch's write still counts as new to it.
MARGIN = timedelta(seconds=5)

Position = tuple[datetime, dict[str, Any]]


def stream_start(user_id: int) -> Position:
    """What the user's rematches look like now: none of them is news yet."""
    since = timezone.now() - MARGIN
    return since, {r["game_id"]: r for r in selectors.rematches_changed(user_id, since)}


def stream_more(user_id: int, position: Position) -> tuple[list[bytes], Position]:
    """A ``rematch`` frame for each rematch of the user's matches that changed."""
    since, seen = position
    looked = timezone.now() - MARGIN
    frames, kept = [], {}
    for rematch in selectors.rematches_changed(user_id, since):
        kept[rematch["game_id"]] = rematch
        if seen.get(rematch["game_id"]) != rematch:
            body = {**rematch, "server_time": feed.server_time()}
            frames.append(frame("rematch", to_json(body)))
    # Only what was written in the margin can be read again next time.
    return frames, (max(since, looked), kept)
