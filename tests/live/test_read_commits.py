"""A read commits nothing: 1,000 ``GET /api/v1/me`` of one token, beyond what the same server
commits idle over the same span, commit fewer than 10 transactions.

Counted as PostgreSQL counts them, ``pg_stat_database.xact_commit`` of the test database, where
a read-only statement in autocommit is a committed transaction too. One server, two windows
of 5 s back to back: idle, then the 1,000 requests paced evenly. A process that does not hear
revocations remembers a token's look-up only ``TONGITS_TOKEN_CACHE_SECONDS`` (1 s shipped, 0.1 s
here so that such a process would cost fifty look-ups and fail plainly); one that hears them,
600 s. What the server's listener commits reading the
notification queue (PostgreSQL wakes it for other databases' traffic too) is in both windows.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
import psycopg
import pytest
from django.conf import settings
from django.db import connection

from accounts.services import session_create
from ops.ensure_db import server_params
from tests.live.conftest import start_live_server

READS = 1_000
SECONDS = 5.0
#: The memory of a process that does not hear revocations, shortened from 1 s so that a
#: process that looked its tokens up without hearing would cost fifty look-ups here, not five.
SHORT_MEMORY = "0.1"
#: A backend with counts to report sends them at the latest once idle this long (PostgreSQL's
#: PGSTAT_IDLE_INTERVAL, 10 s), and the moment it reported before.
IDLE_REPORT_SECONDS = 11.0
#: The listener's session name (games.live.listener.APPLICATION_NAME).
LISTENER = "tongits-live-listener"


def _stats() -> psycopg.Connection:
    db = settings.DATABASES["default"]
    return psycopg.connect(**server_params(db), autocommit=True)


def _commits(stats: psycopg.Connection) -> int:
    stats.execute("SELECT pg_stat_clear_snapshot()")
    row = stats.execute(
        "SELECT xact_commit FROM pg_stat_database WHERE datname = %s",
        [settings.DATABASES["default"]["NAME"]],
    ).fetchone()
    return int(row[0])


def _listeners(stats: psycopg.Connection) -> int:
    row = stats.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND application_name = %s",
        [settings.DATABASES["default"]["NAME"], LISTENER],
    ).fetchone()
    return int(row[0])


def _wait(predicate: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _flushed(client: httpx.Client, stats: psycopg.Connection) -> int:
    """The count once the server's pool session has reported: a backend reports at the end of
    a transaction a second or more after its last report, so a /healthz (one SELECT) a second
    after the last query sends in what was pending (that SELECT's own commit included)."""
    time.sleep(1.1)
    assert client.get("/healthz?scope=node").status_code == 200
    time.sleep(0.2)
    return _commits(stats)


def _window(client: httpx.Client, reads: int) -> None:
    """``reads`` GET /me, paced over ``SECONDS`` (none: idle as long)."""
    started = time.monotonic()
    for i in range(reads):
        assert client.get("/api/v1/me").status_code == 200
        time.sleep(max(0.0, started + (i + 1) * SECONDS / reads - time.monotonic()))
    time.sleep(max(0.0, started + SECONDS - time.monotonic()))


@pytest.mark.django_db(transaction=True)
def test_a_thousand_reads_of_me_commit_fewer_than_ten_transactions(user_factory) -> None:
    _, token = session_create(user=user_factory(), device="reads")
    headers = {"Authorization": f"Token {token}"}
    with connection.cursor() as cursor:  # what this test's session committed is counted now
        cursor.execute("SELECT pg_stat_force_next_flush()")
    with _stats() as stats:
        listeners = _listeners(stats)
        with (
            start_live_server(
                {"TONGITS_TOKEN_CACHE_SECONDS": SHORT_MEMORY}
            ) as url,  # its first request (a /healthz) starts its listener
            httpx.Client(base_url=url, headers=headers, timeout=10.0) as client,
        ):
            _wait(lambda: _listeners(stats) > listeners, "the server's listener did not connect")
            heard = time.monotonic()
            assert client.get("/api/v1/me").status_code == 200  # looked up, kept while hearing
            # The server's start-up reports late from sessions that go quiet (its listener's):
            # all of it is in once they have been idle past PostgreSQL's 10 s.
            time.sleep(max(0.0, heard + IDLE_REPORT_SECONDS - time.monotonic()))
            start = _flushed(client, stats)
            _window(client, 0)
            middle = _flushed(client, stats)
            _window(client, READS)
            end = _flushed(client, stats)
    # Less the /healthz that closes each window.
    idle, busy = middle - start - 1, end - middle - 1
    print(f"commits in {SECONDS:.0f} s: idle {idle}, with {READS} GET /me {busy}")
    assert busy - idle < 10, (idle, busy)
