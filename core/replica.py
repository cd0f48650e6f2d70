"""Reads that may come from a hot standby: the public history, stats, leaderboard and match
summaries (``accounts.api``), never a game, a session or anything a write depends on.

``DATABASE_REPLICA_URL`` adds the database alias ``replica`` and this module's router; a view
reads from it by running inside ``replica_reads()`` (or under the ``reads_from_replica``
decorator). Everywhere else, and in every transaction of the default database, reads stay on
the primary: the router sends a model's reads to the replica only inside that context.

How stale: the projections those views read change once per finished match, in the settlement
task, which commits with ``synchronous_commit = remote_apply`` when a replica is configured
(``commit_visible_on_replica``): its commit returns only once a synchronous standby has applied
it, so a match that is settled is in the standby's history too. A standby that is not
synchronous (a second one, or the only one while the primary runs without it) lags by its
replay delay (docs/operations.md, "Reads from the standby").
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection, connections

#: The database alias of the standby (settings.DATABASES, when DATABASE_REPLICA_URL is set).
REPLICA_ALIAS = "replica"

_reading = contextvars.ContextVar("replica_reads", default=False)
F = TypeVar("F", bound=Callable[..., Any])


def configured() -> bool:
    """Whether a standby is configured for the reads of this module."""
    return REPLICA_ALIAS in settings.DATABASES


@contextmanager
def replica_reads() -> Iterator[None]:
    """Within: reads of models (not in a transaction of the default database) go to the
    standby, when one is configured."""
    token = _reading.set(True)
    try:
        yield
    finally:
        _reading.reset(token)


def reads_from_replica(view: F) -> F:
    """A view method whose every read may come from the standby (it writes nothing)."""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with replica_reads():
            return view(*args, **kwargs)

    return wrapped  # type: ignore[return-value]


def commit_visible_on_replica() -> None:
    """In a transaction of the default database: its commit waits until the synchronous
    standby has applied it, so the replica's readers see it as soon as the writer returns.
    Without a replica configured, nothing (the commit waits as usual)."""
    if configured():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO remote_apply")


class ReplicaRouter:
    """Django's database router of ``DATABASE_REPLICA_URL`` (settings.DATABASE_ROUTERS)."""

    def db_for_read(self, model: type, **hints: Any) -> str | None:
        if not _reading.get() or connections["default"].in_atomic_block:
            return None
        return REPLICA_ALIAS

    def db_for_write(self, model: type, **hints: Any) -> str | None:
        return "default"

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool | None:
        return True  # the same database, one behind the other

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool | None:
        return db != REPLICA_ALIAS
