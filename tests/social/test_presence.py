"""Presence: what is recorded when a person's streams come and go, who is woken and when, the
/me/stream source's frames (each change once), and what it all costs with 500 friends
(docs/friends.md)."""

from __future__ import annotations

import itertools
from datetime import timedelta

import psycopg
import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts import logins
from core import listening
from games import lobby, play, players, settlement, store
from games.models import Game
from ops import stream_slots
from social import live, presence, selectors, services
from social.models import Friendship, Presence

BOTS = [{"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}]
QUICK = {"preset": "standard", "wins_to_match": 1, "turn_seconds": 0}
pytestmark = pytest.mark.usefixtures("fast_hashing", "no_watchers")


@pytest.fixture
def fast_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def no_watchers(monkeypatch) -> None:
    """The test looks at the streams it opens itself (``presence.look``), in its own thread."""
    monkeypatch.setattr(stream_slots, "WATCHERS", [])


@pytest.fixture
def people(user_factory):
    return [user_factory(username=name) for name in ("ana", "ben", "cora", "dan")]


def friends(a, b) -> None:
    services.friend_add(user=a, username=b.username)
    services.friend_add(user=b, username=a.username)


class Notices:
    """The games' notice channel, heard by a connection of the test's own: what each step sent
    is read up to a marker the test sends after it, so nothing is waited for by the clock."""

    def __init__(self) -> None:
        self.conn = psycopg.connect(**listening.session_params(), autocommit=True)
        self.conn.execute("LISTEN game_events")
        self.markers = itertools.count()

    def since_last(self) -> list[str]:
        marker = f"marker:{next(self.markers)}"
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_notify('game_events', %s)", [marker])
        heard = []
        for note in self.conn.notifies(timeout=10):
            if note.payload == marker:
                return heard
            heard.append(note.payload)
        raise AssertionError(f"{marker} never arrived; heard {heard}")

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def notices(transactional_db):
    heard = Notices()
    yield heard
    heard.close()


def wakes(payloads: list[str]) -> set[int]:
    return {int(p.split(":", 1)[1]) for p in payloads if p.startswith("wake-user:")}


# ---------------------------------------------------------------- streams coming and going


def test_a_stream_coming_and_going_is_recorded_once_and_wakes_the_friends(people, notices):
    ana, ben, cora, dan = people
    friends(ana, ben)
    friends(dan, ben)
    services.friend_add(user=cora, username="ben")  # a request: cora is not told
    notices.since_last()

    first = stream_slots.take(ben.pk)
    second = stream_slots.take(ben.pk)
    assert presence.look(ben.pk) is True
    assert wakes(notices.since_last()) == {ana.pk, dan.pk}
    assert presence.look(ben.pk) is False  # still online: nothing to tell
    stream_slots.release(first)
    assert presence.look(ben.pk) is False  # one stream is still open
    assert notices.since_last() == []
    assert selectors.presences([ben.pk])[ben.pk]["status"] == "online"

    before = timezone.now()
    stream_slots.release(second)
    assert presence.look(ben.pk) is True
    assert wakes(notices.since_last()) == {ana.pk, dan.pk}
    shown = selectors.presences([ben.pk])[ben.pk]
    assert shown["status"] == "offline" and shown["last_seen"] >= before


def test_someone_hiding_presence_is_news_once_and_then_tells_nobody(people, notices):
    ana, ben, _, _ = people
    friends(ana, ben)
    notices.since_last()
    logins.profile_update(user=ben, show_presence=False)
    assert wakes(notices.since_last()) == {ana.pk}
    stream_slots.take(ben.pk)
    assert presence.look(ben.pk) is True  # recorded (for last_seen), told to nobody
    assert wakes(notices.since_last()) == set()
    assert selectors.presences([ben.pk]) == {ben.pk: None}
    logins.profile_update(user=ben, display_name="Benny")
    assert wakes(notices.since_last()) == set()  # other profile changes are no news


def test_a_friendship_beginning_or_ending_wakes_both_people(people, notices):
    ana, ben, _, _ = people
    services.friend_add(user=ana, username="ben")
    notices.since_last()
    services.friend_add(user=ben, username="ana")
    assert wakes(notices.since_last()) == {ana.pk, ben.pk}
    services.block_add(user=ana, username="ben")
    assert wakes(notices.since_last()) == {ana.pk, ben.pk}


def test_no_cap_on_streams_means_nobody_is_seen_online(people, settings):
    settings.TONGITS_MAX_STREAMS_PER_USER = 0
    ana, ben, _, _ = people
    stream_slots.take(ben.pk)
    assert stream_slots.holders([ana.pk, ben.pk]) == set()
    assert selectors.presences([ben.pk])[ben.pk]["status"] == "offline"


# ---------------------------------------------------------------- the /me/stream source


def _frames(user_id: int, position: live.Position) -> tuple[list[dict], live.Position]:
    import json

    raw, position = live.stream_more(user_id, position)
    out = []
    for chunk in raw:
        head, _, data = chunk.decode().partition("\ndata: ")
        assert head == "event: presence"
        out.append(json.loads(data))
    return out, position


def finish(game_id) -> None:
    """The people resign and the bots play the match out; then it is settled."""
    head = store.read(game_id)
    for seat in head.state().seats:
        if seat.get("user_id"):
            play.resign(game_id, seat["user_id"])
    for _ in range(5000):
        head = store.read(game_id)
        if head.status != Game.Status.ACTIVE:
            break
        assert play.play_bot_turn(game_id=game_id, expected_version=head.version) == "done"
    else:
        raise AssertionError("the match does not end")
    with transaction.atomic():
        settlement.settle(game_id=game_id)


def test_the_stream_source_sends_each_change_of_a_friend_once(people, db):
    ana, ben, cora, dan = people
    friends(ana, ben)
    position = live.stream_start(ana.pk)
    assert _frames(ana.pk, position)[0] == []  # the friendship is no news once the stream is open

    stream_slots.take(ben.pk)
    presence.look(ben.pk)
    got, position = _frames(ana.pk, position)
    assert [(f["username"], f["friend"], f["presence"]["status"]) for f in got] == [
        ("ben", True, "online")
    ]
    assert got[0]["user_id"] == ben.pk and got[0]["server_time"]
    assert _frames(ana.pk, position)[0] == []  # the same change is not sent twice

    game = lobby.table_create(
        user=ben, rules=QUICK, seats=[{"kind": "user"}, *BOTS], visibility="public"
    )
    got, position = _frames(ana.pk, position)
    assert [f["presence"] for f in got] == [
        {"status": "playing", "game_id": str(game.pk), "last_seen": None}
    ]
    finish(game.pk)
    got, position = _frames(ana.pk, position)
    assert [f["presence"]["status"] for f in got] == ["online"]

    logins.profile_update(user=ben, show_presence=False)
    got, position = _frames(ana.pk, position)
    assert [(f["username"], f["presence"]) for f in got] == [("ben", None)]

    friends(ana, cora)
    services.friend_remove(user=ana, username="ben")
    got, position = _frames(ana.pk, position)
    assert sorted((f["username"], f["friend"]) for f in got) == [("ben", False), ("cora", True)]
    assert _frames(ana.pk, position)[0] == []
    assert _frames(dan.pk, live.stream_start(dan.pk))[0] == []


# ---------------------------------------------------------------- what it costs


def _many_friends(user, count: int) -> None:
    made = get_user_model().objects.bulk_create(
        get_user_model()(username=f"{user.username}-friend-{n}") for n in range(count)
    )
    long_ago = timezone.now() - timedelta(hours=1)
    Friendship.objects.bulk_create(
        Friendship(
            user_low_id=min(user.pk, other.pk),
            user_high_id=max(user.pk, other.pk),
            requested_by_id=other.pk,
            requested_at=long_ago,
            accepted_at=long_ago,
        )
        for other in made
    )


def _queries(fn) -> int:
    players.clear()
    with CaptureQueriesContext(connection) as captured:
        fn()
    return len(captured)


def test_coming_online_with_500_friends_costs_what_it_costs_with_one(people, notices):
    ana, ben, cora, _ = people
    friends(ana, cora)
    _many_friends(ben, 500)
    notices.since_last()
    stream_slots.take(ana.pk)
    stream_slots.take(ben.pk)
    with_one = _queries(lambda: presence.look(ana.pk))
    with_500 = _queries(lambda: presence.look(ben.pk))
    assert with_500 == with_one
    assert len(wakes(notices.since_last())) == 1 + 500


def test_a_woken_stream_reads_the_friend_that_changed_not_every_friend(people, db):
    ana, ben, cora, dan = people
    friends(ana, ben)
    friends(cora, ben)
    _many_friends(cora, 500)
    few, many = live.stream_start(ana.pk), live.stream_start(cora.pk)
    Presence.objects.all().delete()
    stream_slots.take(ben.pk)
    presence.look(ben.pk)
    with_one = _queries(lambda: live.stream_more(ana.pk, few))
    with_501 = _queries(lambda: live.stream_more(cora.pk, many))
    assert with_501 == with_one
    assert len(live.stream_more(cora.pk, many)[0]) == 1
