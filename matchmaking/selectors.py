"""Reads of the matchmaker: a ticket as its people see it, my open ticket, the estimated wait."""

from __future__ import annotations

import statistics
import uuid
from datetime import timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone

from games import players
from matchmaking.errors import TicketNotFound
from matchmaking.models import Member, Ticket

#: The recent matches of a room the estimated wait is taken from.
RECENT_MATCHES = 50
RECENT_WINDOW = timedelta(minutes=15)


def estimated_wait(ticket: Ticket) -> float | None:
    """Seconds a searching ticket of this room can expect to wait: the median of the room's
    recent matches; without any, its ``bots_after`` (None: people only, nothing to go by)."""
    since = timezone.now() - RECENT_WINDOW
    recent = list(
        Ticket.objects.filter(room=ticket.room, status=Ticket.Status.MATCHED, ended_at__gte=since)
        .exclude(searching_since=None)
        .order_by("-ended_at")
        .values_list("searching_since", "ended_at")[:RECENT_MATCHES]
    )
    if recent:
        return round(statistics.median((e - s).total_seconds() for s, e in recent), 1)
    return ticket.bots_after


def ticket_dict(ticket: Ticket) -> dict[str, Any]:
    """A ticket as the API shows it: its room, rules, people (with their answers) and state."""
    members = list(ticket.members.order_by("id"))
    shown = players.profiles(m.user_id for m in members)
    return {
        "id": ticket.pk,
        "status": ticket.status,
        "reason": ticket.reason or None,
        "room": ticket.room,
        "rules": ticket.rules,
        "rated": ticket.rated,
        "bots_after": ticket.bots_after,
        "created_at": ticket.created_at,
        "searching_since": ticket.searching_since,
        "estimated_wait": estimated_wait(ticket) if ticket.status in Ticket.OPEN else None,
        "game_id": ticket.game_id,
        "members": [
            {**shown[m.user_id].fields(), "status": m.status, "owner": m.user_id == ticket.owner_id}
            for m in members
        ],
    }


def my_ticket(*, user: Any) -> Ticket:
    """The ticket the user is in now (searching, or a party forming), or ``TicketNotFound``."""
    member = Member.objects.filter(user=user, active=True).select_related("ticket").first()
    if member is None:
        raise TicketNotFound()
    return member.ticket


def ticket_get(*, user: Any, ticket_id: uuid.UUID | str) -> Ticket:
    """A ticket the user is in or was asked to join, or ``TicketNotFound``."""
    ticket = Ticket.objects.filter(Q(pk=ticket_id) & Q(members__user=user)).first()
    if ticket is None:
        raise TicketNotFound()
    return ticket
