"""Keep the garbage collector's full passes short in long-lived server processes.

A web process holds a large heap of objects that live as long as it does (Django, DRF, the
URLconf, the apps' modules). CPython's full collection walks all of them, and while it does,
the whole process stops: under load those pauses were the largest part of the POST p99
(docs/scaling.md, "The web process's choices"). ``settle()``, called once when a process has
loaded the project, moves everything alive at that moment out of the collector's reach
(``gc.freeze``), so later full passes walk only what requests created since.
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Load what loads lazily on the first request (the URLconf and every view module), then
    collect once and freeze the survivors."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 (the import is the point)
    gc.collect()
    gc.freeze()
