"""A loop's own LISTEN connection on the notices' channel (``core.notices``), for a process that
only wants to wake when something is appended (the scheduler, the notifier)."""

from __future__ import annotations

import logging
import select
from typing import Any

import psycopg
from django.conf import settings
from django.db import connection

from core.notices import CHANNEL

logger = logging.getLogger(__name__)


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


def listen(who: str, channel: str = CHANNEL) -> psycopg.Connection | None:
    """A connection of its own that LISTENs on ``channel`` (the games' by default), for a loop
    that wakes on appends (the scheduler, the notifier) or on its own notices (the matcher);
    None (logged as ``who``'s) if it cannot be had now."""
    params = session_params()
    try:
        conn = psycopg.connect(**params, autocommit=True)
        conn.execute(f"LISTEN {channel}")
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
