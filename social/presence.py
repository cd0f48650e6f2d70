"""Presence writes: the record of a person's comings and goings, and the wake-ups that carry
them to their friends' ``/me/stream`` (the frames themselves: ``social.live``).

What a friend is shown is read when it is shown (``social.selectors.presences``: the tables,
the stream places, the record's ``last_seen``). What is written here is only what cannot be read
afterwards, and only when something changes, never on a read:

- A stream opening or closing (``stream_watcher``, an ``ops.stream_slots`` watcher): in a thread
  of its own, the person's places are looked at; when whether they hold one differs from the
  record's ``online``, the record changes (``last_seen`` and ``changed_at``: now) in one
  conditional upsert, and their friends are woken. Several processes' streams interleave, so
  each look reads the truth rather than counting; the conditional write makes one of them tell.
- A match of theirs starting or settled, and their hiding or showing it (``touch``, from the
  receivers of ``social.receivers``, in the transaction of the cause): ``changed_at`` moves on
  and their friends are woken, on commit.

Waking friends is one statement however many they are: ``pg_notify('wake-user:<id>')`` for each
friend of the people concerned, read from the friendships in the same statement. Each woken
``/me/stream`` then reads which of its friends changed (one query) and their presence (at most
three more and one look at the stream places), not every friend's.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from django.contrib.auth import get_user_model
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from core import notices
from games.live.listener import WAKE_USER
from ops import stream_slots
from social.models import Friendship, Presence

logger = logging.getLogger(__name__)

# One thread per process: the watcher returns at once (it may be called in the event loop) and
# a person's comings and goings are looked at in the order this process saw them.
_looker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="presence")

_USERS = get_user_model()._meta.db_table

_ONLINE = f"""
INSERT INTO {Presence._meta.db_table} (user_id, online, last_seen, changed_at)
VALUES (%(user)s, %(online)s, %(now)s, %(now)s)
ON CONFLICT (user_id) DO UPDATE
SET online = EXCLUDED.online, last_seen = EXCLUDED.last_seen, changed_at = EXCLUDED.changed_at
WHERE {Presence._meta.db_table}.online IS DISTINCT FROM EXCLUDED.online
RETURNING user_id
"""

# Only for accounts that exist (the record has no foreign key: see ``look``).
_TOUCH = f"""
INSERT INTO {Presence._meta.db_table} (user_id, online, changed_at)
SELECT u.id, false, %(now)s FROM {_USERS} u WHERE u.id = ANY(%(users)s::bigint[])
ON CONFLICT (user_id) DO UPDATE SET changed_at = EXCLUDED.changed_at
"""


def _wake_sql(shown_only: bool) -> str:
    friendship = Friendship._meta.db_table
    shown = (
        f"AND EXISTS (SELECT 1 FROM {_USERS} a WHERE a.id = t.u AND a.show_presence)"
        if shown_only
        else ""
    )
    return f"""
SELECT pg_notify(%(channel)s, %(prefix)s || f.other)
FROM (
    SELECT DISTINCT CASE WHEN s.user_low_id = t.u THEN s.user_high_id ELSE s.user_low_id END
    FROM unnest(%(users)s::bigint[]) AS t(u)
    JOIN {friendship} s ON s.user_low_id = t.u OR s.user_high_id = t.u
    WHERE s.accepted_at IS NOT NULL {shown}
) AS f(other)
"""


def wake_friends(user_ids: Iterable[int], *, shown_only: bool = True) -> None:
    """On commit, wake the ``/me/stream`` of every friend of these people (of those who show
    their presence, unless ``shown_only`` is False): one statement."""
    users = sorted({int(uid) for uid in user_ids})
    if not users:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            _wake_sql(shown_only),
            {"channel": notices.CHANNEL, "prefix": WAKE_USER, "users": users},
        )


def wake(user_ids: Iterable[int]) -> None:
    """On commit, wake these people's own ``/me/stream`` (a friendship began or ended)."""
    notices.send_many(WAKE_USER, [str(uid) for uid in sorted(set(user_ids))])


def touch(user_ids: Iterable[int], *, shown_only: bool = True) -> None:
    """These people have news for their friends (a match started or ended, presence shown or
    hidden): their ``changed_at`` moves on and their friends are woken, both on commit of the
    caller's transaction."""
    users = sorted({int(uid) for uid in user_ids})
    if not users:
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(_TOUCH, {"users": users, "now": timezone.now()})
        wake_friends(users, shown_only=shown_only)


def look(user_id: int) -> bool:
    """Record whether a stream of the person is open now (their stream places say), and wake
    their friends if that changed (unless they hide their presence); whether it changed.

    Three statements, each on one table and committed on its own (the record has no foreign
    key to check on commit), so a look never holds one table while it waits for another: it
    cannot deadlock with whatever locks several tables at once, such as a TRUNCATE of them all.
    Not being one transaction costs nothing but a wake-up lost in a crash between the two
    writes."""
    online = user_id in stream_slots.holders([user_id])
    users = get_user_model().objects.filter(pk=user_id)
    shown = users.values_list("show_presence", flat=True).first()
    if shown is None:
        return False  # the account went (a stream may close after its row did)
    with connection.cursor() as cursor:
        cursor.execute(_ONLINE, {"user": user_id, "online": online, "now": timezone.now()})
        changed = cursor.fetchone() is not None
    if changed and shown:
        wake_friends([user_id], shown_only=False)
    return changed


def _look_quietly(user_id: int) -> None:
    try:
        look(user_id)
    except Exception:  # presence is news, never a reason for a stream to fail
        logger.warning("presence of user %s: not recorded", user_id, exc_info=True)
    finally:
        close_old_connections()


def stream_watcher(user_id: int, opened: bool) -> None:
    """``ops.stream_slots``' watcher: a stream of ``user_id`` opened or closed. Without a cap on
    streams no places are held, so nobody is ever seen online and there is nothing to look at."""
    if stream_slots.limit():
        _looker.submit(_look_quietly, user_id)


def forget(user_id: int) -> None:
    """An account's deletion: its friends are woken (their streams drop it) and its record
    goes."""
    wake_friends([user_id], shown_only=False)
    Presence.objects.filter(user_id=user_id).delete()
