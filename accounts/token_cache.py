"""A short per-process memory of token look-ups (``TONGITS_TOKEN_CACHE_SECONDS``, 1 s).

A player's client sends two or three requests per move; looking the token up in the database on
each one costs a round trip and the ORM's query building. A revoked token (logout) or a
deactivated user is refused at once by the process that revoked it (``forget``,
``forget_sessions``, ``forget_user``) and within
that many seconds by every other process. ``accounts.authentication`` reads it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from django.conf import settings

_lock = threading.Lock()
_seen: dict[str, tuple[float, Any, Any]] = {}  # key -> (expires at, user, token)
MAX_ENTRIES = 10_000


def ttl() -> float:
    return float(getattr(settings, "TONGITS_TOKEN_CACHE_SECONDS", 0.0))


def get(key: str) -> tuple[Any, Any] | None:
    """(user, token) remembered for ``key``, if still fresh."""
    with _lock:
        hit = _seen.get(key)
    if hit is None or hit[0] <= time.monotonic():
        return None
    return hit[1], hit[2]


def put(key: str, user: Any, token: Any) -> None:
    seconds = ttl()
    if seconds <= 0:
        return
    with _lock:
        if len(_seen) >= MAX_ENTRIES:
            _seen.clear()
        _seen[key] = (time.monotonic() + seconds, user, token)


def forget(key: str) -> None:
    """Drop a token from this process's memory (logout, deactivation)."""
    with _lock:
        _seen.pop(key, None)


def forget_sessions(session_ids: set[Any]) -> None:
    """Drop these sessions (by the session's pk: the keys themselves are not stored) from this
    process's memory: a session ended by id, a logout everywhere, a password change."""
    with _lock:
        for key in [k for k, hit in _seen.items() if getattr(hit[2], "pk", None) in session_ids]:
            del _seen[key]


def forget_user(user_id: Any) -> None:
    """Drop every session of this user from this process's memory (account deleted)."""
    with _lock:
        for key in [k for k, hit in _seen.items() if getattr(hit[1], "pk", None) == user_id]:
            del _seen[key]


def clear() -> None:
    with _lock:
        _seen.clear()
