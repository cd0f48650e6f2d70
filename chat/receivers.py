"""The chat hears the accounts' deletions (sent inside the deletion's transaction)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.dispatch import receiver

from accounts import signals as account_signals
from chat import services


@receiver(account_signals.account_deleted)
def account_deleted(sender: Any, *, user_id: int, at: datetime, **_: Any) -> None:
    """What the deleted account wrote at tables goes; that it wrote stays in the log."""
    services.forget_user(user_id)
