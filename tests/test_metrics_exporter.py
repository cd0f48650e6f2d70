"""The metrics endpoint of a process without a web server (metrics/exporter.py): a real
``celery worker`` (prefork, a child running the task) serves its own metrics on
``TONGITS_METRICS_PORT``, with each task's wait in the queue and its run by name; and the
endpoint answers whom ``/metrics`` answers."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from wsgiref.util import setup_testing_defaults

import httpx
import pytest
from celery import current_app
from prometheus_client.parser import text_string_to_metric_families

from metrics import exporter
from tests.conftest import TEST_BROKER_URL
from tests.worker_process import database_url

SWEEP = "games.tasks.sweep"
COUNTDOWN = 5


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _samples(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    body = httpx.get(url, timeout=5).text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(body)
        for s in family.samples
    }


@pytest.fixture
def worker_endpoint(tmp_path: Path, transactional_db, settings) -> Iterator[str]:
    port = _free_port()
    files = tmp_path / "metrics"
    files.mkdir()
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": TEST_BROKER_URL,
        "TONGITS_SEAL_KEY_FILE": str(settings.TONGITS_SEAL_KEY_FILE),
        "PROMETHEUS_MULTIPROC_DIR": str(files),
        "TONGITS_METRICS_PORT": str(port),
        "LOG_LEVEL": "WARNING",
        "NO_PROXY": "127.0.0.1,localhost",
    }
    command = [sys.executable, "-m", "celery", "-A", "tongits_site", "worker", "--concurrency=1"]
    command += ["--without-heartbeat", "--without-gossip", "--without-mingle"]
    log = (tmp_path / "worker.log").open("wb")
    proc = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        deadline = time.monotonic() + 60
        while True:  # served once the worker is ready (its pool started)
            try:
                httpx.get(url, timeout=2)
                break
            except httpx.TransportError:
                assert proc.poll() is None, (tmp_path / "worker.log").read_text()
                assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()


def test_a_workers_endpoint_has_its_tasks_wait_and_run_by_name(worker_endpoint: str) -> None:
    key = (("task", SWEEP),)
    assert _samples(worker_endpoint).get(("tongits_task_queue_seconds_count", key), 0) == 0
    current_app.send_task(SWEEP, countdown=COUNTDOWN)
    deadline = time.monotonic() + 60
    while True:
        samples = _samples(worker_endpoint)
        runs = sum(
            value
            for (name, labels), value in samples.items()
            if name == "tongits_task_duration_seconds_count" and ("task", SWEEP) in labels
        )
        if runs >= 1:
            break
        assert time.monotonic() < deadline, "the sweep never ran on the worker"
        time.sleep(0.2)
    assert samples[("tongits_task_queue_seconds_count", key)] == 1
    # Counted from the task's due time, not its publishing: the countdown is not a wait.
    assert samples[("tongits_task_queue_seconds_sum", key)] < COUNTDOWN


def _call(app, address: str, authorization: str = "") -> tuple[str, bytes]:
    environ: dict = {"REMOTE_ADDR": address, "PATH_INFO": "/metrics"}
    if authorization:
        environ["HTTP_AUTHORIZATION"] = authorization
    setup_testing_defaults(environ)
    environ["wsgi.input"] = io.BytesIO()
    status: list[str] = []
    body = b"".join(app(environ, lambda s, headers, exc_info=None: status.append(s)))
    return status[0], body


def test_the_endpoint_answers_whom_metrics_answers(settings) -> None:
    settings.TONGITS_METRICS_TOKEN = "s3cret-metrics-token"
    app = exporter.application(exporter.make_wsgi_app(exporter.registry()))
    status, body = _call(app, "203.0.113.7")
    assert status.startswith("403") and b'"metrics_refused"' in body
    assert _call(app, "203.0.113.7", "Bearer nope")[0].startswith("403")
    status, body = _call(app, "203.0.113.7", "Bearer s3cret-metrics-token")
    assert status.startswith("200") and b"tongits_task_queue_seconds" in body
    assert _call(app, "127.0.0.1")[0].startswith("200")
    settings.TONGITS_METRICS_TOKEN = ""
    assert _call(app, "203.0.113.7", "Bearer ")[0].startswith("403")
