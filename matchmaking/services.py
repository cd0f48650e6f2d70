"""Tickets: ask for a table, bring friends, cancel, join or decline a friend's party.

Services write (the matcher seats, ``matchmaking.matcher``); each runs in one transaction, under
the row locks that keep a ticket's end single: a cancel and the matcher both lock the ticket,
so exactly one of them ends it. Every change a person should see is a ``TicketEvent`` of
theirs (their ``/me/stream`` reads it, ``matchmaking.live``), and every ticket that starts
searching wakes the matcher (``NOTIFY`` on its own channel, on commit).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from chips import services as chips
from chips.errors import ChipsOwed, InsufficientChips
from core import notices
from games import lobby
from games.errors import InvalidRules
from games.live.listener import WAKE_USER
from matchmaking import signals
from matchmaking.errors import (
    AlreadyMatched,
    AlreadySearching,
    AlreadySeated,
    InvalidRoom,
    NotAFriend,
    TicketClosed,
    TicketNotFound,
)
from matchmaking.models import Member, Ticket, TicketEvent
from social import selectors as social

#: The channel the matcher LISTENs on: a ticket began searching, or one ended.
CHANNEL = "matchmaking"
#: People a party may bring besides its owner.
MAX_FRIENDS = 2
#: The longest a ticket may ask to wait for people before bots (``bots_after``).
MAX_BOTS_AFTER = 600.0


@dataclass(frozen=True)
class Room:
    key: str
    buy_in: int
    stake: int
    bot_level: str
    fee_percent: int = 0


def rooms() -> dict[str, Room]:
    """The rooms of ``TONGITS_ROOMS`` by key (``"buy_in:stake"``)."""
    found = {}
    for room in settings.TONGITS_ROOMS:
        key = f"{room['buy_in']}:{room['stake']}"
        found[key] = Room(
            key,
            room["buy_in"],
            room["stake"],
            room.get("bot_level", "normal"),
            room.get("fee_percent", 0),
        )
    return found


def room_of(key: str) -> Room:
    room = rooms().get(key)
    if room is None:
        raise InvalidRoom()
    return room


def ticket_rules(room: Room, rules: Any, *, rated: bool) -> dict[str, Any]:
    """The table's rules: a preset or options as tables take them, at the room's stake."""
    spec: dict[str, Any] = {"preset": rules} if isinstance(rules, str) else dict(rules or {})
    if spec.get("stake", room.stake) != room.stake:
        raise InvalidRules(
            _("A room's tables play at its stake, %(stake)s.") % {"stake": room.stake}
        )
    spec["stake"] = room.stake
    return lobby.table_rules(spec, rated=rated).to_dict()


def rules_key(rules: dict[str, Any]) -> str:
    """Equal rules, equal key: tickets match only within one."""
    text = json.dumps(rules, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _wake_matcher() -> None:
    notices.notify_channel(CHANNEL)


def tell(ticket: Ticket, kind: str, user_ids: Iterable[int], **data: Any) -> None:
    """A ``TicketEvent`` for each person, and a wake of their ``/me/stream`` on commit."""
    ids = sorted(set(user_ids))
    TicketEvent.objects.bulk_create(
        TicketEvent(
            user_id=uid, ticket=ticket, kind=kind, data={"ticket_id": str(ticket.pk), **data}
        )
        for uid in ids
    )
    notices.send_many(WAKE_USER, [str(uid) for uid in ids])


def _check_free(user: Any, room: Room, *, seat: int = 0) -> None:
    """A person may queue: no open ticket, not seated, the room's buy-in in their wallet."""
    if Member.objects.filter(user=user, active=True).exists():
        raise AlreadySearching()
    if lobby.seated_now([user.pk]):
        raise AlreadySeated()
    if room.buy_in and chips.owes(user.pk):
        raise ChipsOwed(chips.owes(user.pk), seat=seat)
    if not chips.can_cover(user_id=user.pk, buy_in=room.buy_in):
        raise InsufficientChips(
            _("This room's buy-in is %(buy_in)s chips: your wallet does not hold that many.")
            % {"buy_in": room.buy_in},
            seat=seat,
        )


def _friends(owner: Any, usernames: list[str]) -> list[Any]:
    """The users a party names: the owner's friends, none blocked either way; anyone else
    gets the same answer (``NotAFriend``)."""
    if len(usernames) > MAX_FRIENDS:
        raise NotAFriend(_("A party brings at most %(count)s friends.") % {"count": MAX_FRIENDS})
    found = []
    user_model = get_user_model()
    for name in usernames:
        friend = user_model.objects.filter(username__iexact=name, is_active=True).first()
        if (
            friend is None
            or friend.pk == owner.pk
            or friend in found
            or not social.are_friends(owner.pk, friend.pk)
            or social.blocked_between(owner.pk, friend.pk)
        ):
            raise NotAFriend()
        found.append(friend)
    return found


def _lock_user(user: Any) -> None:
    """One ticket change of a person at a time (two taps of "Play now" make one ticket)."""
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()


@transaction.atomic
def ticket_create(
    *,
    user: Any,
    room: str,
    rules: Any = None,
    rated: bool = True,
    bots_after: float | None | object = ...,
    friends: list[str] | None = None,
) -> Ticket:
    """Ask for a table in ``room``: a ticket that searches at once, or, naming friends, a party
    that searches once every friend has joined (each is sent a ``party_invite``)."""
    found = room_of(room)
    table_rules = ticket_rules(found, rules if rules is not None else "standard", rated=rated)
    if bots_after is ...:
        bots_after = settings.TONGITS_MATCH_BOTS_AFTER_SECONDS
    _lock_user(user)
    _check_free(user, found)
    party = _friends(user, friends or [])
    now = timezone.now()
    ticket = Ticket(
        owner=user,
        room=found.key,
        buy_in=found.buy_in,
        rules=table_rules,
        rules_key=rules_key(table_rules),
        rated=bool(rated),
        bots_after=bots_after,
        bot_level=found.bot_level,
        size=1 + len(party),
        status=Ticket.Status.FORMING if party else Ticket.Status.SEARCHING,
        searching_since=None if party else now,
    )
    ticket.save()
    try:
        with transaction.atomic():
            Member.objects.create(
                ticket=ticket, user=user, status=Member.Status.JOINED, active=True, joined_at=now
            )
    except IntegrityError as exc:  # another ticket of theirs at the same moment
        raise AlreadySearching() from exc
    Member.objects.bulk_create(
        Member(ticket=ticket, user=friend, status=Member.Status.INVITED) for friend in party
    )
    for friend in party:
        signals.party_invited.send(
            Ticket, ticket_id=ticket.pk, user_id=friend.pk, by_user_id=user.pk
        )
    if not party:
        tell(ticket, TicketEvent.Kind.SEARCHING, [user.pk])
        _wake_matcher()
    return ticket


def _locked(ticket_id: uuid.UUID | str, user: Any) -> tuple[Ticket, Member]:
    """The ticket (locked) and the caller's membership of it, or ``TicketNotFound``."""
    try:
        ticket = Ticket.objects.select_for_update().get(pk=ticket_id)
    except (Ticket.DoesNotExist, ValueError):
        raise TicketNotFound() from None
    member = Member.objects.filter(ticket=ticket, user=user).first()
    if member is None:
        raise TicketNotFound()
    return ticket, member


def end(ticket: Ticket, reason: str, *, now: Any = None) -> None:
    """Cancel a ticket (locked by the caller) for ``reason``; every person in it is told."""
    now = now or timezone.now()
    ticket.status, ticket.reason, ticket.ended_at = Ticket.Status.CANCELLED, reason, now
    ticket.save(update_fields=["status", "reason", "ended_at"])
    members = list(Member.objects.filter(ticket=ticket))
    Member.objects.filter(ticket=ticket, active=True).update(active=False)
    told = [m.user_id for m in members if m.status != Member.Status.DECLINED]
    tell(ticket, TicketEvent.Kind.CANCELLED, told, reason=reason)
    _wake_matcher()


@transaction.atomic
def ticket_cancel(*, user: Any, ticket_id: uuid.UUID | str) -> None:
    """Leave the queue: the ticket ends for everyone in it (a party searches together or not
    at all); a ticket already seated cannot be (``AlreadyMatched``). Cancelling an ended
    ticket again changes nothing."""
    ticket, member = _locked(ticket_id, user)
    if ticket.status == Ticket.Status.MATCHED:
        raise AlreadyMatched()
    if ticket.status == Ticket.Status.CANCELLED:
        return
    if member.status == Member.Status.INVITED:
        ticket_decline(user=user, ticket_id=ticket_id)
        return
    member.status = Member.Status.LEFT
    member.save(update_fields=["status"])
    end(ticket, "cancelled" if user.pk == ticket.owner_id else "member_left")


@transaction.atomic
def ticket_join(*, user: Any, ticket_id: uuid.UUID | str) -> Ticket:
    """Join a friend's party; the last to join starts its search."""
    ticket, member = _locked(ticket_id, user)
    if ticket.status != Ticket.Status.FORMING or member.status != Member.Status.INVITED:
        if member.status == Member.Status.JOINED and ticket.status in Ticket.OPEN:
            return ticket
        raise TicketClosed()
    _lock_user(user)
    members = list(Member.objects.filter(ticket=ticket).order_by("id"))
    _check_free(user, room_of(ticket.room), seat=[m.user_id for m in members].index(user.pk))
    if social.blocked_pairs([m.user_id for m in members]):
        raise NotAFriend()
    now = timezone.now()
    member.status, member.active, member.joined_at = Member.Status.JOINED, True, now
    try:
        with transaction.atomic():
            member.save(update_fields=["status", "active", "joined_at"])
    except IntegrityError as exc:
        raise AlreadySearching() from exc
    everyone = [
        m.user_id for m in members if m.status in (Member.Status.JOINED, Member.Status.INVITED)
    ]
    if all(m.status == Member.Status.JOINED or m.pk == member.pk for m in members):
        ticket.status, ticket.searching_since = Ticket.Status.SEARCHING, now
        ticket.save(update_fields=["status", "searching_since"])
        tell(ticket, TicketEvent.Kind.SEARCHING, everyone)
        _wake_matcher()
    else:
        tell(ticket, TicketEvent.Kind.UPDATED, everyone, joined=user.username)
    return ticket


@transaction.atomic
def ticket_decline(*, user: Any, ticket_id: uuid.UUID | str) -> None:
    """Say no to a friend's party: its search is off, and its people are told."""
    ticket, member = _locked(ticket_id, user)
    if ticket.status not in Ticket.OPEN or member.status != Member.Status.INVITED:
        raise TicketClosed()
    member.status = Member.Status.DECLINED
    member.save(update_fields=["status"])
    end(ticket, "member_declined")


def lapse_parties(*, now: Any = None) -> int:
    """End the parties whose friends did not all join within ``TONGITS_PARTY_INVITE_SECONDS``."""
    now = now or timezone.now()
    cutoff = now - timezone.timedelta(seconds=settings.TONGITS_PARTY_INVITE_SECONDS)
    ended = 0
    with transaction.atomic():
        stale = Ticket.objects.select_for_update(skip_locked=True).filter(
            status=Ticket.Status.FORMING, created_at__lt=cutoff
        )
        for ticket in stale[:500]:
            end(ticket, "party_lapsed", now=now)
            ended += 1
    return ended
