"""``manage.py run_scheduler``: the loop that queues the server's work on tables as it falls due.

See ``games.scheduling``. Runs until SIGTERM or SIGINT; several may run at once (claims skip
locked rows), though one per deployment is enough. The loops other apps register beside it
(``scheduling.COMPANIONS``: the matchmaker's) run in threads of their own.
"""

from __future__ import annotations

import threading
from typing import Any

from django.core.management.base import BaseCommand

from core.stopping import stop_on_signals
from games import scheduling
from metrics import exporter


class Command(BaseCommand):
    help = "Queue bot moves, time-outs, deals and settlements as they fall due (until SIGTERM)."

    def handle(self, *args: Any, **options: Any) -> None:
        stop = threading.Event()
        stop_on_signals(stop)
        companions = [
            threading.Thread(target=loop, args=(stop,), name=loop.__qualname__, daemon=True)
            for loop in scheduling.COMPANIONS
        ]
        for thread in companions:
            thread.start()
        exporter.serve_if_asked("scheduler")
        self.stdout.write("scheduler: running")
        self.stdout.flush()
        try:
            scheduling.run_scheduler(stop)
        finally:
            stop.set()
            for thread in companions:
                thread.join(timeout=10)
        self.stdout.write("scheduler: stopped")
