"""`make cluster`: the server past one machine's processes, on one machine, on the engines a
studio runs in production (docs/operations.md, "The cluster").

    python -m cluster            start it in the foreground; Ctrl-C stops everything
    python -m cluster status     what runs, with its pid, port and role (var/cluster.json)
    python -m cluster failover   promote the standby once the primary is gone, fence the old one
    python -m cluster rejoin     the fenced old primary back as the synchronous standby

What runs, under supervisord (``supervisor``, the process manager): PostgreSQL's primary and a
synchronous streaming standby (Debian's ``postgresql-15``), pgbouncer in transaction mode in
front of the primary, Redis (broker and shared counters), two web nodes (gunicorn with the
project's uvicorn workers, each its own process group and port) behind HAProxy, two Celery
worker nodes, two schedulers, the notifier and beat.

This package is not part of the image (docker/): it drives a machine's engines, and imports no
app of the project (it runs them as processes).
"""
