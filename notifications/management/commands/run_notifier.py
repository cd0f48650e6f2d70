"""``manage.py run_notifier``: the loop that writes the inbox from the logs and queues pushes and
webhooks (``notifications.runner``). Runs until SIGTERM or SIGINT."""

from __future__ import annotations

import threading
from typing import Any

from django.core.management.base import BaseCommand

from core.stopping import stop_on_signals
from metrics import exporter
from notifications import runner


class Command(BaseCommand):
    help = "Project notifications from the games' and the chips' logs; queue their deliveries."

    def handle(self, *args: Any, **options: Any) -> None:
        stop = threading.Event()
        stop_on_signals(stop)
        exporter.serve_if_asked("notifier")
        self.stdout.write("notifier: running")
        self.stdout.flush()
        runner.run_notifier(stop)
        self.stdout.write("notifier: stopped")
