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
