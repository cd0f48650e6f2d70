"""Players' names, resolved at read time: events name a person only by their user id.

``game_started`` names each person's seat ``{"kind": "user", "user_id": <id>}`` (events written
before this carry a ``username`` too). Nothing stored is rewritten; every read that shows a seat
goes through ``present_seats``, which drops a stored name and puts the account's current one
(``public_name``: "deleted player" once the account is deleted); events themselves are shown
through ``upcast_event``, which only drops the stored names of older events. Names are
remembered per process for ``TONGITS_NAME_CACHE_SECONDS`` (a game view is on every move's path);
``forget`` drops one at once in this process (account deletion), other processes follow within
that time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model

#: Shown for a seat whose account no longer exists (or was deleted).
DELETED_NAME = "deleted player"
MAX_ENTRIES = 20_000

_lock = threading.Lock()
_names: dict[int, tuple[float, str]] = {}  # user id -> (fresh until, name)


def display_name(user: Any) -> str:
    """The name a user is shown under now (``public_name`` when the user model has one)."""
    if user is None:
        return DELETED_NAME
    return getattr(user, "public_name", None) or user.get_username()


def names(user_ids: Iterable[int]) -> dict[int, str]:
    """Current names of these users (one query for those not remembered)."""
    wanted = {uid for uid in user_ids if isinstance(uid, int)}
    now = time.monotonic()
    out: dict[int, str] = {}
    with _lock:
        for uid in wanted:
            name = _fresh(uid, now)
            if name is not None:
                out[uid] = name
    missing = wanted - out.keys()
    if missing:
        found = {u.pk: display_name(u) for u in get_user_model().objects.filter(pk__in=missing)}
        ttl = float(getattr(settings, "TONGITS_NAME_CACHE_SECONDS", 0.0))
        with _lock:
            if len(_names) >= MAX_ENTRIES:
                _names.clear()
            for uid in missing:
                out[uid] = found.get(uid, DELETED_NAME)
                if ttl > 0:
                    _names[uid] = (now + ttl, out[uid])
    return out


def _fresh(user_id: int, now: float) -> str | None:
    """The name remembered for ``user_id``, if it has not expired (under ``_lock``)."""
    hit = _names.get(user_id)
    return hit[1] if hit is not None and hit[0] > now else None


def remembered(user_ids: Iterable[Any]) -> bool:
    """Whether every one of these users' names is remembered: showing them needs no query."""
    now = time.monotonic()
    with _lock:
        return all(_fresh(uid, now) is not None for uid in user_ids if isinstance(uid, int))


def present_seats(seats: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Seats of ``game_started`` as shown: a stored ``username`` is dropped (older events carry
    one: upcast on read), the user's current name put in its place."""
    seats = [dict(seat) for seat in seats]
    known = names(seat.get("user_id") for seat in seats if seat.get("kind", "user") == "user")
    for seat in seats:
        seat.pop("username", None)
        seat.pop("name", None)
        if seat.get("kind", "user") == "user" and "user_id" in seat:
            seat["username"] = known.get(seat["user_id"], DELETED_NAME)
    return seats


def upcast_event(data: Any) -> Any:
    """An event's data as shown: the names older ``game_started`` events stored are dropped.

    Nothing is added: an event's data stays what its hash covers (clients check the receipts),
    so current names are shown beside the events (a view's ``seats``), never inside them. Only
    the ``game_started`` of games begun before names left the log differs from its stored form.
    """
    if isinstance(data, dict) and data.get("type") == "game_started" and "seats" in data:
        seats = [
            {k: v for k, v in seat.items() if k not in ("username", "name")}
            if isinstance(seat, dict)
            else seat
            for seat in data["seats"]
        ]
        if seats != data["seats"]:
            return {**data, "seats": seats}
    return data


def forget(user_id: int) -> None:
    """Drop a remembered name at once in this process (the account was deleted)."""
    with _lock:
        _names.pop(user_id, None)


def clear() -> None:
    with _lock:
        _names.clear()
