"""Throttles on a cache every web process shares (the ``throttle`` cache: Redis when
``CACHE_URL`` names one, else Django's database cache, whose table a migration creates; without
Redis the counts themselves live in ``ops.Counter``, one atomic upsert a request).

DRF throttle classes, each a fixed-window counter (one ``INCR`` a request on Redis) rather than
DRF's list of timestamps, which grows with the rate and is rewritten on every request:

- ``ReadThrottle`` (the default of every view): reads (GET/HEAD) per token, per address without
  one: ``reads``;
- ``CommandThrottle``: commands per user: ``commands``;
- ``RegisterThrottle``: registrations per address: ``register``.
- ``PasswordResetThrottle``: password-reset requests per address: ``password_reset``.

Rates are ``TONGITS_THROTTLE_RATES`` (``"600/m"``, ``"20/h"``, ``"5/15m"``), read on every
request, so a test may change them with the ``settings`` fixture. A refusal is 429
``{"code": "throttled", "detail", "retry_after"}`` with ``Retry-After``
(``core.api_errors``). Failed log-ins have their own module,
``accounts.login_throttle``. The client's address is ``REMOTE_ADDR``, or the address
``TONGITS_NUM_PROXIES`` trusted proxies put in ``X-Forwarded-For``.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import BaseCache, caches
from django.core.cache.backends.db import DatabaseCache
from django.db import connection
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

CACHE_ALIAS = "throttle"
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([smhd])[a-z]*\s*$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def cache() -> BaseCache:
    """The shared cache throttles count in."""
    return caches[CACHE_ALIAS]


def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """``"600/m"`` -> (600, 60); ``"5/15m"`` -> (5, 900); None or "" -> no limit."""
    if not rate:
        return None
    match = _RATE.match(rate)
    if match is None:
        raise ValueError(f"not a rate: {rate!r} (e.g. 600/m, 20/h, 5/15m)")
    count, multiple, unit = match.groups()
    return int(count), int(multiple or 1) * _UNIT[unit]


def bump(key: str, ttl: float) -> int:
    """Add one to a counter in the shared cache; its new value (1 for a new key)."""
    store = cache()
    if isinstance(store, DatabaseCache):
        return _bump_row(key, ttl)
    try:
        return store.incr(key)
    except ValueError:  # no such key yet
        if store.add(key, 1, int(ttl) + 1):
            return 1
        return store.incr(key)


def forget_counts(keys: list[str]) -> None:
    """Drop these counters (a good log-in clears its account's failures)."""
    store = cache()
    if isinstance(store, DatabaseCache):
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {_counter_table()} WHERE key = ANY(%s)", [keys])
    else:
        store.delete_many(keys)


#: Without Redis, every this many counts a process deletes up to this many expired counters.
PURGE_EVERY = 1000
_counts = itertools.count(1)


@functools.cache
def _counter_table() -> str:
    from ops.models import Counter

    return connection.ops.quote_name(Counter._meta.db_table)


def _bump_row(key: str, ttl: float) -> int:
    """One statement: insert the counter at 1, or add one to it (from 1 again if its window
    has passed); PostgreSQL's row lock makes two processes' counts add up."""
    table = _counter_table()
    now = datetime.now(UTC)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (key, value, expires) VALUES (%s, 1, %s) "
            f"ON CONFLICT (key) DO UPDATE SET "
            f"value = CASE WHEN {table}.expires <= %s THEN 1 ELSE {table}.value + 1 END, "
            f"expires = CASE WHEN {table}.expires <= %s THEN EXCLUDED.expires "
            f"ELSE {table}.expires END RETURNING value",
            [key, now + timedelta(seconds=int(ttl) + 1), now, now],
        )
        (value,) = cursor.fetchone()
        if next(_counts) % PURGE_EVERY == 0:
            cursor.execute(
                f"DELETE FROM {table} WHERE key IN "
                f"(SELECT key FROM {table} WHERE expires < %s LIMIT %s)",
                [now, PURGE_EVERY],
            )
    return int(value)


def digest(text: str) -> str:
    """A short, fixed-length cache key part for any text (usernames, tokens)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def client_address(request: Any) -> str:
    """The client's address: ``REMOTE_ADDR``, or with ``TONGITS_NUM_PROXIES`` trusted proxies in
    front, the address the outermost of them saw (never a header the client chose)."""
    proxies = settings.TONGITS_NUM_PROXIES
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops:
            return hops[-min(proxies, len(hops))]
    return request.META.get("REMOTE_ADDR") or "unknown"


class FixedWindowThrottle(BaseThrottle):
    """``num`` requests per ``period`` seconds per key, in windows aligned on the clock."""

    scope = ""
    timer = staticmethod(time.time)

    def __init__(self) -> None:
        self.wait_seconds: float | None = None

    def get_key(self, request: Request, view: Any) -> str | None:
        raise NotImplementedError

    def allow_request(self, request: Request, view: Any) -> bool:
        rate = parse_rate(settings.TONGITS_THROTTLE_RATES.get(self.scope))
        if rate is None:
            return True
        ident = self.get_key(request, view)
        if ident is None:
            return True
        num, period = rate
        now = self.timer()
        window = int(now // period)
        if bump(f"t:{self.scope}:{ident}:{window}", period) <= num:
            return True
        self.wait_seconds = (window + 1) * period - now
        return False

    def wait(self) -> float | None:
        return self.wait_seconds


class ReadThrottle(FixedWindowThrottle):
    """Reads per token (per address without one); writes are throttled per operation."""

    scope = "reads"

    def get_key(self, request: Request, view: Any) -> str | None:
        if request.method not in ("GET", "HEAD"):
            return None
        token = getattr(request.auth, "key", None) or getattr(request.auth, "pk", None)
        return f"token:{digest(str(token))}" if token else f"addr:{client_address(request)}"


class CommandThrottle(FixedWindowThrottle):
    """Commands per user: generous, a person never meets it; a runaway client does."""

    scope = "commands"

    def get_key(self, request: Request, view: Any) -> str | None:
        user = getattr(request, "user", None)
        return f"user:{user.pk}" if user is not None and user.is_authenticated else None


class AddressThrottle(FixedWindowThrottle):
    """Requests per client address, for operations anyone may call without a token."""

    def get_key(self, request: Request, view: Any) -> str | None:
        return f"addr:{client_address(request)}"


class RegisterThrottle(AddressThrottle):
    """Registrations per client address."""

    scope = "register"


class PasswordResetThrottle(AddressThrottle):
    """Password-reset requests per client address: each may send a mail, so a stranger must not
    be able to flood an inbox (or the mail server) through the endpoint."""

    scope = "password_reset"


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def document_throttling(result: dict, generator: Any, request: Any, public: bool) -> dict:
    """drf-spectacular postprocessing hook: every operation may answer 429 ``throttled``, and
    every POST 413 ``payload_too_large`` (``runtime.hardening``)."""
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            responses = operation.get("responses") if isinstance(operation, dict) else None
            if responses is None:
                continue
            if method in ("post", "put", "patch") and "413" not in responses:
                responses["413"] = _error("The body is larger than TONGITS_MAX_BODY_BYTES.")
            if "429" in responses:
                continue
            responses["429"] = {
                "description": 'Too many requests: code "throttled", retry_after (seconds) '
                "and the Retry-After header.",
                "headers": {
                    "Retry-After": {
                        "schema": {"type": "integer"},
                        "description": "Seconds to wait before trying again.",
                    }
                },
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            }
    return result
