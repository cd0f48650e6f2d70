"""Notices that tell every web process to forget something it remembers (a player's name, a
session), and whether this process hears them.

Each web process that serves live streams LISTENs on the games' channel (``games.live``).
Besides a game's appends, the apps send there, on commit, notices of the form
``<prefix><value>`` ("forget:12", "forget-user:12", "forget-session:<uuid>"), and register a
handler for their prefix here. While the process's LISTEN connection is up, ``hearing()`` is
true: a memory that such a notice clears may then be kept longer, since a change reaches the
process within milliseconds. When the connection drops or comes back, every ``on_gap``
callback runs: what was sent meanwhile is lost, so those memories are dropped whole.

A loop of its own that only wants to wake on the channel (the scheduler, the notifier) uses
``core.listening``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from django.db import connections

#: The channel the live listener LISTENs on (``games.store.NOTIFY_CHANNEL`` too).
CHANNEL = "game_events"

#: A session ended (``forget-session:<session id>``) and a user changed, suspended, deactivated or
#: deleted (``forget-user:<user id>``): sent by ``accounts.token_cache``, heard by its memory of
#: tokens and by the live streams (``games.live.listener``), which end that session's or
#: account's open streams.
FORGET_SESSION = "forget-session:"
FORGET_USER = "forget-user:"

_lock = threading.Lock()
_handlers: dict[str, Callable[[str], None]] = {}
_gaps: list[Callable[[], None]] = []
_hearing = False
_epoch = 0


def register(
    prefix: str, handler: Callable[[str], None], on_gap: Callable[[], None] | None = None
) -> None:
    """``handler(value)`` for each notice ``<prefix><value>``; ``on_gap()`` when notices may
    have been missed."""
    with _lock:
        _handlers[prefix] = handler
        if on_gap is not None and on_gap not in _gaps:
            _gaps.append(on_gap)


def notify(payload: str, using: str = "default") -> None:
    """``pg_notify`` on the channel (delivered on commit of the current transaction)."""
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, payload])


def notify_channel(channel: str, payload: str = "", using: str = "default") -> None:
    """``pg_notify`` on another channel than the games' (delivered on commit): a loop of its
    own that wakes on it (``core.listening.listen(who, channel)``), such as the matcher."""
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT pg_notify(%s, %s)", [channel, payload])


def send(prefix: str, value: str, using: str = "default") -> None:
    """Notify ``<prefix><value>``."""
    notify(f"{prefix}{value}", using)


def send_many(prefix: str, values: list[str], using: str = "default") -> None:
    """Notify ``<prefix><value>`` for each value, in one statement."""
    if values:
        with connections[using].cursor() as cursor:
            cursor.execute(
                "SELECT pg_notify(%s, %s || v) FROM unnest(%s::text[]) AS v",
                [CHANNEL, prefix, values],
            )


def dispatch(payload: str) -> bool:
    """Run the handler of the payload's prefix; False when no prefix matches (a game's)."""
    for prefix, handler in list(_handlers.items()):
        if payload.startswith(prefix):
            handler(payload[len(prefix) :])
            return True
    return False


def hearing() -> bool:
    """Whether this process's LISTEN connection is up now."""
    return _hearing


def epoch() -> int:
    """Changes whenever ``hearing()`` does: a memory kept longer because this process heard
    notices is only good within the epoch it was kept in."""
    return _epoch


def set_hearing(up: bool) -> None:
    """The listener's connection came up or went down: either way notices may have been
    missed in between, so every ``on_gap`` runs."""
    global _hearing, _epoch
    with _lock:
        _hearing = up
        _epoch += 1
    for on_gap in list(_gaps):
        on_gap()
