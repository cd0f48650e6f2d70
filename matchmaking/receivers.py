"""The matchmaker hears the accounts: a deleted account's open tickets end (its party is told)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.dispatch import receiver

from accounts import signals as account_signals
from matchmaking import services
from matchmaking.models import Member, Ticket


@receiver(account_signals.account_deleted)
def account_deleted(sender: Any, *, user_id: int, at: datetime, **_: Any) -> None:
    """Inside the deletion's transaction: every ticket the person was in or asked to join ends."""
    open_tickets = Ticket.objects.select_for_update().filter(
        status__in=Ticket.OPEN,
        members__user_id=user_id,
        members__status__in=(Member.Status.JOINED, Member.Status.INVITED),
    )
    for ticket in open_tickets.distinct():
        services.end(ticket, "member_left", now=at)
