"""gunicorn settings of the web processes: ``gunicorn --config=python:runtime.gunicorn_config``.

Only what a command line cannot say; the worker class, ``--reuse-port`` and the address stay on
the command line (ops/stack.py).
"""

import os

from runtime.asgi_worker import reserve_addresses

# The arbiter holds the addresses that --reuse-port would leave it without (asgi_worker).
on_starting = reserve_addresses

# Idle kept-alive connections stay open this long (s): longer than a phone's gap between moves
# and than a load balancer's own idle time-out, so the server never closes one about to be reused.
keepalive = int(os.environ.get("WEB_KEEPALIVE", "90"))


def child_exit(server: object, worker: object) -> None:
    """A worker that exited (or was killed) leaves the live gauges it wrote (open streams, its
    pool): prometheus-client's multiprocess mode drops them (metrics.instruments)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)  # type: ignore[attr-defined]
