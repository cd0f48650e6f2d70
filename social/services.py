"""Writes of friends and blocks: ask, accept, end, block, unblock (HackSoft styleguide; reads in
``social.selectors``, presence in ``social.presence``).

Every write that concerns two people takes a transaction-scoped advisory lock on each of them,
in id order, before it reads anything: two people asking each other at the same moment are
serialised, so the second finds the first's request and accepts it (one friendship, never two
requests), and a block and a request cannot cross. The limits are counted under the same
locks, so they hold exactly.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts import selectors as account_selectors
from social import presence, selectors, signals
from social.errors import (
    CannotBefriendSelf,
    CannotBlockSelf,
    TooManyFriendRequests,
    TooManyFriends,
)
from social.models import Block, Friendship


def _lock(*user_ids: int) -> None:
    """Each person's social lock, in id order, until the transaction ends."""
    with connection.cursor() as cursor:
        for user_id in sorted(set(user_ids)):
            cursor.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"social:{user_id}"]
            )


def _counts(user_id: int) -> dict[str, int]:
    """The person's friends, requests sent and requests received, in one query."""
    return Friendship.objects.filter(Q(user_low_id=user_id) | Q(user_high_id=user_id)).aggregate(
        friends=Count("id", filter=Q(accepted_at__isnull=False)),
        sent=Count("id", filter=Q(accepted_at__isnull=True, requested_by_id=user_id)),
        received=Count("id", filter=Q(accepted_at__isnull=True) & ~Q(requested_by_id=user_id)),
    )


def _room_for_friend(user: Any, other: Any) -> None:
    """Both may have one friend more (409 ``too_many_friends`` otherwise)."""
    limit = int(settings.TONGITS_MAX_FRIENDS)
    if _counts(user.pk)["friends"] >= limit:
        raise TooManyFriends(
            _("You have the most friends there may be (%(limit)s): remove one first.")
            % {"limit": limit}
        )
    if _counts(other.pk)["friends"] >= limit:
        raise TooManyFriends(
            _("%(username)s has the most friends there may be (%(limit)s).")
            % {"username": other.username, "limit": limit}
        )


def _room_to_ask(user: Any, other: Any) -> None:
    """The asker may have one friend and one request more, and the asked one more request
    waiting (409 ``too_many_friends`` / ``too_many_friend_requests`` otherwise)."""
    mine = _counts(user.pk)
    limit = int(settings.TONGITS_MAX_FRIEND_REQUESTS)
    if mine["friends"] >= int(settings.TONGITS_MAX_FRIENDS):
        raise TooManyFriends(
            _("You have the most friends there may be (%(limit)s): remove one first.")
            % {"limit": settings.TONGITS_MAX_FRIENDS}
        )
    if mine["sent"] >= limit:
        raise TooManyFriendRequests(
            _(
                "Too many of your friend requests are waiting for an answer (at most "
                "%(limit)s): withdraw one first."
            )
            % {"limit": limit}
        )
    if _counts(other.pk)["received"] >= limit:
        raise TooManyFriendRequests(
            _("%(username)s has too many friend requests waiting for an answer.")
            % {"username": other.username}
        )


def friend_add(*, user: Any, username: str) -> tuple[dict[str, Any], bool]:
    """``POST /me/friends``: ask ``username`` to be friends, or accept their request if they
    asked first. The entry as ``GET /me/friends`` shows it, and whether anything changed (a
    request sent, or a friendship begun; asking again, or a friend, changes nothing).

    A person who is not there, a bot, or someone either of the two blocked is 400
    ``unknown_user``, the same answer; oneself 400 ``cannot_befriend_self``; past the limits
    409 ``too_many_friends`` / ``too_many_friend_requests``. A new request sends
    ``signals.friend_requested`` (the asked person's ``friend_request`` notification)."""
    other = selectors.person_get(username=username)
    if other.pk == user.pk:
        raise CannotBefriendSelf()
    low, high = selectors.pair(user.pk, other.pk)
    with transaction.atomic():
        _lock(user.pk, other.pk)
        if selectors.blocked_between(user.pk, other.pk):
            raise selectors.unknown(username)
        row = Friendship.objects.filter(user_low_id=low, user_high_id=high).first()
        now = timezone.now()
        if row is None:
            _room_to_ask(user, other)
            row = Friendship.objects.create(
                user_low_id=low, user_high_id=high, requested_by_id=user.pk, requested_at=now
            )
            signals.friend_requested.send(
                Friendship, request_id=row.pk, user_id=other.pk, by_user_id=user.pk, at=now
            )
            changed = True
        elif row.accepted_at is None and row.requested_by_id == other.pk:
            _room_for_friend(user, other)
            row.accepted_at = now
            row.save(update_fields=["accepted_at"])
            presence.wake([user.pk, other.pk])  # each stream starts showing the other
            changed = True
        else:
            changed = False
    return selectors.friend_entry(user=user, row=row), changed


def friend_remove(*, user: Any, username: str) -> None:
    """``DELETE /me/friends/{username}``: end the friendship, withdraw the request sent or
    decline the one received (none: nothing to do). 404 for a name nobody has."""
    other = account_selectors.player_get(username=username)
    low, high = selectors.pair(user.pk, other.pk)
    with transaction.atomic():
        _lock(user.pk, other.pk)
        ended, _ = Friendship.objects.filter(user_low_id=low, user_high_id=high).delete()
        if ended:
            presence.wake([user.pk, other.pk])  # a friend's stream stops showing the other


def block_add(*, user: Any, username: str) -> tuple[dict[str, Any], bool]:
    """``POST /me/blocks``: keep ``username`` away. Their friendship or request with the caller
    ends; from then on chat hides each from the other, and neither can invite the other, ask
    them to be friends or be matched with them (they are answered as for a name nobody has).
    The entry as ``GET /me/blocks`` shows it, and whether it is new."""
    other = selectors.person_get(username=username)
    if other.pk == user.pk:
        raise CannotBlockSelf()
    low, high = selectors.pair(user.pk, other.pk)
    with transaction.atomic():
        _lock(user.pk, other.pk)
        row, created = Block.objects.get_or_create(user_id=user.pk, blocked_id=other.pk)
        ended, _ = Friendship.objects.filter(user_low_id=low, user_high_id=high).delete()
        if ended:
            presence.wake([user.pk, other.pk])
    return selectors.block_entry(row), created


def block_remove(*, user: Any, username: str) -> None:
    """``DELETE /me/blocks/{username}``: lift a block (none: nothing to do). Nothing that
    the block ended comes back. 404 for a name nobody has."""
    other = account_selectors.player_get(username=username)
    Block.objects.filter(user_id=user.pk, blocked_id=other.pk).delete()


def forget_user(user_id: int) -> None:
    """An account's deletion: its friends' streams drop it, and its friendships, requests,
    blocks (either way) and presence go."""
    presence.forget(user_id)
    Friendship.objects.filter(Q(user_low_id=user_id) | Q(user_high_id=user_id)).delete()
    Block.objects.filter(Q(user_id=user_id) | Q(blocked_id=user_id)).delete()
