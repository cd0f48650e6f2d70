"""Throttles: 429 {"code": "throttled", "detail", "retry_after"} with Retry-After, on the shared
cache; failed log-ins refused before the password hasher runs; the waiting-tables quota.

Counts are kept in fixed windows aligned on the clock; the tests use windows of years, so no
test ever straddles a window's boundary."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth.hashers import MD5PasswordHasher

from accounts import login_throttle
from tests.api.games_support import TABLES, assert_error, game_url
from tests.conftest import DEFAULT_PASSWORD

pytestmark = pytest.mark.django_db

LOGIN = "/api/v1/auth/token"
REGISTER = "/api/v1/auth/register"


class CountingHasher(MD5PasswordHasher):
    """MD5 that counts every hash it computes (a verify, or the dummy hash of an unknown
    user's log-in)."""

    calls = 0

    def encode(self, password, salt):
        CountingHasher.calls += 1
        return super().encode(password, salt)


@pytest.fixture
def counting_hasher(settings):
    settings.PASSWORD_HASHERS = [f"{__name__}.CountingHasher"]
    CountingHasher.calls = 0
    return CountingHasher


@pytest.fixture
def login_limits(settings):
    settings.TONGITS_LOGIN_FAILURES_PER_ACCOUNT = 3
    settings.TONGITS_LOGIN_FAILURES_PER_ADDRESS = 5
    settings.TONGITS_LOGIN_BACKOFF_SECONDS = 30
    settings.TONGITS_LOGIN_BACKOFF_MAX_SECONDS = 100
    settings.TONGITS_LOGIN_WINDOW_SECONDS = 10**9  # one window for the whole test: no boundary
    return settings


@pytest.fixture
def later(monkeypatch):
    """Move the log-in throttle's clock forward instead of sleeping."""
    offset = [0.0]
    real = login_throttle.clock
    monkeypatch.setattr(login_throttle, "clock", lambda: real() + offset[0])

    def advance(seconds: float) -> None:
        offset[0] += seconds

    return advance


def login(client, username, password):
    return client.post(LOGIN, {"username": username, "password": password}, "json")


def assert_throttled(response, at_least: int = 1) -> int:
    body = assert_error(response, 429, "throttled")
    assert body["retry_after"] >= at_least
    assert int(response["Retry-After"]) == body["retry_after"]
    return body["retry_after"]


def test_failed_logins_per_account_are_refused_before_hashing_then_allowed_after_the_wait(
    api_client, user_factory, counting_hasher, login_limits, later
):
    user = user_factory()
    for _ in range(3):
        assert_error(login(api_client, user.username, "wrong-password"), 401, "invalid_credentials")
    hashed = counting_hasher.calls
    assert hashed >= 3
    # Blocked: even the right password is refused, and the hasher never runs.
    wait = assert_throttled(login(api_client, user.username, DEFAULT_PASSWORD), at_least=29)
    assert_throttled(login(api_client, user.username.upper(), "wrong-password"))
    assert counting_hasher.calls == hashed
    later(wait + 1)
    response = login(api_client, user.username, DEFAULT_PASSWORD)
    assert response.status_code == 200, response.content
    assert counting_hasher.calls == hashed + 1


def test_backoff_doubles_with_each_failure_past_the_limit(
    api_client, user_factory, login_limits, later
):
    user = user_factory()
    for _ in range(3):
        login(api_client, user.username, "wrong-password")
    first = assert_throttled(login(api_client, user.username, "x"))
    later(first + 1)
    assert_error(login(api_client, user.username, "wrong-password"), 401, "invalid_credentials")
    second = assert_throttled(login(api_client, user.username, "x"))
    assert 55 <= second <= 60


def test_a_good_login_clears_the_account_count(api_client, user_factory, login_limits):
    user = user_factory()
    for _ in range(2):
        login(api_client, user.username, "wrong-password")
    assert login(api_client, user.username, DEFAULT_PASSWORD).status_code == 200
    for _ in range(2):
        assert_error(login(api_client, user.username, "wrong-password"), 401, "invalid_credentials")


def test_failed_logins_per_address(api_client, login_limits, counting_hasher):
    for index in range(5):
        assert_error(login(api_client, f"nobody{index}", "guess"), 401, "invalid_credentials")
    calls = counting_hasher.calls
    assert_throttled(login(api_client, "somebody-else", "guess"))
    assert counting_hasher.calls == calls
    # Another address is not blocked.
    other = api_client.post(
        LOGIN, {"username": "x", "password": "y"}, "json", REMOTE_ADDR="10.1.2.3"
    )
    assert_error(other, 401, "invalid_credentials")


def test_x_forwarded_for_is_ignored_without_trusted_proxies(api_client, login_limits, settings):
    for index in range(5):
        api_client.post(
            LOGIN,
            {"username": f"n{index}", "password": "g"},
            "json",
            HTTP_X_FORWARDED_FOR=f"10.0.0.{index}",
        )
    assert_throttled(login(api_client, "n9", "g"))
    settings.TONGITS_NUM_PROXIES = 1  # behind one proxy, its header names the client
    response = api_client.post(
        LOGIN, {"username": "n9", "password": "g"}, "json", HTTP_X_FORWARDED_FOR="10.9.9.9"
    )
    assert_error(response, 401, "invalid_credentials")


def test_registrations_per_address(api_client, settings):
    settings.TONGITS_THROTTLE_RATES = {**settings.TONGITS_THROTTLE_RATES, "register": "2/9999d"}
    for name in ("reg1", "reg2"):
        response = api_client.post(
            REGISTER, {"username": name, "password": "a-long-passphrase"}, "json"
        )
        assert response.status_code == 201, response.content
    response = api_client.post(
        REGISTER, {"username": "reg3", "password": "a-long-passphrase"}, "json"
    )
    assert_throttled(response)


def test_password_reset_requests_per_address(api_client, settings, mailoutbox):
    settings.TONGITS_THROTTLE_RATES = {
        **settings.TONGITS_THROTTLE_RATES,
        "password_reset": "2/9999d",
    }
    reset = "/api/v1/auth/password-reset"
    for n in range(2):
        response = api_client.post(reset, {"email": f"someone{n}@example.com"}, "json")
        assert response.status_code == 202, response.content
    assert_throttled(api_client.post(reset, {"email": "someone@example.com"}, "json"))


def test_commands_per_user(auth_client, settings):
    settings.TONGITS_THROTTLE_RATES = {**settings.TONGITS_THROTTLE_RATES, "commands": "2/9999d"}
    seats = [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}]
    game = auth_client.post(TABLES, {"seats": seats}, "json").json()["id"]
    url = game_url(game, "/commands")
    for _ in range(2):
        response = auth_client.post(
            url, {"command": {"type": "draw"}, "expected_version": 0}, "json"
        )
        assert_error(response, 409, "stale_version")
    response = auth_client.post(url, {"command": {"type": "draw"}, "expected_version": 0}, "json")
    assert_throttled(response)


def test_reads_per_token(auth_client_factory, settings):
    settings.TONGITS_THROTTLE_RATES = {**settings.TONGITS_THROTTLE_RATES, "reads": "3/9999d"}
    ana, ben = auth_client_factory(), auth_client_factory()
    for _ in range(3):
        assert ana.get("/api/v1/me").status_code == 200
    assert_throttled(ana.get("/api/v1/me"))
    assert ben.get("/api/v1/me").status_code == 200


def test_waiting_tables_per_user(auth_client, settings):
    settings.TONGITS_MAX_WAITING_TABLES = 3
    for _ in range(3):
        assert auth_client.post(TABLES, {}, "json").status_code == 201
    assert_error(auth_client.post(TABLES, {}, "json"), 409, "too_many_waiting_tables")
    # Quick play never waits, so it is not counted.
    seats = [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}]
    assert auth_client.post(TABLES, {"seats": seats}, "json").status_code == 201


def test_the_database_cache_works_too(api_client, user_factory, login_limits, settings):
    """Without CACHE_URL the throttles count in the database cache that migrate created."""
    settings.CACHES = {
        **settings.CACHES,
        "throttle": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "tongits_cache",
        },
    }
    user = user_factory()
    for _ in range(3):
        login(api_client, user.username, "wrong-password")
    assert_throttled(login(api_client, user.username, DEFAULT_PASSWORD))


DB_CACHE = {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "tongits_cache"}


@pytest.fixture
def database_counts(settings, tmp_path):
    """No CACHE_URL: the counts in the machine's shared table (``ops.tally``), in a file of
    this test's own."""
    settings.CACHES = {**settings.CACHES, "throttle": DB_CACHE}
    settings.TONGITS_THROTTLE_COUNTS_FILE = tmp_path / "throttle-counts"
    return settings.TONGITS_THROTTLE_COUNTS_FILE


def test_a_good_log_in_clears_the_database_counts(
    api_client, user_factory, login_limits, database_counts
):
    user = user_factory()
    for _ in range(2):
        login(api_client, user.username, "wrong-password")
    assert login(api_client, user.username, DEFAULT_PASSWORD).status_code == 200
    for _ in range(2):  # counted from 0 again: 2 more failures do not block
        login(api_client, user.username, "wrong-password")
    assert login(api_client, user.username, DEFAULT_PASSWORD).status_code == 200


def test_machine_counts_from_many_threads_add_up(database_counts):
    from ops import throttling

    def count(n: int) -> list[int]:
        return [throttling.bump("t:race", 60) for _ in range(n)]

    with ThreadPoolExecutor(8) as pool:
        seen = [v for values in pool.map(count, [25] * 8) for v in values]
    assert sorted(seen) == list(range(1, 201))  # no count lost, none given twice
    assert throttling.bump("t:race", 60) == 201


def _count_in_a_process(path: str, n: int, queue) -> None:
    from pathlib import Path

    from ops.tally import tally

    table = tally(Path(path))
    queue.put([table.add("t:processes", 60) for _ in range(n)])


def test_machine_counts_add_up_across_processes(database_counts):
    """Four processes (as gunicorn's web workers are) counting one key at once: every count is
    seen once, so a limit holds across the machine's web processes."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [
        context.Process(target=_count_in_a_process, args=(str(database_counts), 250, queue))
        for _ in range(4)
    ]
    for worker in workers:
        worker.start()
    seen = sorted(v for _ in workers for v in queue.get(timeout=60))
    for worker in workers:
        worker.join(30)
        assert worker.exitcode == 0
    assert seen == list(range(1, 1001))


def test_a_machine_count_starts_again_after_its_window(database_counts):
    from ops.tally import tally

    table = tally(database_counts)
    assert [table.add("t:w", 60, now=1000.0) for _ in range(3)] == [1, 2, 3]
    assert table.add("t:w", 60, now=1061.0) == 1  # the window has passed
    table.forget(["t:w"], now=1062.0)
    assert table.add("t:w", 60, now=1063.0) == 1


def test_a_read_costs_the_database_nothing_with_machine_counts(auth_client, database_counts):
    """Without Redis, 300 reads of one token make no statement for their throttle (the token's
    look-up is remembered a second; the counts are the machine's)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    assert auth_client.get("/api/v1/me").status_code == 200
    with CaptureQueriesContext(connection) as queries:
        for _ in range(300):
            assert auth_client.get("/api/v1/me").status_code == 200
    assert len(queries) <= 3, [q["sql"][:80] for q in queries.captured_queries]


def test_the_read_limit_holds_with_machine_counts(auth_client, database_counts, settings):
    settings.TONGITS_THROTTLE_RATES = {**settings.TONGITS_THROTTLE_RATES, "reads": "5/m"}
    for _ in range(5):
        assert auth_client.get("/api/v1/me").status_code == 200
    assert_throttled(auth_client.get("/api/v1/me"))


def test_every_operation_documents_429():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert "429" in operation["responses"], (method, path)
