"""Heartbeats: when each periodic part of the stack last did its work (``/healthz`` reads them)."""

from django.db import models


class Heartbeat(models.Model):
    """One row per part (``"sweeper"``): the last time it ran. Written with an upsert."""

    name = models.CharField(max_length=32, primary_key=True)
    beat_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} at {self.beat_at:%Y-%m-%d %H:%M:%S}"


class Counter(models.Model):
    """A throttle's count for one key and time window, when the throttles count in the database
    (no ``CACHE_URL``): one atomic upsert a request (``ops.throttling.bump``), where
    Django's database cache spends a read and a locked write, and can lose a count between two
    processes. Expired rows are deleted as new counts come."""

    key = models.CharField(max_length=250, primary_key=True)
    value = models.BigIntegerField()
    expires = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.key} = {self.value}"
