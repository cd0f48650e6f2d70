"""Friends hear of what others do, inside the transaction of the cause: a match starting (the
lobby's ``match_started``) or settled (the game row saved with ``settled_at``), a person hiding
or showing their presence (the user row saved with ``show_presence``), an account's deletion
(``account_deleted``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.dispatch import receiver

from accounts import signals as account_signals
from games import signals as game_signals
from games.models import Seat
from social import presence, services


@receiver(game_signals.match_started)
def match_started(sender: Any, *, game_id: Any, user_ids: list[int], **_: Any) -> None:
    """Its people are playing now: their friends are told."""
    presence.touch(user_ids)


def game_saved(sender: Any, instance: Any, update_fields: Any, **_: Any) -> None:
    """A match settled (finished, or called off with chips at stake): its people are no longer
    playing there. A match called off for idleness with nothing at stake is never settled, so
    its end reaches friends with their next news (reads are right at once)."""
    if update_fields and "settled_at" in update_fields:
        people = Seat.objects.filter(game_id=instance.pk, user__isnull=False)
        presence.touch(people.values_list("user_id", flat=True))


def user_saved(sender: Any, instance: Any, update_fields: Any, **_: Any) -> None:
    """Presence shown or hidden: friends are told either way (hiding it is news too)."""
    if update_fields and "show_presence" in update_fields:
        presence.touch([instance.pk], shown_only=False)


@receiver(account_signals.account_deleted)
def account_deleted(sender: Any, *, user_id: int, at: datetime, **_: Any) -> None:
    """The deleted account's friendships, requests, blocks and presence go."""
    services.forget_user(user_id)
