"""The tournaments' frames on ``/me/stream`` (a ``games.live.streams.MeSource``): each of the
person's ``TournamentEvent`` rows after the position the stream has seen, as a ``tournament``
frame whose ``kind`` says what happened: registered, unregistered, starting, started,
table_ready (with the game id), eliminated, finished (with the prizes), cancelled."""

from __future__ import annotations

from games.live.streams import frame, to_json
from tournaments.models import TournamentEvent

FRAME = "tournament"


def latest_id(user_id: int) -> int:
    """Where a stream opened now starts: after the person's last event."""
    last = TournamentEvent.objects.filter(user_id=user_id).order_by("-id").values_list("id").first()
    return last[0] if last else 0


def stream_more(user_id: int, last_id: int) -> tuple[list[bytes], int]:
    """The frames after ``last_id``, and the new position."""
    rows = list(
        TournamentEvent.objects.filter(user_id=user_id, id__gt=last_id)
        .order_by("id")
        .values_list("id", "data", "at")[:200]
    )
    frames = [
        frame(FRAME, to_json({**data, "at": at.isoformat().replace("+00:00", "Z")}))
        for _id, data, at in rows
    ]
    return frames, rows[-1][0] if rows else last_id
