"""Nothing of the stack outlives its parent: `make run` (embedded PostgreSQL, a temporary var dir,
a free port) with Celery on Redis, so the worker runs prefork with pool children of its own.

- kill -9 of gunicorn's arbiter alone: within 5 s no old worker is alive, only the new
  arbiter's workers listen on the port, and /healthz answers 200;
- kill -9 of the Celery worker's main process alone: within 5 s none of its pool children is
  alive, and a new worker runs with its own;
- kill -9 of the runner itself (last: it ends the stack): its children stop, and the guard
  stops the embedded PostgreSQL; nothing that carries the stack's var dir is left.

The runner would also stop what is left of an exited child's process group (after 5 s at the
latest); the first two checks fall within that, so each process's own exit is what they
measure. tests/test_asgi_worker.py checks the web workers' exit without any runner.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path

import pytest
import redis

from ops import orphans
from tests.conftest import TEST_BROKER_URL

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("faults", ROOT / "scripts" / "faults.py")
faults = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
sys.modules.setdefault("faults", faults)
_spec.loader.exec_module(faults)  # type: ignore[union-attr]

# The runner's children stop within its stop timeout (15 s), then the server's smart shutdown.
RUNNER_KILLED_LIMIT_SECONDS = 30.0


@pytest.fixture(scope="module")
def stack(stack_pgdata):
    redis.Redis.from_url(TEST_BROKER_URL).flushdb()  # this test worker's broker: no old tasks
    with tempfile.TemporaryDirectory(prefix="tongits-orphans-") as tmp:
        running = faults.start(Path(tmp), broker=TEST_BROKER_URL, pgdata=stack_pgdata)
        try:
            yield running
        except BaseException:
            print(running.log_text()[-5000:])
            raise
        finally:
            if running.proc.poll() is None:
                faults.smoke.stop_stack(running)
            left = orphans.processes_of(running.var_dir)
            assert not left, [orphans.command_line(pid) for pid in left]
    redis.Redis.from_url(TEST_BROKER_URL).flushdb()


def test_a_killed_gunicorn_arbiter_leaves_only_the_new_workers_on_the_port(stack) -> None:
    figures = faults.kill_web_master(stack)
    assert figures["workers_gone"] < faults.ORPHAN_LIMIT_SECONDS
    print(f"kill -9 of gunicorn's arbiter: {figures}")


def test_a_killed_celery_worker_takes_its_pool_children_with_it(stack) -> None:
    figures = faults.kill_worker_main(stack)
    assert figures["children"] == 2  # prefork, concurrency 2: there were children to lose
    assert figures["children_gone"] < faults.ORPHAN_LIMIT_SECONDS
    print(f"kill -9 of the Celery worker's main process: {figures}")


def test_a_killed_runner_leaves_nothing_running(stack) -> None:
    """Last in this module: the stack ends here."""
    figures = faults.kill_runner(stack, RUNNER_KILLED_LIMIT_SECONDS)
    assert figures["processes"] >= 9  # make, web (and workers), worker (and pool), postgres...
    assert "the runner is gone; stopping the embedded PostgreSQL" in stack.log_text()
    print(f"kill -9 of the runner: {figures}")
