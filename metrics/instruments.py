"""The metrics the processes record as things happen, with prometheus-client.

Under ``make run`` and compose every process writes its values to files in
``PROMETHEUS_MULTIPROC_DIR`` (prometheus-client's multiprocess mode: the gunicorn workers, the
Celery worker's children, the scheduler, the notifier), and ``/metrics`` on any web process
sums them (``metrics.exposition``). Without that directory (tests, a lone ``uvicorn``) each
process keeps its own.

Recording costs a lock and a few memory writes (a ``mmap`` in multiprocess mode); labels are
few and bounded: a route is the URL pattern's name, never the path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from prometheus_client import Counter, Gauge, Histogram

#: Request durations: a REST answer takes milliseconds, a stream lives for minutes.
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0)
LAG_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
#: A move reaches the other seats' streams in milliseconds on a healthy node.
FANOUT_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: A queued task starts within milliseconds when a worker is free, seconds behind a backlog.
QUEUE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0)

requests = Histogram(
    "tongits_http_request_duration_seconds",
    "HTTP requests by route (the URL pattern's name), method and status: from the request's "
    "arrival to its last byte sent.",
    ["route", "method", "status"],
    buckets=REQUEST_BUCKETS,
)
in_progress = Gauge(
    "tongits_http_requests_in_progress",
    "HTTP requests by route that have arrived and are not yet counted in the request histogram "
    "(streams while open): once it is 0, every request the server received is counted there.",
    ["route"],
    multiprocess_mode="livesum",
)
streams = Gauge(
    "tongits_streams_open",
    "Live streams open now (game: /games/{id}/stream, me: /me/stream).",
    ["kind"],
    multiprocess_mode="livesum",
)
fanout_lag = Histogram(
    "tongits_stream_fanout_lag_seconds",
    "From an event's append (its recorded_at) to its frame handed to each open game stream that "
    "was following the game live (not a stream's catch-up on opening, not a delayed "
    "spectator's held-back events).",
    buckets=FANOUT_BUCKETS,
)
commands = Counter(
    "tongits_commands_total", "Commands and other writes appended to games (one per append)."
)
events = Counter("tongits_events_appended_total", "Events appended to games' logs.")
tasks = Histogram(
    "tongits_task_duration_seconds",
    "Celery tasks run, by task name and end state: from the task's start to its end.",
    ["task", "state"],
    buckets=LAG_BUCKETS,
)
task_queue = Histogram(
    "tongits_task_queue_seconds",
    "Celery tasks by name: from the task's publishing (or, for one queued with a countdown, "
    "the time it was due) to its start in a worker.",
    ["task"],
    buckets=QUEUE_BUCKETS,
)
loop_beat = Gauge(
    "tongits_loop_heartbeat_timestamp_seconds",
    "When each looping part (scheduler, notifier) last finished a pass (Unix time): now minus "
    "this is its age.",
    ["part"],
    multiprocess_mode="max",
)
settlement_lag = Histogram(
    "tongits_settlement_lag_seconds",
    "From a match's end to its settlement committed.",
    buckets=LAG_BUCKETS,
)
deliveries = Counter(
    "tongits_deliveries_total",
    "Push and webhook delivery attempts by channel and outcome (sent, retry, failed, skipped...).",
    ["channel", "outcome"],
)
pool = Gauge(
    "tongits_db_pool_connections",
    "Database pool connections of the web processes (size: open, idle: free to take, waiting: "
    "requests waiting for one), summed over the live processes.",
    ["state"],
    multiprocess_mode="livesum",
)


scrapes = Counter("tongits_metrics_scrapes_total", "Scrapes of /metrics answered.")
scrape_cpu = Counter(
    "tongits_metrics_scrape_cpu_seconds_total",
    "CPU time the answering threads spent on /metrics scrapes (what a scrape costs the node).",
)


@contextlib.contextmanager
def stream_open(kind: str) -> Iterator[None]:
    """Count one more open stream of ``kind`` while inside."""
    gauge = streams.labels(kind)
    gauge.inc()
    try:
        yield
    finally:
        gauge.dec()
