"""The Celery application, configured from Django settings (keys prefixed ``CELERY_``)."""

import os
from typing import Any

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tongits_site.settings")

app = Celery("tongits_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The SQLAlchemy transport (the embedded default of `make run`) polls its table once a second by
# default: too slow for bot turns that follow each other. Its transport options go straight to
# SQLAlchemy's create_engine, which rejects `polling_interval`, so set the class default instead.
SQLA_POLLING_INTERVAL_SECONDS = 0.1


@app.on_after_configure.connect
def _poll_sqla_broker_faster(sender: Celery, **kwargs: Any) -> None:
    if str(sender.conf.broker_url or "").startswith(("sqla+", "sqlalchemy+")):
        from kombu.transport.sqlalchemy import Transport

        Transport.polling_interval = SQLA_POLLING_INTERVAL_SECONDS


@signals.task_prerun.connect
@signals.task_postrun.connect
def _release_connections(task: Any = None, **kwargs: Any) -> None:
    """Around each task, as Django does around each request: hand the connection back to the
    pool, or drop it if it broke (``close_old_connections``). Celery's own Django fixup would
    close the whole pool of a prefork child before and after every task (a new pool, a new
    PostgreSQL backend and the write path's statements prepared again, every task), so
    ``CELERY_DB_REUSE_MAX`` (settings) makes it do that only every few hundred tasks."""
    if task is not None and getattr(task.request, "is_eager", False):
        return  # run inside the caller's transaction: its connection is not ours to release
    from django.db import close_old_connections

    close_old_connections()


@signals.worker_process_init.connect
def _exit_if_orphaned(**kwargs: Any) -> None:
    """A prefork pool child dies with its worker's main process: Celery sets it SIGKILL as its
    parent-death signal first thing, and this (run after that) exits a child whose main process
    died before the signal was set, which the kernel would never send it."""
    from billiard.process import current_process

    parent = getattr(current_process(), "_parent_pid", None)
    if parent is not None and os.getppid() != parent:
        os._exit(1)


@signals.worker_process_shutdown.connect
def _metrics_process_gone(pid: int | None = None, **kwargs: Any) -> None:
    """A pool child that ends leaves its live gauges to prometheus-client's multiprocess mode
    to drop (metrics.instruments)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid or os.getpid())


@signals.worker_ready.connect
@signals.beat_init.connect
def _serve_metrics(sender: Any = None, **kwargs: Any) -> None:
    """A worker's (its main process, once its pool has started) or beat's own metrics endpoint,
    when ``TONGITS_METRICS_PORT`` asks for one (metrics.exporter): under ``make cluster`` and
    compose no web process reads their metrics files."""
    from metrics import exporter

    exporter.serve_if_asked("beat" if kwargs.get("signal") is signals.beat_init else "worker")
