"""What ``/metrics`` answers: the recorded metrics (summed over the processes in multiprocess
mode) and the ones read at scrape time from the database and the broker.

Read at each scrape, by the process that answers it (a few indexed or small reads):

- ``tongits_heartbeat_age_seconds{part}``: seconds since each heartbeat row (the sweeper's;
  /healthz calls it late past three sweep intervals);
- ``tongits_celery_queue_depth{queue}``: messages waiting in each Redis queue of the broker
  (the default queue and the bots' ``TONGITS_BOT_QUEUE``);
- ``tongits_notifier_lag_seconds{channel}``: how long the oldest due push or webhook delivery
  has waited past its time (0 when none waits);
- ``tongits_ledger_balance{kind}`` and ``tongits_ledger_in_play{kind}``: the chips ledger's
  balances summed by account kind (wallets, escrows, the house...), and ``tongits_ledger_accounts``.

A source that cannot be read is left out of that scrape and logged; the rest is answered.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from metrics import instruments

logger = logging.getLogger(__name__)

DELIVERY_TABLES = {"push": "notifications_pushdelivery", "webhook": "notifications_webhookdelivery"}


def _rows(sql: str) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return list(cursor.fetchall())


class ScrapeCollector(Collector):
    """The metrics read when scraped."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield from self._heartbeats()
        yield from self._queues()
        yield from self._notifier()
        yield from self._ledger()

    def _heartbeats(self) -> Iterator[GaugeMetricFamily]:
        try:
            rows = _rows(
                "SELECT name, EXTRACT(EPOCH FROM clock_timestamp() - beat_at) FROM ops_heartbeat"
            )
        except DatabaseError:
            logger.warning("metrics: heartbeats unreadable", exc_info=True)
            return
        family = GaugeMetricFamily(
            "tongits_heartbeat_age_seconds", "Seconds since each part's heartbeat.", labels=["part"]
        )
        for name, age in rows:
            family.add_metric([name], float(age))
        yield family

    def _queues(self) -> Iterator[GaugeMetricFamily]:
        url = str(getattr(settings, "CELERY_BROKER_URL", "") or "")
        if not url.startswith(("redis://", "rediss://")):
            return
        queues = [getattr(settings, "CELERY_TASK_DEFAULT_QUEUE", None) or "celery"]
        bots = str(getattr(settings, "TONGITS_BOT_QUEUE", "") or "")
        if bots and bots not in queues:
            queues.append(bots)  # the bots' moves, served by a worker of their own
        try:
            import redis

            client = redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
            depths = [(queue, int(client.llen(queue))) for queue in queues]
            client.close()
        except Exception:
            logger.warning("metrics: the broker's queues unreadable", exc_info=True)
            return
        family = GaugeMetricFamily(
            "tongits_celery_queue_depth", "Messages waiting in a Celery queue.", labels=["queue"]
        )
        for queue, depth in depths:
            family.add_metric([queue], depth)
        yield family

    def _notifier(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "tongits_notifier_lag_seconds",
            "How long the oldest due delivery has waited past its time.",
            labels=["channel"],
        )
        try:
            for channel, table in DELIVERY_TABLES.items():
                [(lag,)] = _rows(
                    "SELECT COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - "
                    f"min(next_attempt_at)), 0) FROM {table} "
                    "WHERE status = 'pending' AND next_attempt_at <= clock_timestamp()"
                )
                family.add_metric([channel], max(0.0, float(lag)))
        except DatabaseError:
            logger.warning("metrics: deliveries unreadable", exc_info=True)
            return
        yield family

    def _ledger(self) -> Iterator[GaugeMetricFamily]:
        try:
            rows = _rows(
                "SELECT a.kind, count(*), COALESCE(sum(b.balance), 0), COALESCE(sum(b.in_play), 0) "
                "FROM chips_account a JOIN chips_balance b ON b.account_id = a.id GROUP BY a.kind"
            )
        except DatabaseError:
            logger.warning("metrics: the ledger unreadable", exc_info=True)
            return
        accounts = GaugeMetricFamily(
            "tongits_ledger_accounts", "Chips accounts by kind.", labels=["kind"]
        )
        balance = GaugeMetricFamily(
            "tongits_ledger_balance", "Chips balances summed by account kind.", labels=["kind"]
        )
        in_play = GaugeMetricFamily(
            "tongits_ledger_in_play", "Chips in play summed by account kind.", labels=["kind"]
        )
        for kind, count, total, playing in rows:
            accounts.add_metric([kind], int(count))
            balance.add_metric([kind], int(total))
            in_play.add_metric([kind], int(playing))
        yield from (accounts, balance, in_play)


def render() -> bytes:
    """The text exposition: every process's recorded metrics and the scrape-time ones; its own
    CPU time is counted in ``tongits_metrics_scrape_cpu_seconds_total`` (this thread's, so the
    figure is the scrape's cost alone on a busy node), seen by the next scrape."""
    started = time.thread_time()
    try:
        return _render()
    finally:
        instruments.scrapes.inc()
        instruments.scrape_cpu.inc(time.thread_time() - started)


def _render() -> bytes:
    registry: CollectorRegistry
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    return generate_latest(registry) + generate_latest(_scrape_registry())


_scrape: CollectorRegistry | None = None


def _scrape_registry() -> CollectorRegistry:
    global _scrape
    if _scrape is None:
        _scrape = CollectorRegistry(auto_describe=False)
        _scrape.register(ScrapeCollector())
    return _scrape
