"""The matchmaker hears the accounts: a deleted or suspended account's open tickets end (its party
is told)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.dispatch import receiver
from django.utils import timezone

from accounts import signals as account_signals
from matchmaking import services
from matchmaking.models import Member, Ticket


@receiver(account_signals.account_deleted)
def account_deleted(sender: Any, *, user_id: int, at: datetime, **_: Any) -> None:
    """Inside the deletion's transaction: every ticket the person was in or asked to join ends."""
    ids = Member.objects.filter(
        user_id=user_id,
        status__in=(Member.Status.JOINED, Member.Status.INVITED),
        ticket__status__in=Ticket.OPEN,
    ).values_list("ticket_id", flat=True)
    for ticket in Ticket.objects.select_for_update().filter(pk__in=list(ids)):
        if ticket.status in Ticket.OPEN:
            services.end(ticket, "member_left", now=at)


@receiver(account_signals.account_suspended)
def account_suspended(sender: Any, *, user_id: int, **_: Any) -> None:
    """Inside the suspension's transaction: a suspended account queues for nothing, so its
    tickets end as a deleted account's do (its party is told)."""
    account_deleted(sender, user_id=user_id, at=timezone.now())
