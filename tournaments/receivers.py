"""The tournaments hear the accounts: a deleted account gives up its places in tournaments that
have not started (its buy-in and fee refunded, and then swept to the house with its wallet)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.dispatch import receiver

from accounts import signals as account_signals
from tournaments import services
from tournaments.models import Registration, Tournament


@receiver(account_signals.account_deleted)
def account_deleted(sender: Any, *, user_id: int, at: datetime, **_: Any) -> None:
    """Inside the deletion's transaction: each place still open to give back is given back."""
    places = Registration.objects.filter(
        user_id=user_id, active=True, tournament__status=Tournament.Status.REGISTERING
    ).values_list("tournament_id", flat=True)
    for tournament_id in list(places):
        services.withdraw(user_id=user_id, tournament_id=tournament_id, at=at)
