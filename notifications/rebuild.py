"""The inbox against a fresh projection of the logs: ``manage.py notifications rebuild``.

Only the kinds the projector writes from the logs are compared (``PROJECTED``); the others are
written with their causes and have no log to be rebuilt from (``notifications.receivers``). Nor
are the games' notifications of a match whose events were packed into an archive
(``games.archive``, an hour after it was settled): its rows, which the projector reads by id,
are gone, and what they caused is kept as it was written.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from games.models import EventArchive
from notifications.models import Cursor, Kind, Notification
from notifications.projector import Projector

PROJECTED = (Kind.YOUR_TURN, Kind.MATCH_OVER, Kind.CHIPS_SETTLED)


def _projected() -> set[tuple]:
    packed = EventArchive.objects.values("game_id")
    rows = (
        Notification.objects.filter(kind__in=PROJECTED)
        .exclude(kind__in=(Kind.YOUR_TURN, Kind.MATCH_OVER), game_id__in=packed)
        .values_list("user_id", "kind", "cause", "game_id", "data", "created_at")
    )
    return {
        (u, k, c, str(g) if g else None, repr(sorted(d.items())), t) for u, k, c, g, d, t in rows
    }


@dataclass(frozen=True)
class Difference:
    missing: set[tuple]  # a fresh projection has them, the inbox does not
    extra: set[tuple]  # the inbox has them, a fresh projection does not

    @property
    def same(self) -> bool:
        return not self.missing and not self.extra


class _RolledBack(Exception):
    pass


def check() -> Difference:
    """Project both logs from their start into an empty inbox, compare, and roll it all back."""
    kept = _projected()
    fresh: set[tuple] = set()
    try:
        with transaction.atomic():
            Notification.objects.filter(kind__in=PROJECTED).delete()
            Cursor.objects.all().delete()
            Projector(push=False).run_all()
            fresh = _projected()
            raise _RolledBack
    except _RolledBack:
        pass
    return Difference(missing=fresh - kept, extra=kept - fresh)


def repair() -> int:
    """Project both logs from their start, adding what is missing (read marks are kept); how
    many were added. The cursors end where the logs end. Missing webhook messages are recorded
    (studios want every fact, late), missing notifications are not pushed (they are old news)."""
    with transaction.atomic():
        Cursor.objects.all().delete()
        found = Projector(push=False).run_all()
    return len(found.notifications)
