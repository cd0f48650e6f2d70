"""Faults against a real stack from the README's run command (`make run`, embedded PostgreSQL
and broker, a temporary var dir, a free port): the stack heals itself.

- kill -9 of the worker's pool children and of the worker mid-match: the runner starts the
  worker again, the match finishes and is settled (by the worker) within a minute, and its
  chain verifies;
- with the sweeper stopped (beat SIGSTOPped), /healthz turns 503 naming it within 3 sweep
  intervals, and the runner restarts worker and beat until it is healthy again.

One stack for both (about a minute): this is the acceptance test of issue 12's "a stack that
heals itself", and nothing cheaper exercises the runner, the pool and /healthz together.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("faults", ROOT / "scripts" / "faults.py")
faults = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
sys.modules.setdefault("faults", faults)
_spec.loader.exec_module(faults)  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def stack(stack_pgdata):
    with tempfile.TemporaryDirectory(prefix="tongits-faults-") as tmp:
        running = faults.start(Path(tmp), pgdata=stack_pgdata)
        try:
            yield running
        except BaseException:
            print(running.log_text()[-5000:])
            raise
        finally:
            faults.smoke.stop_stack(running)


def test_a_killed_worker_is_restarted_and_the_match_finishes(stack):
    figures = faults.kill_worker_mid_match(stack)
    assert figures["match_after_kill"] < faults.MATCH_LIMIT_SECONDS
    print(f"kill -9 worker mid-match: {figures}")


def test_a_stopped_sweeper_turns_healthz_503_and_the_runner_heals_it(stack):
    figures = faults.stop_the_sweeper(stack)
    # Late means more than 3 intervals since the last sweep, which ran at most then.
    assert figures["stop_to_503"] <= 3 * faults.SWEEP_INTERVAL + 2.0
    print(f"beat stopped: {figures}")
