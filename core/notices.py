"""Notices that tell every web process to forget something it remembers (a player's name, a
session), and whether this process hears them.

Each web process that serves live streams LISTENs on the games' channel (``games.live``).
Besides a game's appends, the apps send there, on commit, notices of the form
``<prefix><value>`` ("forget:12", "forget-user:12", "forget-session:<uuid>"), and register a
handler for their prefix here. While the process's LISTEN connection is up, ``hearing()`` is
true: a memory that such a notice clears may then be kept longer, since a change reaches the
process within milliseconds. When the connection drops or comes back, every ``on_gap``
callback runs: what was sent meanwhile is lost, so those memories are dropped whole.
"""

from __future__ import annotations

import logging
import select
import threading
from collections.abc import Callable
from typing import Any

import psycopg
from django.conf import settings
from django.db import connection, connections

logger = logging.getLogger(__name__)

#: The channel the live listener LISTENs on (``games.store.NOTIFY_CHANNEL`` too).
CHANNEL = "game_events"

_lock = threading.Lock()
_handlers: dict[str, Callable[[str], None]] = {}
_gaps: list[Callable[[], None]] = []
_hearing = False
_epoch = 0


def register(
    prefix: str, handler: Callable[[str], None], on_gap: Callable[[], None] | None = None
) -> None:
    """``handler(value)`` for each notice ``<prefix><value>``; ``on_gap()`` when notices may
    have been missed."""
    with _lock:
        _handlers[prefix] = handler
        if on_gap is not None and on_gap not in _gaps:
            _gaps.append(on_gap)


def notify(payload: str, using: str = "default") -> None:
    """``pg_notify`` on the channel (delivered on commit of the current transaction)."""
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, payload])


def send(prefix: str, value: str, using: str = "default") -> None:
    """Notify ``<prefix><value>``."""
    notify(f"{prefix}{value}", using)


def dispatch(payload: str) -> bool:
    """Run the handler of the payload's prefix; False when no prefix matches (a game's)."""
    for prefix, handler in list(_handlers.items()):
        if payload.startswith(prefix):
            handler(payload[len(prefix) :])
            return True
    return False


def hearing() -> bool:
    """Whether this process's LISTEN connection is up now."""
    return _hearing


def epoch() -> int:
    """Changes whenever ``hearing()`` does: a memory kept longer because this process heard
    notices is only good within the epoch it was kept in."""
    return _epoch


def set_hearing(up: bool) -> None:
    """The listener's connection came up or went down: either way notices may have been
    missed in between, so every ``on_gap`` runs."""
    global _hearing, _epoch
    with _lock:
        _hearing = up
        _epoch += 1
    for on_gap in list(_gaps):
        on_gap()


# ---------------------------------------------------------------- a loop's own LISTEN connection


def session_params() -> dict[str, Any]:
    """psycopg keywords of a connection that holds a session of its own (LISTEN): the default
    database's, or with ``DATABASE_LISTEN_URL`` (past a pooler in transaction mode, which
    cannot keep a LISTEN) its host, port, user, password and options on the same database."""
    params = connection.get_connection_params()
    for name in ("cursor_factory", "context", "prepare_threshold", "pool"):
        params.pop(name, None)
    direct = settings.DATABASE_SESSION
    if direct:
        for key in ("host", "port", "user", "password"):
            params.pop(key, None)
        for key in ("HOST", "PORT", "USER", "PASSWORD"):
            if direct.get(key):
                params[key.lower()] = str(direct[key])
        params.update(direct.get("OPTIONS") or {})
    return params


def listen(who: str) -> psycopg.Connection | None:
    """A connection of its own that LISTENs on the channel, for a loop that wakes on appends
    (the scheduler, the notifier); None (logged as ``who``'s) if it cannot be had now."""
    params = session_params()
    try:
        conn = psycopg.connect(**params, autocommit=True)
        conn.execute(f"LISTEN {CHANNEL}")
    except psycopg.Error:
        logger.exception("%s: cannot LISTEN; polling only", who)
        return None
    return conn


def wait(conn: psycopg.Connection, timeout: float, who: str) -> bool:
    """Wait up to ``timeout`` for a notice on ``conn`` and drop those that came (a wake-up is
    all the loop wants); False when the connection is lost (it is closed then)."""
    try:
        ready, _, _ = select.select([conn.fileno()], [], [], timeout)
        if ready:
            for _ in conn.notifies(timeout=0, stop_after=0):
                pass
    except (psycopg.Error, OSError, ValueError):
        logger.warning("%s: lost its LISTEN connection; reconnecting", who)
        conn.close()
        return False
    return True
