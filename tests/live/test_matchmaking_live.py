"""The matcher as the scheduler runs it (its loop, woken by the tickets' NOTIFY) seats three
people who asked over HTTP, and each one's /me/stream says so with the game's id."""

from __future__ import annotations

import threading
import time

import pytest

from chips import services as chips
from core import notices
from games.models import Game
from matchmaking import matcher, services
from tests.live.support import Live

TICKETS = "/api/v1/matchmaking/tickets"


@pytest.fixture
def matcher_loop():
    """``run_matcher`` in a thread, as ``manage.py run_scheduler`` runs it; a long poll, so
    only a ticket's NOTIFY wakes it in time."""
    stop = threading.Event()
    thread = threading.Thread(target=matcher.run_matcher, args=(stop,), kwargs={"poll": 30.0})
    thread.start()
    yield
    stop.set()
    # Its notice wakes the loop now, instead of the 30 s poll running out (as a ticket would).
    notices.notify_channel(services.CHANNEL)
    thread.join(40)
    assert not thread.is_alive()


def test_three_tickets_are_seated_and_each_stream_hears_matched(live: Live, matcher_loop):
    people = [live.player() for _ in range(3)]
    streams = []
    for person in people:
        chips.open_wallet(person.user.pk)
        stream = live.stream("/api/v1/me/stream", person)
        assert stream.next().event == "games"
        streams.append(stream)
    sent = time.monotonic()
    tickets = []
    for person in people:
        answer = person.http.post(TICKETS, json={"room": "100:5", "bots_after": None})
        assert answer.status_code == 201, answer.text
        tickets.append(answer.json()["id"])
    found = []
    for stream, ticket_id in zip(streams, tickets, strict=True):
        matched = _next_event(stream, "matched", limit=12)
        assert matched.json["ticket_id"] == ticket_id
        found.append(matched.json["game_id"])
        if len(found) == 1:
            assert time.monotonic() - sent < 5.0  # woken by the NOTIFY, not the 30 s poll
    assert len(set(found)) == 1
    game = Game.objects.get(pk=found[0])
    assert game.status == Game.Status.ACTIVE
    assert sorted(game.seats.values_list("user_id", flat=True)) == sorted(p.user.pk for p in people)


def _next_event(stream, wanted: str, limit: int = 8):
    for _ in range(limit):
        frame = stream.next(timeout=10)
        if frame.event == wanted:
            return frame
    raise AssertionError(f"no {wanted} frame")


def test_a_ticket_short_of_chips_at_match_time_is_told_on_its_stream(live: Live, matcher_loop):
    from chips import ledger

    people = [live.player() for _ in range(3)]
    for person in people:
        chips.open_wallet(person.user.pk)
    poor = people[0]
    stream = live.stream("/api/v1/me/stream", poor)
    assert stream.next().event == "games"
    ticket = poor.http.post(TICKETS, json={"room": "100:5", "bots_after": None}).json()
    ledger.post(
        cause="adjustment",
        key=f"adjustment:live-spent-{poor.user.pk}",
        postings={ledger.wallet_of(poor.user.pk): -950, ledger.house_id(): 950},
        user_id=poor.user.pk,
        reason="spent before the match",
    )
    for person in people[1:]:
        assert person.http.post(TICKETS, json={"room": "100:5"}).status_code == 201
    told = _next_event(stream, "ticket_cancelled")
    assert told.json == {**told.json, "ticket_id": ticket["id"], "reason": "insufficient_chips"}
