"""The chips' domain errors: plain exceptions with a stable ``code`` (no HTTP here)."""

from __future__ import annotations

from datetime import datetime

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from core.errors import Conflict, Invalid, NotFound, Refused


class InsufficientChips(Conflict):
    """A wallet cannot cover a debit. At a table's start or seat, ``seat`` names who is short
    (``extra``); nothing was taken from anyone."""

    code = "insufficient_chips"
    detail = gettext_lazy("Not enough chips.")

    def __init__(self, detail: str | None = None, *, seat: int | None = None) -> None:
        super().__init__(detail, extra={} if seat is None else {"seat": seat})
        self.seat = seat


class AlreadyClaimed(Conflict):
    """Today's daily bonus was claimed already; ``next_at`` says when the next one is."""

    code = "already_claimed"
    detail = gettext_lazy("You have claimed today's bonus already.")

    def __init__(self, next_at: datetime) -> None:
        text = next_at.isoformat().replace("+00:00", "Z")
        super().__init__(
            _("Today's bonus is claimed; the next one from %(next_at)s.") % {"next_at": text},
            extra={"next_at": text},
        )
        self.next_at = next_at


class NoBonus(Conflict):
    code = "no_daily_bonus"
    detail = gettext_lazy("This server gives no daily bonus (TONGITS_DAILY_BONUS is 0).")


class InvalidAdjustment(Invalid):
    code = "invalid_adjustment"
    detail = gettext_lazy("An adjustment needs a non-zero whole amount and a reason.")


class AdjustmentKeyReused(Refused):
    code = "idempotency_key_reused"
    detail = gettext_lazy("This Idempotency-Key was used for a different adjustment.")


class WalletNotFound(NotFound):
    detail = gettext_lazy("No player with that username.")


class WalletClosed(Conflict):
    code = "wallet_closed"
    detail = gettext_lazy("That account was deleted: its wallet is closed.")


class ChipsOwed(InsufficientChips):
    """A store refunded chips the player had already spent: until later credits repay the
    debt, no buy-in, no queue and no daily bonus. ``owed`` (``extra``) is what is left."""

    code = "chips_owed"
    detail = gettext_lazy("You owe chips from a refunded purchase: buy or win them back first.")

    def __init__(self, owed: int, *, seat: int | None = None) -> None:
        super().__init__(
            _("You owe %(owed)s chips from a refunded purchase: buy or win them back first.")
            % {"owed": owed},
            seat=seat,
        )
        self.extra["owed"] = owed
        self.owed = owed
