"""``make manage ARGS="..."``: ``manage.py`` on the database ``make run`` uses.

``DATABASE_URL`` when it is set; otherwise the embedded PostgreSQL of ``TONGITS_VAR_DIR``
(var/): ``make run``'s server while the stack runs, else one started for the command's duration
(the database created and migrated, as ``make run`` does) while holding var/'s lock, so that no
``make run`` starts meanwhile. Without ``CELERY_BROKER_URL`` tasks the command queues go to the
same database's broker tables, as under ``make run``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

from ops import stack


def main(argv: list[str]) -> int:
    """Run ``manage.py`` with ``argv``; its exit status."""
    server: Any = None
    if not os.environ.get("DATABASE_URL"):
        var = stack.var_dir()
        lock = stack.lock_var_dir(var)  # None while `make run` holds it: use its server
        embedded, os.environ["DATABASE_URL"] = stack.start_embedded_postgres(var / "pgdata")
        if lock is not None:
            server = embedded
    if not os.environ.get("CELERY_BROKER_URL"):
        os.environ["CELERY_BROKER_URL"] = stack.sqla_broker_url(os.environ["DATABASE_URL"])
    try:
        if server is not None:
            subprocess.run([sys.executable, "-m", "ops.ensure_db"], check=True)
            migrate = [sys.executable, "manage.py", "migrate", "--noinput", "-v0"]
            subprocess.run(migrate, check=True)
        child = subprocess.Popen([sys.executable, "manage.py", *argv])
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the command itself
        signal.signal(signal.SIGTERM, lambda *_: child.terminate())
        return child.wait()
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
