"""A real Celery worker (in a thread of this process) on the real Redis and PostgreSQL.

The broker is ``TEST_BROKER_URL`` (a Redis database of its own, emptied before each test). The
tests commit for real (``transaction=True``) so the worker's own connections see the games.
Redis down is a failure, never a skip.

Fixtures:
    broker        the emptied test broker (``broker.purge()`` drops every queued task: lost work)
    worker        a started worker and scheduler loop (``games.scheduling.run_scheduler``, in a
                  thread); ``worker.stop()`` / ``worker.start()`` for lost-work tests
    task_runs     every task the worker finished, as ``TaskRun`` (id, name, args, retval)
    run_on_worker ``run_on_worker(task, *args)``: send a task, wait for the worker, its retval
    timing        bots and deals at once (no delays); the sweeper's grace 0
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import pytest
import redis
from celery import signals
from celery.contrib.testing.worker import start_worker
from celery.worker import state as worker_state
from django.db import connections

from games import scheduling
from tests.conftest import TEST_BROKER_URL
from tests.tasks.support import wait_for
from tongits_site.celery import app

WORKER_CONCURRENCY = 2
SHUTDOWN_SECONDS = 30.0


@pytest.fixture(autouse=True)
def game_timing(settings) -> None:
    """Overrides the root fixture: the worker deals (a task), with no pauses anywhere."""
    settings.TONGITS_BOT_DELAY_SECONDS = 0.0
    settings.TONGITS_NEXT_ROUND_DELAY_SECONDS = 0.0
    settings.TONGITS_SWEEP_GRACE_SECONDS = 0.0
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


class Broker:
    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url, socket_connect_timeout=3)

    def purge(self) -> None:
        """Drop every queued, reserved and scheduled task: the work is lost."""
        self.client.flushdb()

    def queued(self) -> int:
        return int(self.client.llen(app.conf.task_default_queue))


@pytest.fixture
def broker() -> Broker:
    broker = Broker(TEST_BROKER_URL)
    try:
        broker.client.ping()
    except redis.RedisError as exc:
        pytest.fail(f"Redis at {TEST_BROKER_URL} is unreachable ({exc}): start it (see .ci/run)")
    broker.purge()
    return broker


@dataclass(frozen=True)
class TaskRun:
    id: str
    name: str
    args: tuple
    retval: Any


@pytest.fixture
def task_runs() -> Iterator[list[TaskRun]]:
    runs: list[TaskRun] = []

    def finished(sender: Any = None, task_id: str = "", args: Any = (), retval: Any = None, **kw):
        runs.append(TaskRun(task_id, sender.name, tuple(args or ()), retval))
        # The worker's threads keep no connection: the test database is flushed and dropped.
        connections.close_all()

    signals.task_postrun.connect(finished, weak=False)
    yield runs
    signals.task_postrun.disconnect(finished)


class Worker:
    """Start and stop an embedded worker (a thread pool of WORKER_CONCURRENCY) at will."""

    def __init__(self) -> None:
        self._stack: ExitStack | None = None
        self._controller: Any = None
        self._stop_scheduler = threading.Event()
        self._scheduler: threading.Thread | None = None

    def start(self) -> None:
        assert self._stack is None, "already running"
        app.conf.worker_hijack_root_logger = False
        self._stack = ExitStack()
        self._controller = self._stack.enter_context(
            start_worker(
                app,
                pool="threads",
                concurrency=WORKER_CONCURRENCY,
                perform_ping_check=False,
                shutdown_timeout=SHUTDOWN_SECONDS,
                loglevel="WARNING",
            )
        )
        self._stop_scheduler.clear()
        self._scheduler = threading.Thread(
            target=scheduling.run_scheduler,
            args=(self._stop_scheduler,),
            kwargs={"poll": 0.05},
            name="scheduler",
        )
        self._scheduler.start()

    def stop(self) -> None:
        """A warm shutdown: the tasks in hand finish (a cold one would leave them running into
        the next test's flush); reserved ones go back to the broker."""
        if self._stack is None:
            return
        self._stop_scheduler.set()
        if self._scheduler is not None:
            self._scheduler.join(SHUTDOWN_SECONDS)
            assert not self._scheduler.is_alive(), "the scheduler did not stop"
            self._scheduler = None
        stack, controller = self._stack, self._controller
        self._stack = self._controller = None
        worker_state.should_stop = 0
        try:
            assert controller.blueprint.shutdown_complete.wait(SHUTDOWN_SECONDS), "still busy"
        finally:
            stack.close()  # joins the worker's thread
            worker_state.should_stop = None
        # Nothing of it may outlive the test: its pool threads would write into the next one.
        assert wait_for(lambda: not _pool_threads(), SHUTDOWN_SECONDS), _pool_threads()

    @property
    def running(self) -> bool:
        return self._stack is not None


def _pool_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("ThreadPoolExecutor")]


@pytest.fixture
def worker(transactional_db, broker: Broker, task_runs: list[TaskRun]) -> Iterator[Worker]:
    worker = Worker()
    worker.start()
    yield worker
    worker.stop()


@pytest.fixture
def stopped_worker(transactional_db, broker: Broker, task_runs: list[TaskRun]) -> Iterator[Worker]:
    """A worker that is not running yet: tables stall until ``start()``."""
    worker = Worker()
    yield worker
    worker.stop()


@pytest.fixture
def run_on_worker(task_runs: list[TaskRun]) -> Callable[..., Any]:
    def run(task: Any, *args: Any, timeout: float = 30.0) -> Any:
        task_id = task.delay(*args).id
        found = wait_for(lambda: next((r for r in task_runs if r.id == task_id), None), timeout)
        assert found, (
            f"{task.name}{args} did not run within {timeout} s; "
            f"{Broker(TEST_BROKER_URL).queued()} queued; last runs {task_runs[-5:]}"
        )
        return found.retval

    return run
