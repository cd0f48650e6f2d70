"""An endpoint of its own for a process without a web server (a Celery worker, beat, the
scheduler, the notifier), where its metrics cannot be summed by a web process's ``/metrics``:
``make cluster`` and compose give each of them ``TONGITS_METRICS_PORT`` (``make run`` needs
none: its processes share one directory that its web processes read).

It answers the process's recorded metrics (in multiprocess mode, the files of its
``PROMETHEUS_MULTIPROC_DIR``: a prefork worker's children too), never the ones read from the
database at a scrape (a web node's ``/metrics`` has those), to the same clients as ``/metrics``
(``metrics.access``), from a daemon thread of the process.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import REGISTRY, CollectorRegistry, multiprocess
from prometheus_client.exposition import ThreadingWSGIServer, make_wsgi_app

from metrics import access

logger = logging.getLogger(__name__)

_served: list[Any] = []


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        """Scrapes are not logged (one every 15 s per process)."""


def registry() -> CollectorRegistry:
    """This process's metrics: its directory's files summed in multiprocess mode, else its own."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        summed = CollectorRegistry()
        multiprocess.MultiProcessCollector(summed)
        return summed
    return REGISTRY


def application(exposition: Any) -> Any:
    """``exposition`` (a WSGI app) behind the metrics' access rule."""

    def guarded(wsgi: dict[str, Any], start_response: Any) -> Any:
        # (not named environ: the settings' scan, tests/test_compose.py, reads that name)
        if not access.allowed(wsgi.get("REMOTE_ADDR", ""), wsgi.get("HTTP_AUTHORIZATION", "")):
            body = json.dumps({"code": "metrics_refused", "detail": str(access.REFUSED)})
            start_response("403 Forbidden", [("Content-Type", "application/json")])
            return [body.encode()]
        return exposition(wsgi, start_response)

    return guarded


def serve(port: int, address: str = "127.0.0.1") -> int:
    """Serve this process's metrics on ``address:port`` from a daemon thread; the port bound
    (``port`` 0: a free one)."""
    server = make_server(
        address,
        port,
        application(make_wsgi_app(registry())),
        ThreadingWSGIServer,
        handler_class=_Quiet,
    )
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    _served.append(server)
    return int(server.server_address[1])


def serve_if_asked(name: str) -> int | None:
    """``serve`` on ``TONGITS_METRICS_PORT`` (at ``TONGITS_METRICS_ADDRESS``, 127.0.0.1 by
    default) when it is set; ``name`` is the process's part, for the log. A port in use is
    logged, not fatal: the process's work matters more than its metrics."""
    port = os.environ.get("TONGITS_METRICS_PORT", "").strip()
    if not port or _served:
        return None
    address = os.environ.get("TONGITS_METRICS_ADDRESS", "").strip() or "127.0.0.1"
    try:
        bound = serve(int(port), address)
    except OSError:
        logger.exception("%s: metrics could not be served on %s:%s", name, address, port)
        return None
    logger.info("%s: metrics at http://%s:%d/metrics", name, address, bound)
    return bound
