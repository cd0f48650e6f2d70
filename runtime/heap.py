"""Keep the garbage collector's full passes short and rare in long-lived server processes.

A web process holds a large heap of objects that live as long as it does (Django, DRF, the
URLconf, the apps' modules). CPython's full collection walks all of them, and while it does,
the whole process stops: under load those pauses were the largest part of the POST p99
(docs/scaling.md, "The web process's choices"). ``settle()``, called once when a process has
loaded the project, moves everything alive at that moment out of the collector's reach
(``gc.freeze``), so later full passes walk only what requests created since.

What they create since is mostly what open streams and kept-alive connections hold for minutes,
which no full pass can free (under load they found no garbage at all), yet a thousand of them
make each pass stop the process for a few hundred milliseconds. So a full pass runs only after
``FULL_AFTER`` collections of the middle generation (CPython's default is 10), a few minutes
apart under load: the young generations, where the cyclic garbage is, are collected as before.
"""

from __future__ import annotations

import gc

#: Middle-generation collections between two full ones (CPython's default: 10).
FULL_AFTER = 100


def settle() -> None:
    """Load what loads lazily on the first request (the URLconf and every view module), then
    collect once and freeze the survivors, and make full passes rare (``FULL_AFTER``)."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 (the import is the point)
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_AFTER)
