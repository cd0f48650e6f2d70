"""A burst of pushes to each service: pushes a second, and the worker's CPU a push (the second part
of `make bench-push`).

    .venv/bin/python scripts/bench_push_burst.py                       (3,000 pushes a service)
    .venv/bin/python scripts/bench_push_burst.py --pushes 6000 --kinds fcm,apns

Why: a tournament's start or a season's end pushes to thousands of phones at once, with no move
behind them; what bounds it is the delivery path alone (the outbox's claim, the skip rules, the
texts, the requests, the outcomes' write), so that is what this drives. The stand-ins of the
three services run in a process of their own (``python -m tests.notifications.standins``): a
Web Push service (answers 201), FCM (the OAuth token endpoint and ``messages:send``, which check
the assertion, the bearer and each message) and APNs (HTTP/2 over TLS, checking the provider
JWT's signature and every header). The server's settings point at them as an operator's would
at the real services (``TONGITS_FCM_*``, ``TONGITS_APNS_*``, a fresh VAPID key).

On a scratch database ``tongits_bench_push_burst`` a Celery worker is started as `make run`
starts it (``celery worker``, concurrency 2, prefork) with Redis database 13 as the broker.
Then, one service at a time, it makes through the ORM ``--pushes / 20`` users with 20 devices
each (a session each) and one ``your_turn`` of a table of their own per user, records their
pushes with ``push.record_many`` (the notifier's call), queues the due deliveries as the
notifier queues them (``runner.Queue``, ``TONGITS_PUSH_BATCH`` to a task; what falls due again,
a retry, once a second) and runs the clock until none is pending. Worker CPU is the user and
system time of the worker's processes (``/proc``), before and after. Every delivery must end
``sent`` and every request must have passed the stand-in's checks.

It prints, per service: pushes, seconds, pushes a second, the worker's CPU a push, the
stand-ins' CPU a push (their side, for scale), PostgreSQL's (the backends serving the scratch
database, theirs alone), and the commit and machine. A benchmark, not a test: it asserts
nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_players import reset_database  # noqa: E402
from bench_push import flush_broker, machine, vapid_private_key  # noqa: E402

DATABASE = "postgres://postgres@127.0.0.1:5432/tongits_bench_push_burst"
BROKER = "redis://127.0.0.1:6379/13"
LOG = ROOT / "var" / "bench-push-burst-worker.log"
DEVICES_PER_USER = 20
KINDS = ("webpush", "fcm", "apns")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid`` and its descendants now alive, and of their reaped
    children (``/proc/<pid>/stat`` fields 14-17)."""
    ticks = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        fields = text.rsplit(")", 1)[1].split()
        stats[int(entry.name)] = fields
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        fields = stats.get(current)
        if fields:
            total += sum(int(value) for value in fields[11:15]) / ticks
        todo += children.get(current, [])
    return total


def database_cpu(database: str) -> dict[int, float]:
    """User + system CPU of each PostgreSQL backend serving ``database`` now (its process
    title names the database), by process id."""
    ticks = os.sysconf("SC_CLK_TCK")
    marker = f" {database} ".encode()
    backends = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes()
            if not title.startswith(b"postgres: ") or marker not in title:
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        backends[int(entry.name)] = sum(int(value) for value in fields[11:13]) / ticks
    return backends


def start_standins() -> tuple[subprocess.Popen[str], dict[str, str]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.notifications.standins"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, json.loads(process.stdout.readline())


def standin_counts(process: subprocess.Popen[str]) -> dict[str, int]:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("counts\n")
    process.stdin.flush()
    return json.loads(process.stdout.readline())


def configure(config: dict[str, str], database_url: str, broker: str) -> dict[str, str]:
    """The environment of this process and the worker: the scratch database, the broker, and
    the three services pointed at the stand-ins."""
    no_proxy = ",".join(filter(None, [os.environ.get("NO_PROXY", ""), "127.0.0.1"]))
    env = {
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": broker,
        "LOG_LEVEL": "WARNING",
        "TONGITS_VAR_DIR": str(ROOT / "var" / "bench-push-burst"),
        "TONGITS_WEBPUSH_VAPID_PRIVATE_KEY": vapid_private_key(),
        "TONGITS_WEBPUSH_ENDPOINT_HOSTS": "127.0.0.1",
        "NO_PROXY": no_proxy,
        "no_proxy": no_proxy,
        **{k: v for k, v in config.items() if k.startswith("TONGITS_")},
    }
    env.pop("DJANGO_DEBUG", None)
    os.environ.update(env)
    return env


def make_pushes(kind: str, pushes: int, webpush_port: int) -> list[int]:
    """``pushes`` deliveries of ``kind`` recorded as the notifier records them: users with
    ``DEVICES_PER_USER`` devices each, one turn of a table of their own per user."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from accounts.services import session_create
    from notifications import push
    from notifications.models import Device, Kind, Notification, PushDelivery
    from tests.notifications.support import Browser

    browser = Browser()
    users = -(-pushes // DEVICES_PER_USER)
    tag = uuid.uuid4().hex[:6]
    model = get_user_model()
    notifications, devices = [], []
    made = 0
    for u in range(users):
        user = model.objects.create_user(username=f"burst{tag}{kind}{u}", password=None)
        session, _ = session_create(user=user, device="bench")
        for d in range(min(DEVICES_PER_USER, pushes - made)):
            made += 1
            if kind == "webpush":
                token = f"http://127.0.0.1:{webpush_port}/push/{u}-{d}"
                keys = {"p256dh": browser.p256dh, "auth": browser.auth}
            elif kind == "fcm":
                token, keys = f"bench{u:05d}{d:02d}:APA91b{uuid.uuid4().hex}", {}
            else:
                token, keys = uuid.uuid4().hex + uuid.uuid4().hex, {}
            devices.append(Device(user=user, session=session, kind=kind, token=token, **keys))
        game_id = uuid.uuid4()
        notifications.append(
            Notification(
                user=user,
                kind=Kind.YOUR_TURN,
                cause=f"your_turn:{game_id}:1",
                game_id=game_id,
                data={"game_id": str(game_id), "version": 1, "seat": 0, "draw_answer": False},
                created_at=timezone.now(),
            )
        )
    Device.objects.bulk_create(devices)
    Notification.objects.bulk_create(notifications)
    push.record_many(notifications)
    return list(
        PushDelivery.objects.filter(notification__in=notifications).values_list("id", flat=True)
    )


def start_worker(env: dict[str, str]) -> subprocess.Popen[bytes]:
    from ops.stack import WORKER_CONCURRENCY

    LOG.parent.mkdir(exist_ok=True)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "tongits_site",
            "worker",
            "--loglevel=WARNING",
            f"--concurrency={WORKER_CONCURRENCY}",
        ],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=LOG.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def wait_ready(worker: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    from celery import current_app

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if worker.poll() is not None:
            raise SystemExit(f"the worker exited ({worker.returncode}); see {LOG}")
        if current_app.control.ping(timeout=1.0):
            return
    raise SystemExit(f"the worker did not answer; see {LOG}")


def run(
    kind: str, ids: list[int], worker_pid: int, standins_pid: int, database: str
) -> dict[str, Any]:
    """Queue ``ids`` as the notifier does and wait until none is pending."""
    from django.conf import settings

    from notifications import push
    from notifications.models import PushAttempt, PushDelivery, Status
    from notifications.runner import Queue
    from notifications.tasks import DELIVER_PUSHES

    # The services before this one left none pending and the next one's are not recorded yet,
    # so "any pending" is this service's: one look at the partial index of pending rows, not a
    # list of 3,000 ids sent and looked up 20 times a second (which the two cores would pay
    # for beside the worker).
    pending = PushDelivery.objects.filter(status=Status.PENDING)
    cpu0, stand0 = cpu_seconds(worker_pid), cpu_seconds(standins_pid)
    db0 = database_cpu(database)
    started = time.monotonic()
    queue, batch = Queue(), settings.TONGITS_PUSH_BATCH
    queue.send(DELIVER_PUSHES, ids, batch=batch)
    looked = started
    while pending.exists():
        if time.monotonic() - started > 600:
            raise SystemExit(f"{kind}: {pending.count()} still pending after 600 s")
        time.sleep(0.05)
        if time.monotonic() - looked >= 1.0:  # retries falling due, as the notifier queues them
            queue.send(DELIVER_PUSHES, push.due(), batch=batch)
            looked = time.monotonic()
    seconds = time.monotonic() - started
    cpu, stand = cpu_seconds(worker_pid) - cpu0, cpu_seconds(standins_pid) - stand0
    db = sum(at - db0.get(pid, 0.0) for pid, at in database_cpu(database).items())
    statuses: dict[str, int] = {}
    for status in PushDelivery.objects.filter(pk__in=ids).values_list("status", flat=True):
        statuses[status] = statuses.get(status, 0) + 1
    return {
        "pushes": len(ids),
        "seconds": seconds,
        "per_second": len(ids) / seconds,
        "worker_ms": cpu / len(ids) * 1000,
        "standins_ms": stand / len(ids) * 1000,
        "database_ms": db / len(ids) * 1000,
        "statuses": statuses,
        "tries": PushAttempt.objects.filter(delivery_id__in=ids).count(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pushes", type=int, default=3000, help="pushes to each service")
    parser.add_argument("--kinds", default=",".join(KINDS), help="which services, in order")
    parser.add_argument("--database-url", default=DATABASE)
    parser.add_argument("--broker", default=BROKER)
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]

    # SIGTERM (a time-out) stops the worker and the stand-ins too, as Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    print(machine(), flush=True)
    reset_database(args.database_url)
    flush_broker(args.broker)
    standins, config = start_standins()
    env = configure(config, args.database_url, args.broker)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tongits_site.settings")
    import django

    django.setup()
    from django.conf import settings

    print(
        f"{settings.TONGITS_PUSH_BATCH} to a task, FCM {settings.TONGITS_FCM_STREAMS} "
        f"streams, APNs {settings.TONGITS_APNS_STREAMS} streams a worker process",
        flush=True,
    )
    database = urllib.parse.urlsplit(args.database_url).path.lstrip("/")
    worker = start_worker(env)
    try:
        wait_ready(worker)
        for kind in kinds:
            # Each service's burst is recorded just before its run, so no other service's
            # pushes are due while the clock runs (the notifier's look at the outbox would
            # queue them into this run).
            ids = make_pushes(kind, args.pushes, int(config["webpush_port"]))
            result = run(kind, ids, worker.pid, standins.pid, database)
            print(
                f"{kind:8} {result['pushes']} pushes in {result['seconds']:.2f} s: "
                f"{result['per_second']:,.0f} pushes/s; worker CPU {result['worker_ms']:.2f} ms "
                f"a push; stand-ins' CPU {result['standins_ms']:.2f} ms a push; PostgreSQL's "
                f"CPU {result['database_ms']:.2f} ms a push; "
                f"outcomes {result['statuses']}, tries {result['tries']}",
                flush=True,
            )
        print(f"stand-ins: {standin_counts(standins)}", flush=True)
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, 15)
            try:
                worker.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, 9)
        if standins.stdin is not None:
            standins.stdin.close()
        standins.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
