"""Faults against a real stack started as the README says (`make run`, embedded defaults), and
the figures of docs/operations.md.

    .venv/bin/python scripts/faults.py            # prints the figures; exit 1 on a failure

Scenarios (tests/test_stack_faults.py runs the first two with assertions):

    kill_worker_mid_match   kill -9 the Celery worker's pool children and the worker itself
                            while a match against two bots runs (followed on its stream): the
                            runner starts it again, the match finishes and is settled (the
                            worker's task), and its chain verifies; reports the seconds from the
                            kill to the next event the server wrote itself, and to the settlement
    stop_the_sweeper        SIGSTOP celery beat: /healthz turns 503 naming the sweeper within 3
                            sweep intervals; the runner restarts worker and beat; healthy again
    healthz_under_login_storm  p50/p99 of /healthz while 4 clients send wrong passwords (the
                            login throttle refuses them before the password hasher runs)
    kill_web_master         kill -9 of gunicorn's arbiter alone: its workers exit, and the port's
                            listeners are only the new arbiter's workers; /healthz answers 200
    kill_worker_main        kill -9 of the Celery worker's main process alone: its pool children
                            (prefork, on a Redis broker: --broker) exit; a new worker runs
    kill_runner             kill -9 of the runner itself: its children and the embedded
                            PostgreSQL stop (tests/test_stack_orphans.py runs these three)

Figures depend on the machine (and on what else runs on it): say so when quoting them.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import signal
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("smoke", ROOT / "scripts" / "smoke.py")
smoke = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
sys.modules.setdefault("smoke", smoke)
_spec.loader.exec_module(smoke)  # type: ignore[union-attr]

from ops import orphans  # noqa: E402 (the checkout is on the path once smoke is loaded)

SWEEP_INTERVAL = 2.0  # seconds: the test's sweep interval, so "3 intervals" is quick
MATCH_LIMIT_SECONDS = 60.0
# A process whose parent is killed is gone within this long (docs/operations.md).
ORPHAN_LIMIT_SECONDS = 5.0
# A part the runner starts again is serving within this long.
RESTART_LIMIT_SECONDS = 60.0


def start(
    var_dir: Path, broker: str | None = None, port: int = 0, pgdata: Path | None = None
) -> Any:
    """`make run` with a short sweep interval and a bot delay that leaves the worker idle
    between moves; on the embedded broker, or on ``broker`` (Redis: a prefork worker);
    ``pgdata``: smoke.start_stack's."""
    extra = {
        "TONGITS_SWEEP_INTERVAL_SECONDS": str(SWEEP_INTERVAL),
        "TONGITS_BOT_DELAY_SECONDS": "0.2",
        # The bots' worker at the others' niceness: a match timed against a limit must not
        # crawl because something else on the machine (another test worker) takes the CPU
        # that nice-10 bots would only get when it is idle.
        "TONGITS_BOT_NICENESS": "0",
        **({"CELERY_BROKER_URL": broker} if broker else {}),
    }
    stack = smoke.start_stack(var_dir, port or smoke.free_port(), extra, pgdata=pgdata)
    smoke.wait_healthy(stack, timeout=120)
    return stack


def runner(stack: Any) -> psutil.Process:
    """The stack's runner (``python -m ops.stack``, under make)."""
    for proc in psutil.Process(stack.proc.pid).children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if "ops.stack" in proc.cmdline():
                return proc
    raise AssertionError("no runner in the stack")


def part(stack: Any, word: str) -> psutil.Process:
    """The runner's child whose command line has ``word`` (worker, beat, gunicorn): the part
    itself, never one of its own children. ``worker`` is the default queue's: the bots' worker
    (``--queues=bots``) runs ``celery worker`` too, and children come in pid order, which wraps."""
    for proc in runner(stack).children():
        try:
            cmd = proc.cmdline()
        except psutil.Error:
            continue
        if word in cmd and not any(arg.startswith("--queues=") for arg in cmd):
            return proc
    raise AssertionError(f"no {word} process in the stack")


def wait_until(what: str, limit: float, condition: Any) -> float:
    """Seconds until ``condition()`` holds, checked every 20 ms; fails after ``limit``."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < limit, f"{what}: not within {limit:.0f} s"
        time.sleep(0.02)
    return time.monotonic() - started


def gone(procs: list[psutil.Process]) -> bool:
    return not any(smoke._running(p) for p in procs)


def replacement(stack: Any, word: str, old: psutil.Process, children: int) -> psutil.Process:
    """The part the runner started in place of ``old``, once it has ``children`` of its own."""

    def found() -> psutil.Process | None:
        with contextlib.suppress(AssertionError, psutil.Error):
            new = part(stack, word)
            if new.pid != old.pid and len(new.children()) >= children:
                return new
        return None

    wait_until(f"the runner's new {word}", RESTART_LIMIT_SECONDS, found)
    return found()  # type: ignore[return-value]


def kill_web_master(stack: Any) -> dict[str, float]:
    """kill -9 of gunicorn's arbiter alone (its workers are left to themselves): every old
    worker is gone within ORPHAN_LIMIT_SECONDS, from then on only the new arbiter's workers
    listen on the port, and /healthz answers 200. Returns {"workers_gone": s, "serving": s}."""
    master = part(stack, "gunicorn")
    workers = master.children()
    assert workers, "gunicorn has no workers"
    assert orphans.listening_pids(stack.port) == {w.pid for w in workers}
    master.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    figures = {
        "workers_gone": wait_until("old workers gone", ORPHAN_LIMIT_SECONDS, lambda: gone(workers))
    }
    new = replacement(stack, "gunicorn", master, len(workers))
    old = {w.pid for w in workers}
    assert not orphans.listening_pids(stack.port) & old

    def serving() -> bool:
        listening = orphans.listening_pids(stack.port)
        assert not listening & old, "an old worker listens again"
        return listening == {w.pid for w in new.children()} and healthy(stack)

    wait_until("the new workers listening and /healthz 200", RESTART_LIMIT_SECONDS, serving)
    figures["serving"] = time.monotonic() - killed
    assert "web exited with status -9; starting it again" in stack.log_text()
    return figures


def kill_worker_main(stack: Any) -> dict[str, float]:
    """kill -9 of the Celery worker's main process alone: its pool children (prefork) are gone
    within ORPHAN_LIMIT_SECONDS, and a new worker runs (with as many children) while /healthz
    answers 200. Returns {"children": n, "children_gone": s, "running": s}."""
    worker = part(stack, "worker")
    pool = worker.children()
    worker.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    figures = {
        "children": float(len(pool)),
        "children_gone": wait_until("old pool gone", ORPHAN_LIMIT_SECONDS, lambda: gone(pool)),
    }
    replacement(stack, "worker", worker, len(pool))
    wait_until("/healthz 200", RESTART_LIMIT_SECONDS, lambda: healthy(stack))
    figures["running"] = time.monotonic() - killed
    return figures


def kill_runner(stack: Any, limit: float) -> dict[str, float]:
    """kill -9 of the runner itself, which ends the stack: every process that carries its var
    directory, the embedded PostgreSQL with them, is gone within ``limit`` seconds. Returns
    {"processes": n, "all_gone": s}."""
    procs = [psutil.Process(pid) for pid in orphans.processes_of(stack.var_dir)]
    runner(stack).send_signal(signal.SIGKILL)
    figures = {"processes": float(len(procs))}
    # Both: the processes seen before, and any started since (a part restarting meanwhile).
    figures["all_gone"] = wait_until(
        "the stack's processes gone",
        limit,
        lambda: gone(procs) and not orphans.processes_of(stack.var_dir),
    )
    assert orphans.postmaster_pid(stack.var_dir / "pgdata") is None
    stack.proc.wait(10)  # make, once its child is gone
    return figures


def register(stack: Any) -> Any:
    api = smoke.Api(stack.base_url)
    status, body = api.call(
        "POST",
        "/api/v1/auth/register",
        {"username": f"fault-{uuid.uuid4().hex[:8]}", "password": "a-long-fault-passphrase"},
    )
    assert status == 201, (status, body)
    api.token = body["token"]
    return api


def kill_worker_mid_match(stack: Any) -> dict[str, float]:
    """A match against two bots, followed on its stream (as smoke.py plays it: no polling that
    would take the machine from the bots); after our third move, kill -9 the worker's pool
    children and the worker. The stream ends once the match is settled, which is the worker's
    task: the restarted worker has run. Returns {"kill_to_next_move": s (the next event the
    server wrote itself), "match_after_kill": s (until settled)}."""
    import random

    from games.rules.bots import GreedyBot

    api = register(stack)
    seats = [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}]
    # One round: its settlement is the main worker's task, so the match ends only once the
    # restarted worker has run (a second round would add its deal, and half a minute).
    rules = {"preset": "standard", "wins_to_match": 1}
    status, table = api.call("POST", "/api/v1/tables", {"rules": rules, "seats": seats})
    assert status == 201 and table["status"] == "active", table
    game = f"/api/v1/games/{table['id']}"
    bot, rng, moves, killed_at, figures = GreedyBot(), random.Random(1), 0, None, {}
    killed_version, acted, end = -1, -1, None
    for event, data in smoke.follow(api, f"{game}/stream"):
        if killed_at is not None:
            now = time.monotonic()
            assert now - killed_at < MATCH_LIMIT_SECONDS, "the match did not finish in time"
            if (
                event not in ("view", "end")
                and "kill_to_next_move" not in figures
                and data["seq"] > killed_version
                and not data["actor"].startswith("user:")
            ):
                figures["kill_to_next_move"] = now - killed_at
        if event == "end":
            end = data
            break
        if event != "view" or not data["legal_commands"] or data["version"] <= acted:
            continue
        command = bot.choose(data["view"], data["legal_commands"], rng)
        status, body = api.call(
            "POST", f"{game}/commands", {"command": command, "expected_version": data["version"]}
        )
        assert status in (200, 409), (status, body)
        acted = data["version"]
        moves += status == 200
        if status == 200 and moves == 3 and killed_at is None:
            worker = part(stack, "worker")
            for child in worker.children(recursive=True):  # prefork's pool (none with threads)
                child.send_signal(signal.SIGKILL)
            worker.send_signal(signal.SIGKILL)
            killed_at = time.monotonic()
            killed_version = api.call("GET", game)[1]["version"]
    assert killed_at is not None, "the match ended before the worker could be killed"
    assert end == {"reason": "settled"}, end
    figures["match_after_kill"] = time.monotonic() - killed_at
    status, audit = api.call("GET", f"{game}/audit")
    assert status == 200 and audit["chain_ok"] and audit["commitments_ok"], audit
    text = stack.log_text()
    assert "worker exited with status -9; starting it again" in text, "the runner did not restart"
    return figures


def health(stack: Any) -> tuple[int, dict]:
    import json

    try:
        with urllib.request.urlopen(f"{stack.base_url}/healthz", timeout=5) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def healthy(stack: Any) -> bool:
    """/healthz answers 200 (a new worker still loading the application may not answer yet)."""
    try:
        return health(stack)[0] == 200
    except OSError:  # refused, reset or timed out
        return False


def stop_the_sweeper(stack: Any) -> dict[str, float]:
    """SIGSTOP beat; time /healthz's 503 (naming the sweeper) and the runner's repair."""
    beat = part(stack, "beat")
    # Wait for a fresh sweep, so the clock starts from a known last run.
    deadline = time.monotonic() + 30
    while health(stack)[0] != 200:
        assert time.monotonic() < deadline, "not healthy before the fault"
        time.sleep(0.2)
    beat.send_signal(signal.SIGSTOP)
    stopped = time.monotonic()
    figures: dict[str, float] = {}
    while True:
        status, body = health(stack)
        now = time.monotonic() - stopped
        if status == 503:
            assert body["late"] == ["sweeper"], body
            figures["stop_to_503"] = now
            break
        assert now < 4 * SWEEP_INTERVAL + 5, "healthz did not turn 503"
        time.sleep(0.1)
    while health(stack)[0] != 200:
        assert time.monotonic() - stopped < 120, "the runner did not heal the stack"
        time.sleep(0.2)
    figures["stop_to_healthy_again"] = time.monotonic() - stopped
    assert "the sweeper is late; restarting the worker and beat" in stack.log_text()
    return figures


def healthz_latencies(stack: Any, seconds: float) -> list[tuple[float, float]]:
    """(time, ms) of /healthz requests, one every 20 ms, for ``seconds``."""
    samples = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.perf_counter()
        health(stack)
        samples.append((time.monotonic(), (time.perf_counter() - started) * 1000))
        time.sleep(0.02)
    return samples


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 1),
        "p99_ms": round(ordered[max(0, int(len(ordered) * 0.99) - 1)], 1),
        "n": len(ordered),
    }


def healthz_under_login_storm(stack: Any, seconds: float = 40.0, clients: int = 4) -> dict:
    """/healthz latencies while ``clients`` threads send wrong passwords: idle first, then over
    the whole storm, then once the throttle refuses every attempt (after the first 429s)."""
    idle = [ms for _, ms in healthz_latencies(stack, 5.0)]
    stop = threading.Event()
    counts = {"401": 0, "429": 0, "other": 0}
    first_429: list[float] = []

    def hammer(index: int) -> None:
        client = smoke.Api(stack.base_url)
        while not stop.is_set():
            status, _ = client.call(
                "POST", "/api/v1/auth/token", {"username": f"victim{index}", "password": "guess"}
            )
            counts[str(status) if str(status) in counts else "other"] += 1
            if status == 429 and not first_429:
                first_429.append(time.monotonic())

    threads = [threading.Thread(target=hammer, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    samples = healthz_latencies(stack, seconds)
    stop.set()
    for thread in threads:
        thread.join()
    throttled = [ms for at, ms in samples if first_429 and at > first_429[0] + 5.0]
    return {
        "idle": percentiles(idle),
        "storm": percentiles([ms for _, ms in samples]),
        "storm_once_throttled": percentiles(throttled) if throttled else None,
        "logins": counts,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--broker", help="CELERY_BROKER_URL (Redis: the worker runs prefork, with pool children)"
    )
    parser.add_argument("--port", type=int, default=0, help="the stack's port (0: a free one)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory(prefix="tongits-faults-") as tmp:
        stack = start(Path(tmp), args.broker, args.port)
        try:
            storm = healthz_under_login_storm(stack)
            print(f"faults: /healthz under 4 clients of wrong passwords: {storm}", flush=True)
            print(f"faults: kill -9 worker mid-match: {kill_worker_mid_match(stack)}", flush=True)
            print(f"faults: beat stopped: {stop_the_sweeper(stack)}", flush=True)
            print(f"faults: kill -9 of gunicorn's arbiter: {kill_web_master(stack)}", flush=True)
            print(f"faults: kill -9 of the worker's main: {kill_worker_main(stack)}", flush=True)
            print(f"faults: kill -9 of the runner: {kill_runner(stack, 60.0)}", flush=True)
        except BaseException:
            print(stack.log_text()[-5000:])
            raise
        finally:
            if stack.proc.poll() is None:
                smoke.stop_stack(stack)
    return 0


if __name__ == "__main__":
    sys.exit(main())
