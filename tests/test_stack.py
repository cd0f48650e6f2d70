"""The embedded broker of `make run`: Celery's SQLAlchemy transport on PostgreSQL.

Runs against a scratch database of the test server (created and dropped here), so the broker's
tables never land in the Django test database.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import psycopg
import pytest
from celery import Celery
from django.conf import settings

from ops import stack
from ops.ensure_db import server_params
from tests.conftest import checkout_tag


@pytest.fixture
def sqla_app() -> Iterator[Celery]:
    db = settings.DATABASES["default"]
    name = f"test_kombu_{checkout_tag()}"
    with psycopg.connect(**server_params(db, connect_timeout=5), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    user = quote(db.get("USER") or "")
    password = f":{quote(db['PASSWORD'])}" if db.get("PASSWORD") else ""
    host, port = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432
    app = Celery(
        "sqla-test",
        broker=stack.sqla_broker_url(f"postgres://{user}{password}@{host}:{port}/{name}"),
    )
    try:
        yield app
    finally:
        app.pool.force_close_all()
        with psycopg.connect(**server_params(db, connect_timeout=5), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_delivered_messages_are_dropped_and_queued_ones_kept(sqla_app: Celery) -> None:
    with sqla_app.connection_for_write() as conn:
        queue = conn.SimpleQueue("celery")
        for n in range(5):
            queue.put({"n": n})
        taken = [queue.get(timeout=5) for _ in range(3)]
        for message in taken:
            message.ack()
        queue.close()

    assert stack.drop_delivered_messages(sqla_app) == 3
    assert stack.drop_delivered_messages(sqla_app) == 0

    with sqla_app.connection_for_write() as conn:
        queue = conn.SimpleQueue("celery")
        left = [queue.get(timeout=5).payload["n"] for _ in range(2)]
        assert queue.qsize() == 0
        queue.close()
    assert left == [3, 4]
