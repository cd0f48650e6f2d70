"""The chat's frames on a game's stream (``games.live.streams.GameSource``, registered by
``ChatConfig.ready``).

``start(opened)`` when a stream opens: which channels this reader reads and where the table's
chat is now (its newest message and hide ids), so the stream sends only what comes after (the
history is ``GET /games/{id}/chat``). ``more(opened, position)`` after each ``wake-game`` notice
of the table: ``chat`` frames for the new messages the reader receives (their channels, nobody
they mute or are kept apart from now, not hidden) and ``chat_hidden`` frames ``{"id"}`` for
messages staff hid since, which a client removes. Chat frames carry no ``id:`` line:
``Last-Event-ID`` stays the game's seq. Both run in the streams' database pool.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model

from chat import selectors
from chat.models import Hidden, Message
from games.live.feed import OpenedStream
from games.live.streams import frame, to_json

#: The most messages one wake sends a stream (a burst beyond it follows at the next wake).
BATCH = 200


@dataclass(frozen=True)
class Position:
    channels: tuple[str, ...]
    staff: bool
    message: int
    hidden: int


def start(opened: OpenedStream) -> Position:
    staff = bool(get_user_model().objects.filter(pk=opened.user_id, is_staff=True).exists())
    spectators = opened.seat is None and selectors.spectator_chat(opened.game_id)
    channels = selectors.channels_of(seat=opened.seat, staff=staff, spectators=spectators)
    message, hidden = selectors.latest(opened.game_id)
    return Position(channels, staff, message, hidden)


def more(opened: OpenedStream, position: Position) -> tuple[list[bytes], Position]:
    if not position.channels:
        return [], position
    # Hides first: one committed after this read is read at the next wake (its own notice),
    # and a message it hides that the read below still finds is left out there, as hidden.
    hides = list(
        Hidden.objects.filter(message__game_id=opened.game_id, id__gt=position.hidden)
        .order_by("id")
        .values_list("id", "message_id", "message__channel")
    )
    rows = list(
        Message.objects.filter(game_id=opened.game_id, id__gt=position.message)
        .select_related("body", "hidden")
        .order_by("id")[:BATCH]
    )
    muted = set(selectors.muted_ids(opened.user_id).values_list("muted_id", flat=True))
    muted |= selectors.hidden_authors(opened.user_id)
    shown = [
        m
        for m in rows
        if m.channel in position.channels
        and m.user_id not in muted
        and getattr(m, "hidden", None) is None
        and getattr(m, "body", None) is not None
    ]
    frames = [
        frame("chat", to_json(item)) for item in selectors.as_dicts(shown, staff=position.staff)
    ]
    # Only messages this stream may have sent are taken back (a newer one was never sent).
    frames += [
        frame("chat_hidden", to_json({"id": message_id}))
        for _, message_id, channel in hides
        if message_id <= position.message and channel in position.channels
    ]
    return frames, Position(
        position.channels,
        position.staff,
        rows[-1].pk if rows else position.message,
        hides[-1][0] if hides else position.hidden,
    )
