"""A real ASGI server (uvicorn, in a process of its own) on the test database.

The live tests commit for real (``transactional_db``) so that the server's connections, and its
LISTEN connection, see what the tests write. One server serves the whole session: it starts
once the test database exists and stops before it is dropped. PostgreSQL or the server failing
to start is a failure, never a skip.

Fixtures:
    live_server_url   the server's base URL (http://127.0.0.1:<free port>)
    live_servers      ``live_servers(env)``: a context manager, another server with settings
                      of its own (its URL), for a module's own fixtures
    live              ``Live``: HTTP clients (httpx) for tokens, SSE readers, tables of three
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import psycopg
import pytest
from django.conf import settings

from ops.ensure_db import server_params
from ops.stack import one_web_process
from tests.conftest import TEST_BROKER_URL
from tests.live.support import Live

ROOT = Path(__file__).resolve().parent.parent.parent
START_SECONDS = 30.0
SERVER_APP_NAME = "tongits-live-test-server"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _database_url() -> str:
    db = settings.DATABASES["default"]  # the test database, once django_db_setup has run
    user = quote(db.get("USER") or "")
    password = f":{quote(db['PASSWORD'])}" if db.get("PASSWORD") else ""
    host, port = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432
    return f"postgres://{user}{password}@{quote(str(host), safe='')}:{port}/{db['NAME']}"


@contextlib.contextmanager
def start_live_server(env: dict[str, str] | None = None) -> Iterator[str]:
    """A uvicorn process of the project on the test database, with ``env`` on top of the
    tests' own (``TONGITS_MAX_STREAMS_PER_USER``, ``CACHE_URL``, ...): its base URL. On exit it
    is stopped, its database sessions are gone, and its log holds no traceback."""
    port = _free_port()
    app_name = f"{SERVER_APP_NAME}-{port}"
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "CELERY_BROKER_URL": TEST_BROKER_URL,  # nothing consumes it here: no worker
        "TONGITS_BOT_DELAY_SECONDS": "0",
        "TONGITS_DEAL_INLINE": "1",  # the next deal inside the command
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_DEBUG": "0",
        "LOG_LEVEL": "WARNING",
        "PGAPPNAME": app_name,  # libpq's default application_name: its sessions show
        **(env or {}),
    }
    log = tempfile.NamedTemporaryFile(  # noqa: SIM115 (the server writes it while we run)
        prefix="live-server-", suffix=".log", delete=False
    )
    proc = subprocess.Popen(
        one_web_process(port),
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_SECONDS
    while True:
        if proc.poll() is not None:
            pytest.fail(
                f"the ASGI server exited ({proc.returncode}):\n{Path(log.name).read_text()}"
            )
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the ASGI server did not start:\n{Path(log.name).read_text()}")
        time.sleep(0.1)
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        _wait_for_server_sessions_to_end([app_name])
        text = Path(log.name).read_text(errors="replace")
        os.unlink(log.name)
        assert "Traceback" not in text, text


@pytest.fixture(scope="session")
def live_server_url(django_db_setup, django_db_blocker) -> Iterator[str]:
    with start_live_server() as url:
        yield url
    # Every server has stopped by now: their listeners' sessions end too.
    _wait_for_server_sessions_to_end([f"{SERVER_APP_NAME}-%", "tongits-live-listener"])


@pytest.fixture(scope="session")
def live_servers(live_server_url: str) -> Callable[..., contextlib.AbstractContextManager[str]]:
    """``with live_servers({"TONGITS_MAX_STREAMS_PER_USER": "3"}) as url:`` another server."""
    return start_live_server


def _wait_for_server_sessions_to_end(names: list[str]) -> None:
    """The servers' database sessions (``application_name`` LIKE one of ``names``) end a moment
    after they exit; the test database can only be dropped once they have (a leftover is
    terminated after 5 s)."""
    db = settings.DATABASES["default"]
    match = "datname = %s AND application_name LIKE ANY(%s)"
    with psycopg.connect(**server_params(db, connect_timeout=5), autocommit=True) as conn:
        deadline = time.monotonic() + 5
        while conn.execute(
            f"SELECT pid FROM pg_stat_activity WHERE {match}", [db["NAME"], names]
        ).fetchall():
            if time.monotonic() > deadline:
                conn.execute(
                    f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE {match}",
                    [db["NAME"], names],
                )
                break
            time.sleep(0.05)


@pytest.fixture(autouse=True)
def _fast_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def live(live_server_url: str, transactional_db, user_factory) -> Iterator[Live]:
    with Live(live_server_url, user_factory) as helper:
        yield helper
