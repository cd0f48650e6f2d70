"""Hot statements as server-side prepared statements on Django's own connection.

Django's psycopg cursors bind parameters client-side and never prepare; the few statements on
a hot path (a move's read and write, a wallet's read, a ledger transfer) run here instead, on a
bare psycopg cursor of the same connection (same session, same transaction), prepared at first
use: parsed and planned once per connection. With ``DATABASE_PREPARED_STATEMENTS=0`` (a pooler
that cannot keep prepared statements) they are bound client-side and sent as plain text.
psycopg forgets its prepared statements on a rollback and prepares again.

Logged like Django's own queries when they are (``DEBUG``, ``CaptureQueriesContext``), so
query-count tests see every round trip; PostgreSQL's errors come out as Django's.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from django.db import connection

Params = Mapping[str, Any] | Sequence[Any]


def _run(sql: str, params: Params, fetch: str) -> Any:
    connection.ensure_connection()
    started = time.monotonic()
    conn = connection.connection
    prepare = conn.prepare_threshold is not None
    cursor_class = psycopg.Cursor if prepare else psycopg.ClientCursor
    with connection.wrap_database_errors, cursor_class(conn) as cursor:
        cursor.execute(sql, params, prepare=prepare)
        if fetch == "one":
            out = cursor.fetchone()
        else:
            out = cursor.fetchall() if cursor.description else []
    if connection.queries_logged:
        elapsed = time.monotonic() - started
        connection.queries_log.append({"sql": sql.strip(), "time": f"{elapsed:.3f}"})
    return out


def fetch_one(sql: str, params: Params) -> tuple[Any, ...] | None:
    """Run one prepared statement; its first row (None: no row)."""
    return _run(sql, params, "one")


def fetch_all(sql: str, params: Params) -> list[tuple[Any, ...]]:
    """Run one prepared statement; all its rows."""
    return _run(sql, params, "all")
