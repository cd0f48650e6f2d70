"""Where the counts the web processes share live: the throttles' (``ops.throttling``), the stream
cap's leases (``ops.stream_slots``) and the gauges (``ops.gauges``).

With Redis (``CACHE_URL``) they are in the ``throttle`` cache, shared by every machine that uses
it; without, the cache is the database's, which none of them uses: they are in the machine's
shared table instead (``ops.tally``), exact across its web processes and free of round trips.
"""

from __future__ import annotations

from django.core.cache import BaseCache, caches
from django.core.cache.backends.db import DatabaseCache

#: The cache the shared counts live in when it is Redis.
CACHE_ALIAS = "throttle"


def cache() -> BaseCache:
    """The throttles' cache (Redis, or the database's when CACHE_URL names none)."""
    return caches[CACHE_ALIAS]


def shared() -> BaseCache | None:
    """The cache when machines share it (Redis); None: the counts stay in the machine's table."""
    store = cache()
    return None if isinstance(store, DatabaseCache) else store
