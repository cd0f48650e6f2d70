"""Reads of friends, blocks and presence (HackSoft styleguide: selectors read, ``social.services``
and ``social.presence`` write).

The matchmaker (``matchmaking``) keeps blocked people apart and lets friends queue together
with ``blocked_pairs``, ``blocked_between``, ``are_friends`` and ``friend_ids``; the lobby and
the chat consult ``may_seat`` and ``blocked_ids`` through their registries (``SocialConfig``).

Presence (``presences``) is what a friend sees of a person: ``playing`` while they sit at an
active table (with its id when the table is public), else ``online`` while a stream of theirs
is open (the stream cap's places, ``ops.stream_slots``), else ``offline`` with when they were
last seen. Nobody but their friends is shown it, and nobody at all when they hide it
(``show_presence``). However many people are asked about, it costs at most three queries and
one look at the stream places.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils.translation import gettext as _

from games import players
from games.errors import UnknownUser
from games.models import Game, Seat
from ops import stream_slots
from social.models import Block, Friendship, Presence

#: A friendship's states as the API names them, from the caller's side.
FRIENDS, RECEIVED, SENT = "friends", "received", "sent"


def pair(a: int, b: int) -> tuple[int, int]:
    """Two user ids in the order a friendship stores them."""
    return (a, b) if a < b else (b, a)


def person_get(*, username: str) -> Any:
    """An active person (not a bot) by username, ignoring case; ``UnknownUser`` (400
    ``unknown_user``, the lobby's answer) otherwise."""
    user = (
        get_user_model()
        .objects.annotate(username_lower=Lower("username"))
        .filter(username_lower=username.lower(), is_active=True, is_bot=False)
        .first()
    )
    if user is None:
        raise unknown(username)
    return user


def unknown(username: str) -> UnknownUser:
    """The answer for a person who is not there, or is kept apart from the caller by a block:
    the same words as the lobby's for a name it does not know."""
    return UnknownUser(_("No user named %(username)s.") % {"username": repr(username)})


# ---------------------------------------------------------------- for the matchmaker


def blocked_pairs(user_ids: Iterable[int]) -> set[frozenset[int]]:
    """The pairs among ``user_ids`` where either blocked the other (one query)."""
    ids = {int(uid) for uid in user_ids}
    if len(ids) < 2:
        return set()
    rows = Block.objects.filter(user_id__in=ids, blocked_id__in=ids).values_list(
        "user_id", "blocked_id"
    )
    return {frozenset(row) for row in rows}


def blocked_between(a: int, b: int) -> bool:
    """Whether either of the two blocked the other."""
    return Block.objects.filter(Q(user_id=a, blocked_id=b) | Q(user_id=b, blocked_id=a)).exists()


def are_friends(a: int, b: int) -> bool:
    """Whether the two are friends (a request waiting for an answer is not a friendship)."""
    low, high = pair(a, b)
    return Friendship.objects.filter(
        user_low_id=low, user_high_id=high, accepted_at__isnull=False
    ).exists()


def _of(user_id: int) -> Q:
    return Q(user_low_id=user_id) | Q(user_high_id=user_id)


def friend_ids(user_id: int) -> set[int]:
    """The ids of the user's friends (one query)."""
    rows = Friendship.objects.filter(_of(user_id), accepted_at__isnull=False).values_list(
        "user_low_id", "user_high_id"
    )
    return {high if low == user_id else low for low, high in rows}


# ---------------------------------------------------------------- for the lobby and the chat


def blocked_ids(user_id: int) -> set[int]:
    """Everyone the user blocked or was blocked by (one query): the chat's hidden authors."""
    rows = Block.objects.filter(Q(user_id=user_id) | Q(blocked_id=user_id)).values_list(
        "user_id", "blocked_id"
    )
    return {blocked if blocker == user_id else blocker for blocker, blocked in rows}


def may_seat(by_user_id: int, user_id: int) -> bool:
    """The lobby's seating guard: nobody is invited to a table by someone they are kept apart
    from, either way round."""
    return not blocked_between(by_user_id, user_id)


# ---------------------------------------------------------------- presence


def presences(user_ids: Iterable[int]) -> dict[int, dict[str, Any] | None]:
    """What a friend is shown of each of these people now: ``{"status": "playing" | "online" |
    "offline", "game_id": <the table, when it is public> | None, "last_seen": <when their
    streams last came or went, offline only> | None}``, or None when they hide it (or the
    account is gone). The caller decides who may see it (their friends only)."""
    ids = {int(uid) for uid in user_ids}
    out: dict[int, dict[str, Any] | None] = dict.fromkeys(ids)
    shown = set(
        get_user_model()
        .objects.filter(pk__in=ids, show_presence=True, is_active=True, deleted_at__isnull=True)
        .values_list("pk", flat=True)
    )
    if not shown:
        return out
    playing: dict[int, str | None] = {}
    seats = (
        Seat.objects.filter(user_id__in=shown, game__status=Game.Status.ACTIVE)
        .order_by("game__started_at")
        .values_list("user_id", "game_id", "game__visibility")
    )
    for user_id, game_id, visibility in seats:  # the newest table last: the one shown
        playing[user_id] = str(game_id) if visibility == Game.Visibility.PUBLIC else None
    rest = shown - playing.keys()
    online = stream_slots.holders(rest)
    offline = rest - online
    seen = dict(Presence.objects.filter(user_id__in=offline).values_list("user_id", "last_seen"))
    for user_id in shown:
        if user_id in playing:
            out[user_id] = _state("playing", playing[user_id], None)
        elif user_id in online:
            out[user_id] = _state("online", None, None)
        else:
            out[user_id] = _state("offline", None, seen.get(user_id))
    return out


def _state(status: str, game_id: str | None, last_seen: datetime | None) -> dict[str, Any]:
    return {"status": status, "game_id": game_id, "last_seen": last_seen}


# ---------------------------------------------------------------- a user's own lists


def _entry(user_id: int, state: str, since: datetime, presence: Any = None) -> dict[str, Any]:
    return {"user_id": user_id, "state": state, "since": since, "presence": presence}


def _named(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries with each person's username, display name and avatar as shown now."""
    found = players.profiles(e["user_id"] for e in entries)
    return [{**e, **found.get(e["user_id"], players.GONE).fields()} for e in entries]


def friend_list(*, user: Any) -> dict[str, list[dict[str, Any]]]:
    """``GET /me/friends``: friends (by name, with their presence), the requests received and
    the requests sent (newest first)."""
    rows = list(Friendship.objects.filter(_of(user.pk)).order_by("-requested_at", "-id"))
    friends = [r for r in rows if r.accepted_at is not None]
    shown = presences(r.other(user.pk) for r in friends)
    listed = {
        FRIENDS: _named(
            [
                _entry(r.other(user.pk), FRIENDS, r.accepted_at, shown[r.other(user.pk)])
                for r in friends
            ]
        ),
        RECEIVED: _named(
            [
                _entry(r.requested_by_id, RECEIVED, r.requested_at)
                for r in rows
                if r.accepted_at is None and r.requested_by_id != user.pk
            ]
        ),
        SENT: _named(
            [
                _entry(r.other(user.pk), SENT, r.requested_at)
                for r in rows
                if r.accepted_at is None and r.requested_by_id == user.pk
            ]
        ),
    }
    listed[FRIENDS].sort(key=lambda e: (e["display_name"].casefold(), e["username"].casefold()))
    return listed


def friend_entry(*, user: Any, row: Friendship) -> dict[str, Any]:
    """The caller's friendship or request ``row`` as ``friend_list`` shows it."""
    other_id = row.other(user.pk)
    if row.accepted_at is not None:
        entry = _entry(other_id, FRIENDS, row.accepted_at, presences([other_id])[other_id])
    elif row.requested_by_id == user.pk:
        entry = _entry(other_id, SENT, row.requested_at)
    else:
        entry = _entry(other_id, RECEIVED, row.requested_at)
    return _named([entry])[0]


def block_entry(row: Block) -> dict[str, Any]:
    """One block as ``block_list`` shows it."""
    found = players.profiles([row.blocked_id]).get(row.blocked_id, players.GONE)
    return {**found.fields(), "created_at": row.created_at}


def block_list(*, user: Any) -> list[dict[str, Any]]:
    """``GET /me/blocks``: the people the user blocked, newest first."""
    rows = list(Block.objects.filter(user_id=user.pk).order_by("-created_at", "-id"))
    found = players.profiles(row.blocked_id for row in rows)
    return [
        {**found.get(row.blocked_id, players.GONE).fields(), "created_at": row.created_at}
        for row in rows
    ]


def export(user: Any) -> dict[str, Any]:
    """``/me/export``'s ``social``: whether presence is shown, the friends, the requests either
    way and the blocks (names as shown now)."""
    listed = friend_list(user=user)
    strip = ("presence", "state")
    return {
        "show_presence": bool(user.show_presence),
        "friends": [{k: v for k, v in e.items() if k not in strip} for e in listed[FRIENDS]],
        "requests_received": [
            {k: v for k, v in e.items() if k not in strip} for e in listed[RECEIVED]
        ],
        "requests_sent": [{k: v for k, v in e.items() if k not in strip} for e in listed[SENT]],
        "blocks": block_list(user=user),
    }
