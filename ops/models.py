"""Heartbeats: when each periodic part of the stack last did its work (``/healthz`` reads them).

The throttles' counts are not here: they live in Redis, or in the machine's shared memory
(``ops.tally``), so a request writes nothing to the database for them.
"""

from django.db import models


class Heartbeat(models.Model):
    """One row per part (``"sweeper"``): the last time it ran. Written with an upsert."""

    name = models.CharField(max_length=32, primary_key=True)
    beat_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} at {self.beat_at:%Y-%m-%d %H:%M:%S}"
