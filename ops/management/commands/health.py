"""``manage.py health``: the check of ``/healthz`` without HTTP, for the worker's and beat's
container health checks (docker/compose.yaml). Exits 1 naming what is late or unreachable."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from ops import health
from ops.models import Heartbeat


class Command(BaseCommand):
    help = "Exit 1 when the database does not answer or the sweeper is late (as /healthz)."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            beats = {
                name: at.timestamp()
                for name, at in Heartbeat.objects.filter(name__in=health.PARTS).values_list(
                    "name", "beat_at"
                )
            }
        except DatabaseError as exc:
            raise CommandError(f"database unreachable: {exc}") from exc
        late = health.late_parts(beats, time.time(), started=0.0)
        if late:
            raise CommandError(f"late: {', '.join(late)}")
        self.stdout.write("ok")
