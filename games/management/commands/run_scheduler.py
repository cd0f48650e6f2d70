"""``manage.py run_scheduler``: the loop that queues the server's work on tables as it falls due.

See ``games.scheduling``. Runs until SIGTERM or SIGINT; several may run at once (claims skip
locked rows), though one per deployment is enough.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand

from games import scheduling


class Command(BaseCommand):
    help = "Queue bot moves, time-outs, deals and settlements as they fall due (until SIGTERM)."

    def handle(self, *args: Any, **options: Any) -> None:
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        self.stdout.write("scheduler: running")
        self.stdout.flush()
        scheduling.run_scheduler(stop)
        self.stdout.write("scheduler: stopped")
