"""Players' names remembered per process: long while the process hears ``forget:`` notices,
dropped on a rename or a deletion in every process that hears, and whole when hearing stops."""

from __future__ import annotations

import time

import psycopg
import pytest
from django.contrib.auth import get_user_model

from accounts import logins
from core import notices
from games import players
from games.live import listener

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def hearing():
    """This process hears notices, as it does once its live listener is connected."""
    notices.set_hearing(True)
    yield
    notices.set_hearing(False)


def _heard(action) -> list[str]:
    """The notices ``action`` sends once committed, as a listener hears them."""
    with psycopg.connect(**listener.connection_params(), autocommit=True) as conn:
        conn.execute(f"LISTEN {notices.CHANNEL}")
        action()
        return [n.payload for n in conn.notifies(timeout=1.0, stop_after=None)]


def test_while_hearing_a_name_outlives_the_short_time(
    settings, hearing, user_factory, django_assert_num_queries
):
    settings.TONGITS_NAME_CACHE_SECONDS = 0.2
    settings.TONGITS_NAME_CACHE_HEARING_SECONDS = 60.0
    user = user_factory(username="ana")
    players.clear()
    assert players.names([user.pk]) == {user.pk: "ana"}
    time.sleep(0.3)
    with django_assert_num_queries(0):
        assert players.names([user.pk]) == {user.pk: "ana"}


def test_without_hearing_a_name_is_read_again_after_the_short_time(
    settings, user_factory, django_assert_num_queries
):
    settings.TONGITS_NAME_CACHE_SECONDS = 0.2
    settings.TONGITS_NAME_CACHE_HEARING_SECONDS = 60.0
    user = user_factory(username="ana")
    players.clear()
    players.names([user.pk])
    time.sleep(0.3)
    with django_assert_num_queries(1):
        assert players.names([user.pk]) == {user.pk: "ana"}


def test_a_rename_reaches_every_process_that_hears(settings, hearing, user_factory):
    settings.TONGITS_NAME_CACHE_HEARING_SECONDS = 60.0
    user = user_factory(username="ana")
    players.clear()
    assert players.names([user.pk]) == {user.pk: "ana"}
    # Another process's memory: kept, although the name below changes.
    players._names[user.pk] = (time.monotonic() + 60.0, players.shown(user), notices.epoch())

    def rename() -> None:
        user.username = "ana2"
        user.save()  # as the admin saves it

    remembered = players.shown(user)._replace(username="ana")

    heard = _heard(rename)
    assert f"forget:{user.pk}" in heard
    players._names[user.pk] = (time.monotonic() + 60.0, remembered, notices.epoch())
    assert players.names([user.pk]) == {user.pk: "ana"}
    for payload in heard:  # the listener hands each notice on
        notices.dispatch(payload)
    assert players.names([user.pk]) == {user.pk: "ana2"}


def test_a_new_display_name_or_avatar_is_heard_as_a_rename(hearing, user_factory):
    user = user_factory(username="ana")
    for change in ({"display_name": "Ana Reyes"}, {"avatar": "parol"}):

        def save(change: dict = change) -> None:
            logins.profile_update(user=user, **change)

        assert f"forget:{user.pk}" in _heard(save)
    assert players.profiles([user.pk])[user.pk] == ("ana", "Ana Reyes", "parol")


def test_a_log_in_forgets_no_name(hearing, user_factory):
    user = get_user_model().objects.get(pk=user_factory(username="ana").pk)

    def log_in() -> None:
        user.save(update_fields=["last_login"])

    assert not [p for p in _heard(log_in) if p.startswith("forget:")]


def test_when_hearing_stops_what_was_kept_long_is_dropped(
    settings, hearing, user_factory, django_assert_num_queries
):
    settings.TONGITS_NAME_CACHE_SECONDS = 60.0
    settings.TONGITS_NAME_CACHE_HEARING_SECONDS = 3600.0
    user = user_factory(username="ana")
    players.clear()
    players.names([user.pk])
    notices.set_hearing(False)  # the listener's connection went down: notices may be lost
    with django_assert_num_queries(1):
        players.names([user.pk])


def test_a_view_s_seats_are_kept_while_their_names_are(
    settings, hearing, user_factory, django_assert_num_queries
):
    settings.TONGITS_NAME_CACHE_HEARING_SECONDS = 60.0
    ana, bob = user_factory(username="ana"), user_factory(username="bob")
    seats = [
        {"kind": "user", "user_id": ana.pk},
        {"kind": "bot", "level": "easy"},
        {"kind": "user", "user_id": bob.pk, "username": "stored-long-ago"},
    ]
    players.clear()
    shown = players.public_seats(seats)
    assert shown == [
        {"seat": 0, "kind": "user", "user_id": ana.pk, **players.shown(ana).fields()},
        {"seat": 1, "kind": "bot", "level": "easy"},
        {"seat": 2, "kind": "user", "user_id": bob.pk, **players.shown(bob).fields()},
    ]
    assert shown[2]["username"] == shown[2]["display_name"] == "bob"
    with django_assert_num_queries(0):
        assert players.public_seats(seats) is shown
    bob.username = "bobby"
    bob.save()  # forgets bob's name here at once (and, on commit, everywhere that hears)
    assert players.public_seats(seats)[2]["username"] == "bobby"
