"""Two people asking each other at the same moment become friends exactly once: each asks in a
transaction of its own, in a thread of its own, released together (docs/friends.md)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connections

from notifications.models import Kind, Notification
from social import selectors, services
from social.models import Friendship

ROUNDS = 8
pytestmark = pytest.mark.usefixtures("fast_hashing")


@pytest.fixture
def fast_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _together(calls: list[Any]) -> list[Any]:
    """Run the calls in threads released by one barrier; their results (or exceptions)."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int) -> None:
        try:
            barrier.wait()
            results[index] = calls[index]()
        except Exception as exc:  # reported by the assertion below
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


@pytest.mark.django_db(transaction=True)
def test_two_people_asking_each_other_at_once_become_friends_exactly_once(user_factory):
    for _ in range(ROUNDS):
        a, b = user_factory(), user_factory()
        answers = _together(
            [
                lambda a=a, b=b: services.friend_add(user=a, username=b.username),
                lambda a=a, b=b: services.friend_add(user=b, username=a.username),
            ]
        )
        assert not [x for x in answers if isinstance(x, Exception)], answers
        assert sorted(entry["state"] for entry, _ in answers) == ["friends", "sent"]
        assert all(changed for _, changed in answers)
        rows = Friendship.objects.filter(user_low__in=[a, b], user_high__in=[a, b])
        assert rows.count() == 1 and rows.get().accepted_at is not None
        assert selectors.friend_ids(a.pk) == {b.pk} and selectors.friend_ids(b.pk) == {a.pk}
        asked = Notification.objects.filter(user__in=[a, b], kind=Kind.FRIEND_REQUEST)
        assert asked.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_block_and_a_request_at_once_never_leave_a_request_behind_a_block(user_factory):
    for _ in range(ROUNDS):
        a, b = user_factory(), user_factory()
        _together(
            [
                lambda a=a, b=b: services.friend_add(user=a, username=b.username),
                lambda a=a, b=b: services.block_add(user=b, username=a.username),
            ]
        )
        assert selectors.blocked_between(a.pk, b.pk)
        assert not Friendship.objects.filter(user_low__in=[a, b], user_high__in=[a, b]).exists()
