"""Failed log-ins, per account and per client address, with backoff: checked BEFORE the password
is hashed, so guessing cannot tie up the web workers with PBKDF2.

    with login_throttle.guard(request, username):    # raises Throttled (429) while blocked
        token = services.token_obtain(...)            # InvalidCredentials counts as a failure

Each key (the account's normalised name; the client address) counts failures in fixed windows of
``TONGITS_LOGIN_WINDOW_SECONDS``. From the ``limit``-th failure in a window on, the key is
blocked for ``TONGITS_LOGIN_BACKOFF_SECONDS``, doubled for each further failure, at most
``TONGITS_LOGIN_BACKOFF_MAX_SECONDS``. Limits: ``TONGITS_LOGIN_FAILURES_PER_ACCOUNT`` (5) and
``TONGITS_LOGIN_FAILURES_PER_ADDRESS`` (20). A successful log-in clears its account's count (not
the address's: one good account must not reset a guesser's address). Counts live in the shared
``throttle`` cache (``ops.throttling``).

Kept apart from the log-in view, which only wraps its password check in ``guard``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _

from core.errors import Throttled, Unauthenticated
from ops import throttling

clock = time.time  # tests move it forward instead of sleeping


def _keys(username: str, address: str) -> list[tuple[str, int]]:
    account = throttling.digest(username.strip().casefold())
    return [
        (f"login:acct:{account}", settings.TONGITS_LOGIN_FAILURES_PER_ACCOUNT),
        (f"login:addr:{address}", settings.TONGITS_LOGIN_FAILURES_PER_ADDRESS),
    ]


def check(username: str, address: str) -> None:
    """``Throttled`` if the account or the address is blocked now (one cache read)."""
    keys = [f"{key}:until" for key, _ in _keys(username, address)]
    blocked = throttling.cache().get_many(keys)
    now = clock()
    until = max((float(v) for v in blocked.values()), default=0.0)
    if until > now:
        raise Throttled(until - now, _("Too many failed log-ins: try again later."))


def failed(username: str, address: str) -> None:
    """Count a failed log-in; block the account or address once it reaches its limit."""
    window = settings.TONGITS_LOGIN_WINDOW_SECONDS
    now = clock()
    number = int(now // window)
    blocks = {}
    for key, limit in _keys(username, address):
        count = throttling.bump(f"{key}:{number}", window)
        if count >= limit:
            wait = min(
                settings.TONGITS_LOGIN_BACKOFF_SECONDS * 2 ** (count - limit),
                settings.TONGITS_LOGIN_BACKOFF_MAX_SECONDS,
            )
            blocks[f"{key}:until"] = now + wait
    if blocks:
        throttling.cache().set_many(blocks, timeout=int(settings.TONGITS_LOGIN_WINDOW_SECONDS))


def succeeded(username: str) -> None:
    """Forget the account's failures of this window after a good log-in."""
    key, _ = _keys(username, "")[0]
    number = int(clock() // settings.TONGITS_LOGIN_WINDOW_SECONDS)
    throttling.forget_counts([f"{key}:{number}"])
    throttling.cache().delete(f"{key}:until")


@contextlib.contextmanager
def guard(request: Any, username: str) -> Iterator[None]:
    """Refuse a blocked attempt before the body runs; count the body's failure; clear on
    success."""
    address = throttling.client_address(request)
    check(username, address)
    try:
        yield
    except Unauthenticated:
        failed(username, address)
        raise
    succeeded(username)
