"""The kinds without an append-only source, written in the transaction of their cause.

An invitation, its answer, a sign-in and an account's deletion change rows that are later changed
again (a seat, a session, a user), so no log could be projected for them afterwards: the lobby and
the accounts send a signal inside their transaction, and the notification (and its push, or the
webhook message) is written there, so it exists exactly when the cause committed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.dispatch import receiver
from django.utils import timezone

from accounts import signals as account_signals
from accounts.models import Session
from games import signals as game_signals
from matchmaking import signals as matchmaking_signals
from notifications import inbox, push, webhooks
from notifications.models import Kind, Notification, WebhookMessage
from social import signals as social_signals
from tournaments import signals as tournament_signals


def _written(notes: list[Notification]) -> None:
    for note in notes:
        push.record(note)
    inbox.announce(notes)


@receiver(game_signals.invited)
def invited(
    sender: Any, *, game_id: Any, seat: int, user_id: int, by_user_id: int, **_: Any
) -> None:
    """``invited``: the invitee hears of the table and who asked."""
    _written(
        inbox.add(
            [user_id],
            Kind.INVITED,
            cause=f"invited:{game_id}:{seat}:{user_id}",
            game_id=game_id,
            data={"game_id": str(game_id), "seat": seat, "by_user_id": by_user_id},
            at=timezone.now(),
        )
    )


@receiver(game_signals.invitation_answered)
def invitation_answered(
    sender: Any,
    *,
    game_id: Any,
    seat: int,
    user_id: int,
    accepted: bool,
    creator_id: int | None,
    **_: Any,
) -> None:
    """``invitation_answered``: the table's creator hears who accepted or declined."""
    if creator_id is None or creator_id == user_id:
        return
    now = timezone.now()
    answer = "accepted" if accepted else "declined"
    _written(
        inbox.add(
            [creator_id],
            Kind.INVITATION_ANSWERED,
            cause=f"invitation_answered:{game_id}:{seat}:{user_id}:{answer}",
            game_id=game_id,
            data={
                "game_id": str(game_id),
                "seat": seat,
                "user_id": user_id,
                "accepted": accepted,
            },
            at=now,
        )
    )


@receiver(account_signals.session_started)
def session_started(sender: Any, *, session: Session, **_: Any) -> None:
    """``new_sign_in``: a session from a device none of the user's other sessions is on.

    The first session of an account (its sign-up) is no news; a device is its client-given name.
    """
    others = Session.objects.filter(user_id=session.user_id).exclude(pk=session.pk)
    if not others.exists() or others.filter(device=session.device).exists():
        return
    _written(
        inbox.add(
            [session.user_id],
            Kind.NEW_SIGN_IN,
            cause=f"new_sign_in:{session.pk}",
            game_id=None,
            data={"session_id": str(session.pk), "device": session.device},
            at=session.created,
        )
    )


@receiver(matchmaking_signals.party_invited)
def party_invited(sender: Any, *, ticket_id: Any, user_id: int, by_user_id: int, **_: Any) -> None:
    """``party_invite``: a friend asks to queue together (join or decline the ticket)."""
    _written(
        inbox.add(
            [user_id],
            Kind.PARTY_INVITE,
            cause=f"party_invite:{ticket_id}:{user_id}",
            game_id=None,
            data={"ticket_id": str(ticket_id), "by_user_id": by_user_id},
            at=timezone.now(),
        )
    )


@receiver(matchmaking_signals.matched)
def matched(sender: Any, *, game_id: Any, user_ids: list[int], **_: Any) -> None:
    """``matched``: the matcher seated these people at a started table."""
    _written(
        inbox.add(
            list(user_ids),
            Kind.MATCHED,
            cause=f"matched:{game_id}",
            game_id=game_id,
            data={"game_id": str(game_id)},
            at=timezone.now(),
        )
    )


@receiver(tournament_signals.starting)
def tournament_starting(
    sender: Any, *, tournament_id: Any, user_ids: list[int], starts_at: datetime, **_: Any
) -> None:
    """``tournament_starting``: the registered hear a scheduled tournament starts soon."""
    _written(
        inbox.add(
            list(user_ids),
            Kind.TOURNAMENT_STARTING,
            cause=f"tournament_starting:{tournament_id}",
            game_id=None,
            data={"tournament_id": str(tournament_id), "starts_at": starts_at.isoformat()},
            at=timezone.now(),
        )
    )


@receiver(tournament_signals.table_ready)
def tournament_table(
    sender: Any, *, tournament_id: Any, user_ids: list[int], game_id: Any, stage: int, **_: Any
) -> None:
    """``tournament_table``: a tournament seated these people at their next (started) table."""
    _written(
        inbox.add(
            list(user_ids),
            Kind.TOURNAMENT_TABLE,
            cause=f"tournament_table:{game_id}",
            game_id=game_id,
            data={"tournament_id": str(tournament_id), "game_id": str(game_id), "stage": stage},
            at=timezone.now(),
        )
    )


@receiver(social_signals.friend_requested)
def friend_requested(
    sender: Any, *, request_id: int, user_id: int, by_user_id: int, at: datetime, **_: Any
) -> None:
    """``friend_request``: the person asked hears who asks (once per request)."""
    _written(
        inbox.add(
            [user_id],
            Kind.FRIEND_REQUEST,
            cause=f"friend_request:{request_id}",
            game_id=None,
            data={"by_user_id": by_user_id},
            at=at,
        )
    )


@receiver(account_signals.account_deleted)
def account_deleted(sender: Any, *, user_id: int, at: datetime, **_: Any) -> None:
    """The deleted account's inbox goes (it is personal); studios hear ``account.deleted``."""
    Notification.objects.filter(user_id=user_id).delete()
    kind = WebhookMessage.Kind.ACCOUNT_DELETED
    webhooks.record(kind, f"{kind}:{user_id}", {"user_id": user_id}, at or timezone.now())
