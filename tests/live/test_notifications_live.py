"""A new notification reaches its user's open /me/stream at once, and nobody else's."""

from __future__ import annotations

import time

from django.db import transaction
from django.utils import timezone

from notifications import inbox
from notifications.models import Kind
from tests.live.support import Live


def _notify(player, cause: str) -> int:
    with transaction.atomic():
        notes = inbox.add(
            [player.user.pk],
            Kind.INVITED,
            cause=cause,
            game_id=None,
            data={"x": 1},
            at=timezone.now(),
        )
        inbox.announce(notes)
    return notes[0].id


def test_a_new_notification_arrives_on_me_stream_within_a_second(live: Live) -> None:
    me, other = live.player(), live.player()
    mine = live.stream("/api/v1/me/stream", me)
    theirs = live.stream("/api/v1/me/stream", other)
    assert mine.next().event == "games" and theirs.next().event == "games"
    before = _notify(me, "before-the-stream-is-read")  # already listed by the inbox API
    first = mine.next()
    assert first.event == "notification" and first.json["id"] == before

    sent = time.monotonic()
    note_id = _notify(me, "live-1")
    frame = mine.next(timeout=5)
    assert time.monotonic() - sent < 1.0
    assert frame.event == "notification"
    assert frame.json["id"] == note_id and frame.json["kind"] == "invited"
    assert frame.json["unread"] == 2 and frame.json["read"] is False
    _notify(other, "theirs")
    got = theirs.next(timeout=5)
    assert got.event == "notification" and got.json["data"] == {"x": 1}
    assert mine.frames.empty()
