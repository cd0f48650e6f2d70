"""A short per-process memory of token look-ups.

A player's client sends two or three requests per move; looking the token up in the database on
each one costs a round trip and the ORM's query building. A revoked token (logout) or a
deactivated user is refused at once by the process that revoked it (``forget``,
``forget_sessions``, ``forget_user``) and, on commit, by every process that hears the notices
(``core.notices``: a session deleted sends ``forget-session:<id>``, a user deactivated or deleted
``forget-user:<id>``, sent for any change of the user a request may read, a log-in's
``last_login`` aside). So a look-up is remembered ``TONGITS_TOKEN_CACHE_HEARING_SECONDS`` (600 s)
while this process hears them, and only ``TONGITS_TOKEN_CACHE_SECONDS`` (1 s) while it does not
(no live listener yet, or its connection down): that is how late another process may be. When
the process's hearing starts or stops, what it remembered is dropped. An expired session is
refused even when remembered. ``accounts.authentication`` reads it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from django.conf import settings

from core import notices

_lock = threading.Lock()
# key -> (expires at, user, token, the hearing epoch of a long-kept one)
_seen: dict[str, tuple[float, Any, Any, int | None]] = {}
MAX_ENTRIES = 10_000


FORGET_SESSION = notices.FORGET_SESSION
FORGET_USER = notices.FORGET_USER


def ttl() -> float:
    """How long a look-up is remembered now: longer while this process hears revocations."""
    short = float(getattr(settings, "TONGITS_TOKEN_CACHE_SECONDS", 0.0))
    if short <= 0 or not notices.hearing():
        return short
    return max(short, float(getattr(settings, "TONGITS_TOKEN_CACHE_HEARING_SECONDS", 0.0)))


def get(key: str) -> tuple[Any, Any] | None:
    """(user, token) remembered for ``key``, if still fresh."""
    with _lock:
        hit = _seen.get(key)
    if hit is None or hit[0] <= time.monotonic():
        return None
    if hit[3] is not None and hit[3] != notices.epoch():
        return None  # remembered long while hearing, and the hearing has changed since
    return hit[1], hit[2]


def put(key: str, user: Any, token: Any) -> None:
    epoch = notices.epoch()
    seconds = ttl()
    if seconds <= 0:
        return
    long = seconds > float(getattr(settings, "TONGITS_TOKEN_CACHE_SECONDS", 0.0))
    with _lock:
        if len(_seen) >= MAX_ENTRIES:
            _seen.clear()
        _seen[key] = (time.monotonic() + seconds, user, token, epoch if long else None)


def forget(key: str) -> None:
    """Drop a token from this process's memory (logout, deactivation)."""
    with _lock:
        _seen.pop(key, None)


def forget_sessions(session_ids: set[Any]) -> None:
    """Drop these sessions (by the session's pk: the keys themselves are not stored) from this
    process's memory: a session ended by id, a logout everywhere, a password change."""
    wanted = {str(session_id) for session_id in session_ids}
    with _lock:
        for key in [k for k, hit in _seen.items() if str(getattr(hit[2], "pk", None)) in wanted]:
            del _seen[key]


def forget_user(user_id: Any) -> None:
    """Drop every session of this user from this process's memory (account deleted)."""
    with _lock:
        for key in [k for k, hit in _seen.items() if getattr(hit[1], "pk", None) == user_id]:
            del _seen[key]


def clear() -> None:
    with _lock:
        _seen.clear()


def _forget_session(value: str) -> None:
    forget_sessions({value})


def _forget_user(value: str) -> None:
    if value.isdigit():
        forget_user(int(value))


def _session_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    notices.send(FORGET_SESSION, str(instance.pk), kwargs.get("using") or "default")


def _user_saved(sender: Any, instance: Any, created: bool, update_fields: Any, **kwargs: Any):
    # Any change a request may read of its user (deactivated, deleted, renamed, a new password
    # or language), not a log-in's ``last_login``: this process forgets the user's sessions at
    # once, every other one on commit.
    if not created and (update_fields is None or set(update_fields) - {"last_login"}):
        forget_user(instance.pk)
        notices.send(FORGET_USER, str(instance.pk), kwargs.get("using") or "default")


def connect() -> None:
    """Hear revocations from other processes, and tell them of this one's (on commit)."""
    from django.contrib.auth import get_user_model
    from django.db.models.signals import post_delete, post_save

    from accounts.models import Session

    notices.register(FORGET_SESSION, _forget_session, on_gap=clear)
    notices.register(FORGET_USER, _forget_user, on_gap=clear)
    post_delete.connect(_session_deleted, sender=Session, dispatch_uid="accounts.forget_session")
    post_save.connect(_user_saved, sender=get_user_model(), dispatch_uid="accounts.forget_user")
