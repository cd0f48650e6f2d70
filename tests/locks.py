"""Waiting on PostgreSQL's own word that a session is blocked: a race test's "the other
transaction now waits for my row" is a row of ``pg_locks`` not granted, whose blocker is the
holder (``pg_blocking_pids``), not a pause long enough on a quiet machine."""

from __future__ import annotations

import time

from django.db import connection


def backend_pid() -> int:
    """This thread's database session's process id (it connects if it has not yet)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def wait_until_blocked_by(holder: int, timeout: float = 10.0) -> int:
    """Wait until a session waits for a lock that session ``holder`` holds; that session's pid.

    ``pg_locks`` and ``pg_blocking_pids`` read the lock manager as it is now, also from inside
    a transaction (unlike ``pg_stat_activity``, which a transaction sees as a snapshot), so the
    holder itself may ask."""
    deadline = time.monotonic() + timeout
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT l.pid FROM pg_locks l WHERE NOT l.granted "
                "AND %s = ANY(pg_blocking_pids(l.pid)) LIMIT 1",
                [holder],
            )
            row = cursor.fetchone()
        if row is not None:
            return int(row[0])
        assert time.monotonic() < deadline, f"no session waited on session {holder}'s locks"
        time.sleep(0.01)
