"""Shared fixtures. Database tests run against the real PostgreSQL of DATABASE_URL.

pytest-django creates a ``test_<name>`` database there. When a collected test needs the database
and PostgreSQL does not answer, the run stops at once with an error: such tests never skip.

Fixtures:
    api_client            an unauthenticated DRF ``APIClient``
    user_factory          ``user_factory(username=None, password=DEFAULT_PASSWORD, **fields)``
                          -> a saved user (unique username when none is given)
    auth_client_factory   ``auth_client_factory(user=None)`` -> an ``APIClient`` sending a new
                          session's token of that user (a new user when none is given);
                          ``client.user``, ``client.token``, ``client.auth_session`` are set
    auth_client           ``auth_client_factory()``: a client logged in as a fresh user
    fast_password_hashing (autouse) passwords hashed with MD5, but for tests marked
                          ``real_password_hashing`` (those of passwords and log-ins)
    fresh_throttles       (autouse) an empty throttle cache (Redis, TEST_CACHE_URL, db 8, 7 for
                          the second xdist worker)
    game_timing           (autouse) no bot delay; the next round dealt at once, in the
                          command's transaction (tests/tasks deals through the worker instead)

Every API error answered during the session is recorded (``tests/error_codes.py``); at the end
of the session the run fails if the schema does not list its status or code for that operation.

Celery publishes to ``TEST_BROKER_URL`` (its own Redis database, which tests/tasks empties),
never to a developer's or CI's broker: transactional tests queue follow-ups on commit.
"""

from __future__ import annotations

import atexit
import hashlib
import itertools
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from rest_framework.test import APIClient

from ops.ensure_db import server_params
from tests import error_codes
from tongits_site.celery import app as celery_app

DEFAULT_PASSWORD = "correct-horse-battery-staple"

# Under pytest-xdist (`make test` runs three workers) each worker has databases, a broker and a
# throttle cache of its own: tests empty them and count what is in them.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
WORKER_NUMBER = int(WORKER[2:]) if WORKER.startswith("gw") else 0
assert WORKER_NUMBER < 7, "at most 7 test workers: each takes two of Redis's 16 databases"


def _redis_database(url: str, back: int) -> str:
    """``url`` with its database number ``back`` lower (one per test worker)."""
    base, _, number = url.rpartition("/")
    return f"{base}/{int(number) - back}"


TEST_BROKER_URL = _redis_database(
    os.environ.get("TEST_CELERY_BROKER_URL", "redis://127.0.0.1:6379/15"), WORKER_NUMBER
)
# The throttles' shared cache (ops.throttling): a Redis database of its own, emptied
# before each test so that no test inherits another's counts.
TEST_CACHE_URL = _redis_database(
    os.environ.get("TEST_CACHE_URL", "redis://127.0.0.1:6379/8"), WORKER_NUMBER
)

# Runtime files of the tests and of the servers and workers they start (seal key, throttle
# counts, stream slots) go to a directory of their own, never the checkout's var/.
TEST_VAR_DIR = Path(tempfile.mkdtemp(prefix="tongits-tests-"))
atexit.register(shutil.rmtree, TEST_VAR_DIR, ignore_errors=True)
os.environ["TONGITS_VAR_DIR"] = str(TEST_VAR_DIR)
os.environ.pop("TONGITS_SEAL_KEY_FILE", None)
os.environ.pop("TONGITS_STREAM_SLOTS_FILE", None)
settings.VAR_DIR = TEST_VAR_DIR
settings.TONGITS_SEAL_KEY_FILE = TEST_VAR_DIR / "seal-ed25519.key"
settings.TONGITS_THROTTLE_COUNTS_FILE = TEST_VAR_DIR / "throttle-counts"
settings.TONGITS_STREAM_SLOTS_FILE = TEST_VAR_DIR / "stream-slots"  # the live servers' too
settings.CELERY_BEAT_SCHEDULE_FILENAME = str(TEST_VAR_DIR / "celerybeat-schedule")

# Before anything connects: the app's connection pool is made on first use.
celery_app.conf.broker_url = TEST_BROKER_URL
settings.CACHES["throttle"] = {
    "BACKEND": "django.core.cache.backends.redis.RedisCache",
    "LOCATION": TEST_CACHE_URL,
}

error_codes.install()  # every API error answered in this session, checked at its end


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: object, error: object) -> None:
    """An xdist worker's recorded errors, for the check at the end of the whole run."""
    output = getattr(node, "workeroutput", {})
    error_codes.SEEN.update(tuple(seen) for seen in output.get("api_errors", ()))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if a test provoked an error code its operation's schema does not list."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller checks what all of them saw
        workeroutput["api_errors"] = sorted(error_codes.SEEN)
        return
    if not error_codes.SEEN:
        return
    problems = error_codes.undocumented_errors(error_codes.SEEN, error_codes.live_schema())
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(
            f"\nAPI errors provoked: {len(error_codes.SEEN)} (path, method, status, code), "
            f"{len(problems)} not in the schema"
        )
    if problems:
        lines = ["API errors the schema does not document (core/api_schema.py):"]
        lines += [f"  {p}" for p in problems]
        if reporter is not None:
            reporter.write_line("\n".join(lines), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_DB_FIXTURES = {"db", "transactional_db", "django_db_setup", "django_db_blocker"}


def _needs_db(item: pytest.Item) -> bool:
    return item.get_closest_marker("django_db") is not None or bool(
        _DB_FIXTURES & set(getattr(item, "fixturenames", ()))
    )


#: The files that take most of a minute each (a stack, a cluster or browsers to start, or a
#: long property): handed to the test workers first, so that the run ends on short files
#: instead of one worker finishing a long one alone (xdist gives files out in collection order).
LONG_FILES_FIRST = (
    "tests/browser/test_table.py",
    "tests/browser/test_accessibility.py",
    "tests/test_cluster.py",
    "tests/browser/test_profile.py",
    "tests/api/test_games_fuzz.py",
    "tests/rules/test_properties.py",
    "tests/test_stack_faults.py",
    "tests/live/test_notifications_e2e.py",
    "tests/live/test_stream_cap.py",
    "tests/browser/test_matchmaking.py",
    "tests/test_stack_orphans.py",
    "tests/verify/test_verifiable.py",
)


def _long_first(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    return LONG_FILES_FIRST.index(path) if path in LONG_FILES_FIRST else len(LONG_FILES_FIRST)


def pytest_collection_modifyitems(session: pytest.Session, items: list[pytest.Item]) -> None:
    """The long files first (``LONG_FILES_FIRST``; each file's own order kept); fail the whole
    run loudly (never skip) when database tests cannot reach PostgreSQL."""
    items.sort(key=_long_first)
    if not any(_needs_db(item) for item in items):
        return
    db = settings.DATABASES["default"]
    if "postgresql" not in db["ENGINE"]:
        pytest.exit(f"tests need PostgreSQL, but DATABASE_URL selects {db['ENGINE']}", returncode=3)
    try:
        psycopg.connect(**server_params(db, connect_timeout=5)).close()
    except psycopg.Error as exc:
        pytest.exit(
            f"PostgreSQL at {db.get('HOST')}:{db.get('PORT')} is unreachable ({exc}); "
            "start it (see .ci/run) or set DATABASE_URL",
            returncode=3,
        )


def checkout_tag() -> str:
    """A short tag of this checkout's path, for names that two clones (or a clone and CI) on one
    server must not share."""
    tag = hashlib.sha256(str(settings.BASE_DIR).encode()).hexdigest()[:8]
    return f"{tag}_{WORKER}" if WORKER else tag


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None) -> None:
    """One test database per checkout (and per xdist worker)."""
    db = settings.DATABASES["default"]
    db.setdefault("TEST", {})["NAME"] = f"test_{db['NAME']}_{checkout_tag()}"


@pytest.fixture(autouse=True)
def game_timing(settings) -> None:
    """Tests without a worker: bots at once, and the next deal inside the command's append."""
    settings.TONGITS_BOT_DELAY_SECONDS = 0.0
    settings.TONGITS_DEAL_INLINE = True


@pytest.fixture(autouse=True)
def fast_password_hashing(request: pytest.FixtureRequest) -> None:
    """MD5 for the passwords the tests set and check: Django's PBKDF2 (a million iterations)
    takes 0.3-0.6 s a password here, and a test that makes three players would spend most of
    its time hashing. Tests of passwords and log-ins themselves
    (``@pytest.mark.real_password_hashing``) keep the real hasher; the servers the tests start
    always hash as in production."""
    if request.node.get_closest_marker("real_password_hashing") is None:
        request.getfixturevalue("settings").PASSWORD_HASHERS = [
            "django.contrib.auth.hashers.MD5PasswordHasher"
        ]


@pytest.fixture(autouse=True)
def fresh_throttles() -> None:
    """Every test starts with no throttle counts (and fails loudly if Redis is down)."""
    from ops.throttling import cache

    cache().clear()


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


_usernames = itertools.count(1)


@pytest.fixture
def user_factory(db) -> Callable[..., object]:
    from django.contrib.auth import get_user_model

    user_model = get_user_model()

    def make(username: str | None = None, password: str = DEFAULT_PASSWORD, **fields):
        username = username or f"player{next(_usernames)}"
        return user_model.objects.create_user(username=username, password=password, **fields)

    return make


@pytest.fixture
def auth_client_factory(user_factory) -> Callable[..., APIClient]:
    def make(user=None) -> APIClient:
        user = user or user_factory()
        from accounts.services import session_create

        session, key = session_create(user=user, device="test")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        client.user = user
        client.token = key
        client.auth_session = session
        return client

    return make


@pytest.fixture
def auth_client(auth_client_factory) -> APIClient:
    return auth_client_factory()


@pytest.fixture(scope="session")
def stack_pgdata(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An embedded PostgreSQL data directory, created and migrated once per run, for the stacks
    the tests start (``start_stack(pgdata=...)`` copies it): each then starts as `make run` does
    on a var dir it has run on before. Under xdist the first worker to need it makes it, under a
    lock in the run's shared temporary directory, and the others wait for it and copy the same
    one (each worker making its own cost an initdb and a migration apiece, all at the run's
    start). scripts/smoke.py starts from nothing."""
    import fcntl
    import importlib.util
    import sys

    shared = tmp_path_factory.getbasetemp()
    if WORKER:  # each worker's base is popen-gwN inside the run's own
        shared = shared.parent
    root = shared / "stack-pgdata"
    with (shared / "stack-pgdata.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / "ready").exists():
            spec = importlib.util.spec_from_file_location(
                "smoke_pgdata", Path(settings.BASE_DIR) / "scripts" / "smoke.py"
            )
            smoke = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
            sys.modules[spec.name] = smoke  # its dataclasses look their module up there
            spec.loader.exec_module(smoke)  # type: ignore[union-attr]
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir()
            smoke.prepare_pgdata(root)
            (root / "ready").touch()
    return root / "pgdata"


#: Append-only tables and the trigger that refuses their TRUNCATE (the games' events, the ledger).
APPEND_ONLY = [
    ("games_event", "games_event_no_truncate"),
    ("chips_entry", "chips_entry_no_truncate"),
    ("chips_posting", "chips_posting_no_truncate"),
    ("games_eventarchive", "games_eventarchive_no_truncate"),
    ("chat_message", "chat_message_no_truncate"),
    ("chat_hidden", "chat_hidden_no_truncate"),
    ("store_payload", "store_payload_no_truncate"),
    *(
        (f"fairplay_{t}", f"fairplay_{t}_no_truncate")
        for t in ("caseevent", "report", "suspension", "suspensionlift", "appeal")
    ),
]


def _is_superuser(connection) -> bool:
    """Whether the database session may set ``session_replication_role`` (a superuser's)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('is_superuser') = 'on'")
        return bool(cursor.fetchone()[0])


@pytest.fixture(scope="session", autouse=True)
def _flushable_event_log():
    """Empty every table at the end of a ``transaction=True`` test quickly, the append-only
    tables (``APPEND_ONLY``) too.

    Django's flush is a TRUNCATE of every table, which the append-only tables' TRUNCATE triggers
    refuse, and which costs about as much as creating every table afresh (a new file for each
    table and index: seconds on a busy machine, for each such test). Test flushes only: the
    tables are locked as TRUNCATE locks them (so that a server's write in flight ends first),
    then each is emptied by a DELETE with triggers and foreign-key checks off for the flush's
    own transaction (``session_replication_role``; every row of every table goes). A flush that
    resets sequences or cascades, or a database user that is not a superuser, gets Django's
    TRUNCATE, with the append-only tables' TRUNCATE triggers switched off around it.
    """
    from django.db.backends.postgresql.operations import DatabaseOperations

    original = DatabaseOperations.sql_flush
    superuser: dict[str, bool] = {}

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        alias = self.connection.alias
        if alias not in superuser:
            superuser[alias] = _is_superuser(self.connection)
        if tables and superuser[alias] and not (reset_sequences or allow_cascade):
            names = [self.quote_name(t) for t in tables]
            return [
                f"LOCK TABLE {', '.join(names)} IN ACCESS EXCLUSIVE MODE;",
                "SET LOCAL session_replication_role = replica;",
                *(f"DELETE FROM {name};" for name in names),
            ]
        statements = original(
            self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
        )
        guarded = [(t, trigger) for t, trigger in APPEND_ONLY if t in tables]
        if guarded and statements:
            return [
                *(f"ALTER TABLE {t} DISABLE TRIGGER {trigger};" for t, trigger in guarded),
                *statements,
                *(f"ALTER TABLE {t} ENABLE TRIGGER {trigger};" for t, trigger in guarded),
            ]
        return statements

    DatabaseOperations.sql_flush = sql_flush
    yield
    DatabaseOperations.sql_flush = original
