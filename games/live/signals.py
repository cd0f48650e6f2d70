"""NOTIFY ``game_events`` for changes of a game row that append no event.

Appends notify in ``games.store.write``. A table created, joined or left, and a match
settled, change only the ``games_game`` row (saved with ``update_fields``, or created): the same
``<game_id>:<version>`` notice wakes the streams and me-streams that care. PostgreSQL delivers it
on commit, and folds identical notices of one transaction into one.
"""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_save

from core import notices
from games import players

CHANNEL = notices.CHANNEL
#: A notice that names no game: ``forget:<user id>``.
FORGET = "forget:"


def notify(game_id: Any, version: int, using: str = "default") -> None:
    notices.notify(f"{game_id}:{version}", using)


def forget_name(user_id: int, using: str = "default") -> None:
    """On commit, every process that follows games forgets the name it remembers for this user
    (``forget:<id>``: the account was deleted or renamed), instead of showing it until it
    expires."""
    notices.send(FORGET, str(user_id), using)


#: The user fields a shown name is made of (``players.shown``).
NAME_FIELDS = frozenset({"username", "deleted_at", "display_name", "avatar"})


def _user_saved(sender: Any, instance: Any, created: bool, update_fields: Any, **kwargs: Any):
    # A save that may change the name (a rename, a new display name or avatar, a deletion):
    # every process forgets it.
    if not created and (update_fields is None or NAME_FIELDS & set(update_fields)):
        players.forget(instance.pk)
        forget_name(instance.pk, kwargs.get("using") or "default")


def _forget_name(value: str) -> None:
    if value.isdigit():
        players.forget(int(value))


def _game_saved(sender: Any, instance: Any, created: bool, update_fields: Any, **kwargs: Any):
    # A save without update_fields is the append's (which notifies itself).
    if created or update_fields:
        notify(instance.pk, instance.version, kwargs.get("using") or "default")


def connect() -> None:
    from django.contrib.auth import get_user_model

    from games.models import Game

    notices.register(FORGET, _forget_name, on_gap=players.clear)
    post_save.connect(_game_saved, sender=Game, dispatch_uid="games.live.notify_game_saved")
    post_save.connect(
        _user_saved, sender=get_user_model(), dispatch_uid="games.live.forget_renamed"
    )
