"""The matchmaker's frames on ``/me/stream`` (a ``games.live.streams.MeSource``): each of the
person's ``TicketEvent`` rows after the position the stream has seen, as ``ticket_searching``,
``ticket_updated`` (a friend joined a forming party), ``matched`` (with the game id) or
``ticket_cancelled`` (with the reason) frames."""

from __future__ import annotations

from games.live.streams import frame, to_json
from matchmaking.models import TicketEvent

FRAMES = {
    TicketEvent.Kind.SEARCHING: "ticket_searching",
    TicketEvent.Kind.UPDATED: "ticket_updated",
    TicketEvent.Kind.MATCHED: "matched",
    TicketEvent.Kind.CANCELLED: "ticket_cancelled",
}


def latest_id(user_id: int) -> int:
    """Where a stream opened now starts: after the person's last event."""
    last = TicketEvent.objects.filter(user_id=user_id).order_by("-id").values_list("id").first()
    return last[0] if last else 0


def stream_more(user_id: int, last_id: int) -> tuple[list[bytes], int]:
    """The frames after ``last_id``, and the new position."""
    rows = list(
        TicketEvent.objects.filter(user_id=user_id, id__gt=last_id)
        .order_by("id")
        .values_list("id", "kind", "data", "at")[:200]
    )
    frames = [
        frame(FRAMES[kind], to_json({**data, "at": at.isoformat().replace("+00:00", "Z")}))
        for _id, kind, data, at in rows
    ]
    return frames, rows[-1][0] if rows else last_id
