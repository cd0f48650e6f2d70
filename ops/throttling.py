"""Throttles whose counts every web process shares: in Redis when ``CACHE_URL`` names one (one
``INCR`` a request, across machines), else in the machine's shared memory (``ops.tally``: no
database round trip and no commit, exact across the machine's web processes). The ``throttle``
cache (Redis, else Django's database cache, whose table a migration creates) also holds the
failed log-ins' blocks.

DRF throttle classes, each a fixed-window counter (one ``INCR`` a request on Redis) rather than
DRF's list of timestamps, which grows with the rate and is rewritten on every request:

- ``ReadThrottle`` (the default of every view): reads (GET/HEAD) per token, per address without
  one: ``reads``;
- ``CommandThrottle``: commands per user: ``commands``;
- ``RegisterThrottle``: registrations per address: ``register``.
- ``PasswordResetThrottle``: password-reset requests per address: ``password_reset``.

Rates are ``TONGITS_THROTTLE_RATES`` (``"600/m"``, ``"20/h"``, ``"5/15m"``), read on every
request, so a test may change them with the ``settings`` fixture. Client addresses in
``TONGITS_THROTTLE_EXEMPT`` (a load generator, a trusted internal client) are counted like any
other and never refused. A refusal is 429
``{"code": "throttled", "detail", "retry_after"}`` with ``Retry-After``
(``core.api_errors``). Failed log-ins have their own module,
``accounts.login_throttle``. The client's address is ``REMOTE_ADDR``, or the address
``TONGITS_NUM_PROXIES`` trusted proxies put in ``X-Forwarded-For``.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from typing import Any

from django.conf import settings
from redis.exceptions import RedisError
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from ops import counts
from ops.counts import cache
from ops.tally import tally

logger = logging.getLogger(__name__)
__all__ = ["cache"]  # the throttles' cache, for the log-in throttle (accounts)
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([smhd])[a-z]*\s*$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """``"600/m"`` -> (600, 60); ``"5/15m"`` -> (5, 900); None or "" -> no limit."""
    if not rate:
        return None
    match = _RATE.match(rate)
    if match is None:
        raise ValueError(f"not a rate: {rate!r} (e.g. 600/m, 20/h, 5/15m)")
    count, multiple, unit = match.groups()
    return int(count), int(multiple or 1) * _UNIT[unit]


def _local() -> bool:
    """Whether counts stay on this machine (no Redis): the shared table of ``ops.tally``."""
    return counts.shared() is None


def bump(key: str, ttl: float) -> int:
    """Add one to a counter; its new value (1 for a new key or a new window, 0 when Redis
    cannot be reached: the request is let through rather than refused for the counter's sake,
    and the outage is logged)."""
    if _local():
        return tally(settings.TONGITS_THROTTLE_COUNTS_FILE).add(key, ttl)
    store = cache()
    try:
        try:
            return store.incr(key)
        except ValueError:  # no such key yet
            if store.add(key, 1, int(ttl) + 1):
                return 1
            return store.incr(key)
    except RedisError:
        _unreachable()
        return 0


_warned_at = 0.0


def _unreachable() -> None:
    """Log that the counters' Redis is away, at most every 10 s per process."""
    global _warned_at
    now = time.monotonic()
    if now - _warned_at >= 10.0:
        _warned_at = now
        logger.warning("throttles: Redis unreachable; counting nothing meanwhile", exc_info=True)


def forget_counts(keys: list[str]) -> None:
    """Drop these counters (a good log-in clears its account's failures)."""
    if _local():
        tally(settings.TONGITS_THROTTLE_COUNTS_FILE).forget(keys)
    else:
        cache().delete_many(keys)


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
        if client_address(request) in settings.TONGITS_THROTTLE_EXEMPT:
            return True  # counted like anyone (a benchmark measures what a request costs)
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


class SignInThrottle(AddressThrottle):
    """Guest and Apple/Google sign-ins per client address (a new account is also counted as a
    registration: ``RegisterThrottle``)."""

    scope = "sign_in"


class PasswordResetThrottle(AddressThrottle):
    """Password-reset requests per client address: each may send a mail, so a stranger must not
    be able to flood an inbox (or the mail server) through the endpoint."""

    scope = "password_reset"


def _retry_after() -> dict[str, Any]:
    """The Retry-After header of a 429 (a new dict each time: no YAML alias in the schema)."""
    return {"schema": {"type": "integer"}, "description": "Seconds to wait before trying again."}


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def document_throttling(result: dict, generator: Any, request: Any, public: bool) -> dict:
    """drf-spectacular postprocessing hook: every operation may answer 429 ``throttled``, and
    every POST 413 ``payload_too_large`` (``runtime.hardening``). A 429 an operation declares
    itself (for codes of its own, such as ``too_many_streams``) gets the Retry-After header."""
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            responses = operation.get("responses") if isinstance(operation, dict) else None
            if responses is None:
                continue
            if method in ("post", "put", "patch") and "413" not in responses:
                responses["413"] = _error("The body is larger than TONGITS_MAX_BODY_BYTES.")
            if "429" in responses:
                responses["429"].setdefault("headers", {}).setdefault("Retry-After", _retry_after())
                continue
            responses["429"] = {
                "description": 'Too many requests: code "throttled", retry_after (seconds) '
                "and the Retry-After header.",
                "headers": {"Retry-After": _retry_after()},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            }
    return result
