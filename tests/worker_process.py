"""``celery worker`` in a process of its own (solo pool: a task runs in that process), on the test
database and the test broker, for the tests that kill it (``kill -9``) in the middle of work."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from django.conf import settings

from tests.conftest import TEST_BROKER_URL


def database_url() -> str:
    db = settings.DATABASES["default"]
    return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


class WorkerProcess:
    """Started, killed and stopped by the test; ``env`` on top of the test's own environment."""

    def __init__(self, log: Path, env: dict[str, str] | None = None) -> None:
        self.log = log
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": TEST_BROKER_URL,
            "TONGITS_SEAL_KEY_FILE": str(settings.TONGITS_SEAL_KEY_FILE),
            "LOG_LEVEL": "WARNING",
            "NO_PROXY": "127.0.0.1,localhost",
            **(env or {}),
        }
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        command = [sys.executable, "-m", "celery", "-A", "tongits_site", "worker"]
        command += ["--pool", "solo", "--without-heartbeat", "--without-gossip", "--without-mingle"]
        out = self.log.open("ab")
        self.proc = subprocess.Popen(command, env=self.env, stdout=out, stderr=subprocess.STDOUT)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
            self.proc = None
