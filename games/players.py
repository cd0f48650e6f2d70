"""Players' names and faces, resolved at read time: events name a person only by their user id.

``game_started`` names each person's seat ``{"kind": "user", "user_id": <id>}`` (events written
before this carry a ``username`` too). Nothing stored is rewritten; every read that shows a seat
goes through ``present_seats``, which drops a stored name and puts the account's current one
(``public_name``: "deleted player" once the account is deleted), with the display name and
avatar key the profile shows beside it (``shown_name``, ``avatar_key``); events themselves are shown
through ``upcast_event``, which only drops the stored names of older events. Names are
remembered per process (a game view is on every move's path): ``forget`` drops one at once in
this process (a deleted or renamed account), and every process that hears the ``forget:<id>``
notices (``core.notices``: its live listener connected) drops it on commit, so while a process
hears them a name is kept ``TONGITS_NAME_CACHE_HEARING_SECONDS`` (an hour), and only
``TONGITS_NAME_CACHE_SECONDS`` (60 s) while it does not. When the hearing starts or stops, what
was kept long is dropped (notices may have been missed meanwhile).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any, NamedTuple

from django.conf import settings
from django.contrib.auth import get_user_model

from core import notices

#: Shown for a seat whose account no longer exists (or was deleted).
DELETED_NAME = "deleted player"
MAX_ENTRIES = 20_000


class Shown(NamedTuple):
    """How a person is shown: the username, the display name beside it, the avatar's key."""

    username: str
    display_name: str
    avatar: str | None

    def fields(self) -> dict[str, Any]:
        return {"username": self.username, "display_name": self.display_name, "avatar": self.avatar}


GONE = Shown(DELETED_NAME, DELETED_NAME, None)

_lock = threading.Lock()
# user id -> (fresh until, how shown, the hearing epoch of a long-kept one)
_names: dict[int, tuple[float, Shown, int | None]] = {}
_forgets = 0  # counts forget() and clear(): a read that one overtook is not kept


def display_name(user: Any) -> str:
    """The name a user is shown under now (``public_name`` when the user model has one)."""
    if user is None:
        return DELETED_NAME
    return getattr(user, "public_name", None) or user.get_username()


def shown(user: Any) -> Shown:
    """How a user is shown now: username, display name and avatar (the user model's
    ``shown_name`` and ``avatar_key`` when it has them)."""
    if user is None:
        return GONE
    name = display_name(user)
    return Shown(name, getattr(user, "shown_name", None) or name, getattr(user, "avatar_key", None))


def profiles(user_ids: Iterable[int]) -> dict[int, Shown]:
    """How these users are shown now (one query for those not remembered)."""
    wanted = {uid for uid in user_ids if isinstance(uid, int)}
    now = time.monotonic()
    out: dict[int, Shown] = {}
    with _lock:
        for uid in wanted:
            found = _fresh(uid, now)
            if found is not None:
                out[uid] = found
    missing = wanted - out.keys()
    if missing:
        epoch, forgets = notices.epoch(), _forgets  # taken before the read
        read = {u.pk: shown(u) for u in get_user_model().objects.filter(pk__in=missing)}
        ttl, kept_in = _ttl(epoch)
        with _lock:
            if len(_names) >= MAX_ENTRIES:
                _names.clear()
            keep = ttl > 0 and forgets == _forgets  # no name was forgotten during the read
            for uid in missing:
                out[uid] = read.get(uid, GONE)
                if keep:
                    _names[uid] = (now + ttl, out[uid], kept_in)
    return out


def names(user_ids: Iterable[int]) -> dict[int, str]:
    """Current usernames of these users (one query for those not remembered)."""
    return {uid: found.username for uid, found in profiles(user_ids).items()}


def _ttl(epoch: int) -> tuple[float, int | None]:
    """How long a name read now is kept, and the hearing epoch it is good for when it is kept
    longer because this process hears ``forget:`` notices (None: kept the short time)."""
    short = float(getattr(settings, "TONGITS_NAME_CACHE_SECONDS", 0.0))
    if short <= 0 or not notices.hearing():
        return short, None
    long = float(getattr(settings, "TONGITS_NAME_CACHE_HEARING_SECONDS", 0.0))
    return (long, epoch) if long > short else (short, None)


def _fresh(user_id: int, now: float) -> Shown | None:
    """How ``user_id`` is remembered, if it has not expired (under ``_lock``)."""
    hit = _names.get(user_id)
    if hit is None or hit[0] <= now:
        return None
    if hit[2] is not None and hit[2] != notices.epoch():
        return None  # kept long while hearing, and the hearing has changed since
    return hit[1]


def remembered(user_ids: Iterable[Any]) -> bool:
    """Whether every one of these users' names is remembered: showing them needs no query."""
    now = time.monotonic()
    with _lock:
        return all(_fresh(uid, now) is not None for uid in user_ids if isinstance(uid, int))


def present_seats(seats: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Seats of ``game_started`` as shown: a stored ``username`` is dropped (older events carry
    one: upcast on read), the user's current name, display name and avatar put in its place."""
    seats = [dict(seat) for seat in seats]
    known = profiles(seat.get("user_id") for seat in seats if seat.get("kind", "user") == "user")
    for seat in seats:
        seat.pop("username", None)
        seat.pop("name", None)
        if seat.get("kind", "user") == "user" and "user_id" in seat:
            seat.update(known.get(seat["user_id"], GONE).fields())
    return seats


#: Seats as a game view shows them, per seats and names: (shown, fresh until, forgets, epoch).
_shown: dict[tuple, tuple[list[dict[str, Any]], float, int, int]] = {}
_SHOWN_KEYS = ("user_id", "username", "display_name", "avatar", "level")


def public_seats(seats: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Seats of ``game_started`` as a game view lists them (``seat``, ``kind``, ``user_id``,
    ``username``, ``display_name``, ``avatar``, ``level``), under the current names. Every view
    of every move shows them, so the list is kept for as long as each of its names is: callers
    must not change it."""
    seats = tuple(seats)
    key = tuple((s.get("kind", "user"), s.get("user_id"), s.get("level")) for s in seats)
    now = time.monotonic()
    hit = _shown.get(key)
    if hit is not None and hit[1] > now and hit[2] == _forgets and hit[3] == notices.epoch():
        return hit[0]
    forgets, epoch = _forgets, notices.epoch()
    shown = []
    for index, seat in enumerate(present_seats(seats)):
        entry = {"seat": index, "kind": seat.get("kind", "user")}
        for name in _SHOWN_KEYS:
            if name in seat:
                entry[name] = seat[name]
        shown.append(entry)
    with _lock:
        users = [uid for _, uid, _ in key if isinstance(uid, int)]
        kept = [_names.get(uid) for uid in users]
        if all(k is not None and (k[2] is None or k[2] == epoch) for k in kept):
            until = min((k[0] for k in kept if k is not None), default=now + 3600.0)
            if len(_shown) >= MAX_ENTRIES:
                _shown.clear()
            _shown[key] = (shown, until, forgets, epoch)
    return shown


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
    """Drop a remembered name at once in this process (the account was deleted or renamed)."""
    global _forgets
    with _lock:
        _forgets += 1
        _names.pop(user_id, None)


def clear() -> None:
    global _forgets
    with _lock:
        _forgets += 1
        _names.clear()
        _shown.clear()
