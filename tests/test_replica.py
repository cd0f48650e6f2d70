"""Past one database server: several hosts in DATABASE_URL, the LISTEN sessions around a pooler
(DATABASE_LISTEN_URL), the public reads from a standby (DATABASE_REPLICA_URL, core.replica),
503 database_unavailable, and throttles that let requests through while Redis is away.

The replica is a second connection to the test database here (there is no standby in a test
run): what is checked is which connection each read takes. tests/test_cluster.py checks the
same reads on a real standby.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache.backends.redis import RedisCache
from django.db import OperationalError, connections, transaction
from django.test.utils import CaptureQueriesContext

from core import listening, replica
from ops import throttling
from tongits_site.settings import database_settings

# ---------------------------------------------------------------- the URLs


def test_one_host_is_what_dj_database_url_gives() -> None:
    db = database_settings("postgres://ana:pw@db.example.com:6432/tongits")
    assert (db["HOST"], db["PORT"], db["NAME"], db["USER"]) == (
        "db.example.com",
        6432,
        "tongits",
        "ana",
    )


def test_several_hosts_for_libpq_to_try_in_turn() -> None:
    db = database_settings(
        "postgres://postgres@10.0.0.1:5432,10.0.0.2:5433,[::1]/tongits"
        "?target_session_attrs=read-write"
    )
    assert db["HOST"] == "10.0.0.1,10.0.0.2,::1"
    assert db["PORT"] == "5432,5433,5432"
    assert (db["NAME"], db["USER"]) == ("tongits", "postgres")
    assert db["OPTIONS"] == {"target_session_attrs": "read-write"}


def test_the_listen_sessions_go_around_the_pooler_to_the_same_database(settings) -> None:
    default = listening.session_params()
    settings.DATABASE_SESSION = database_settings(
        "postgres://postgres@127.0.0.1:18101,127.0.0.1:18102/other?target_session_attrs=read-write"
    )
    params = listening.session_params()
    assert (params["host"], params["port"]) == ("127.0.0.1,127.0.0.1", "18101,18102")
    assert params["target_session_attrs"] == "read-write"
    assert params["dbname"] == default["dbname"]  # DATABASE_URL's database, whatever the URL says
    assert "prepare_threshold" not in params and "pool" not in params


# ---------------------------------------------------------------- the router


@pytest.fixture
def replica_alias(settings, transactional_db) -> Iterator[None]:
    """A "replica" connection to the test database and the router, as DATABASE_REPLICA_URL
    sets them up."""
    config = dict(connections.settings["default"])
    config["OPTIONS"] = {k: v for k, v in config.get("OPTIONS", {}).items() if k not in ("pool",)}
    config["CONN_MAX_AGE"] = None  # connected once, here: the test case allows no new alias
    connections.settings[replica.REPLICA_ALIAS] = config
    connections[replica.REPLICA_ALIAS].connect()
    settings.DATABASE_ROUTERS = ["core.replica.ReplicaRouter"]
    try:
        yield
    finally:
        connections[replica.REPLICA_ALIAS].close()
        del connections[replica.REPLICA_ALIAS]
        del connections.settings[replica.REPLICA_ALIAS]


def test_the_router_sends_only_reads_in_replica_reads_and_outside_transactions() -> None:
    router = replica.ReplicaRouter()
    assert router.db_for_read(object) is None
    with replica.replica_reads():
        assert router.db_for_read(object) == replica.REPLICA_ALIAS
        assert router.db_for_write(object) == "default"
    assert router.db_for_read(object) is None
    assert router.allow_migrate(replica.REPLICA_ALIAS, "games") is False


@pytest.mark.django_db
def test_a_transaction_of_the_primary_reads_the_primary() -> None:
    router = replica.ReplicaRouter()
    with replica.replica_reads(), transaction.atomic():
        assert router.db_for_read(object) is None


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/players/ana/stats",
        "/api/v1/players/ana/matches",
        "/api/v1/leaderboard",
        "/api/v1/matches/00000000-0000-0000-0000-000000000000",
    ],
)
def test_the_public_history_reads_come_from_the_replica(
    replica_alias, user_factory, api_client, path: str
) -> None:
    user_factory("ana")
    with (
        CaptureQueriesContext(connections["default"]) as primary,
        CaptureQueriesContext(connections[replica.REPLICA_ALIAS]) as standby,
    ):
        response = api_client.get(path)
    assert response.status_code in (200, 404), response.content  # the match: not played
    assert standby.captured_queries, "no read reached the replica"
    assert not primary.captured_queries, [q["sql"] for q in primary.captured_queries]


def test_a_players_own_view_stays_on_the_primary(replica_alias, auth_client) -> None:
    with CaptureQueriesContext(connections[replica.REPLICA_ALIAS]) as standby:
        assert auth_client.get("/api/v1/me").status_code == 200
    assert not standby.captured_queries


@pytest.mark.django_db(transaction=True)
def test_with_a_replica_configured_a_transaction_asks_for_remote_apply_and_only_it(
    monkeypatch,
) -> None:
    """What a settlement's transaction sets so that its commit waits until the standby applied
    it: ``synchronous_commit = remote_apply``, for that transaction only. There is no standby
    here (with none, PostgreSQL commits at once); tests/test_cluster.py plays matches on a
    cluster with a synchronous standby and reads their settlements from it."""
    from django.db import connection

    monkeypatch.setattr(replica, "configured", lambda: True)
    with transaction.atomic():
        replica.commit_visible_on_replica()
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            assert cursor.fetchone()[0] == "remote_apply"
    with connection.cursor() as cursor:  # SET LOCAL: that transaction only
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] != "remote_apply"


# ---------------------------------------------------------------- faults of the database


@pytest.mark.django_db
def test_a_lost_database_is_a_503_to_retry(api_client, monkeypatch) -> None:
    from accounts import selectors

    def unreachable(**kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(selectors, "leaderboard_page", unreachable)
    response = api_client.get("/api/v1/leaderboard")
    assert response.status_code == 503
    assert response.json()["code"] == "database_unavailable"
    assert response["Retry-After"] == "1"


def test_the_schema_documents_the_503() -> None:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    operation = schema["paths"]["/api/v1/games/{game_id}/commands"]["post"]
    assert "503" in operation["responses"]


# ---------------------------------------------------------------- Redis away


@pytest.mark.django_db
def test_throttles_let_requests_through_while_redis_is_away(
    monkeypatch, settings, auth_client
) -> None:
    away = RedisCache("redis://127.0.0.1:1/0", {"OPTIONS": {"socket_connect_timeout": 0.5}})
    monkeypatch.setattr(throttling, "cache", lambda: away)
    monkeypatch.setattr(throttling.counts, "shared", lambda: away)
    assert throttling.bump("t:reads:x:1", 60) == 0
    settings.TONGITS_THROTTLE_RATES = {**settings.TONGITS_THROTTLE_RATES, "reads": "1/m"}
    for _ in range(3):  # a limit of 1 a minute, and Redis cannot count: never refused
        assert auth_client.get("/api/v1/me").status_code == 200
