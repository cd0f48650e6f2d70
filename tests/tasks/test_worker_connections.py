"""Celery's Django fixup, told it runs in a prefork child, keeps the database pool across
tasks.

Celery's Django fixup closes the connections before and after each task and, in a prefork child
with Django's pool, the whole pool: every task opened a new pool and a new PostgreSQL backend.
What runs here is not a worker: Celery's real ``DjangoWorkerFixup`` with a stand-in worker whose
pool class names prefork (so ``_is_prefork()`` is true), its handlers and the project's own
connected to the real ``task_prerun``/``task_postrun`` signals, and those signals sent around a
stand-in body (a ``SELECT pg_backend_pid()``) in this process, as a worker child sends them
around a task. No prefork child runs in the suite.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from celery import signals
from celery.fixups.django import DjangoWorkerFixup
from django.conf import settings
from django.db import connection

from games.tasks import deal_next_round
from tongits_site.celery import app

TASKS = 30


def _around_task(task, body) -> object:
    """What a worker does around one task: prerun signal, the task's body, postrun signal."""
    signals.task_prerun.send(sender=task, task_id="t", task=task, args=(), kwargs={})
    try:
        return body()
    finally:
        signals.task_postrun.send(
            sender=task, task_id="t", task=task, args=(), kwargs={}, retval=None, state="SUCCESS"
        )


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


@pytest.fixture
def prefork_fixup():
    fixup = DjangoWorkerFixup(app)
    fixup.worker = SimpleNamespace(pool_cls="celery.concurrency.prefork:TaskPool")
    assert fixup._is_prefork()
    signals.task_prerun.connect(fixup.on_task_prerun)
    signals.task_postrun.connect(fixup.on_task_postrun)
    try:
        yield fixup
    finally:
        signals.task_prerun.disconnect(fixup.on_task_prerun)
        signals.task_postrun.disconnect(fixup.on_task_postrun)


@pytest.mark.django_db(transaction=True)
def test_the_prefork_fixup_leaves_the_pool_open_across_task_signals(prefork_fixup) -> None:
    assert settings.DATABASES["default"]["OPTIONS"].get("pool"), "the pool is what is kept"
    assert prefork_fixup.db_reuse_max == settings.CELERY_DB_REUSE_MAX
    task = deal_next_round
    _backend_pid()
    pool = connection.pool
    opened = pool.get_stats().get("connections_num", 0)
    for _ in range(TASKS):
        _around_task(task, _backend_pid)
    assert connection.pool is pool and not pool.closed
    # The pool's connections serve the tasks: at most one more opened, not a backend per task.
    opened = pool.get_stats().get("connections_num", 0) - opened
    assert opened <= 1, f"{opened} connections opened for {TASKS} tasks"
    # Between tasks the connection is back in the pool, as after a web request.
    assert connection.connection is None


@pytest.mark.django_db(transaction=True)
def test_after_signals_around_a_broken_connection_the_next_gets_a_working_one(
    prefork_fixup,
) -> None:
    """A connection that failed between a task's signals is dropped after them, not handed to
    the body between the next ones."""
    task = deal_next_round

    def fail_then_mark() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")

    with pytest.raises(Exception):  # noqa: B017 (the server ends the session: which error is psycopg's)
        _around_task(task, fail_then_mark)
    assert isinstance(_around_task(task, _backend_pid), int)
