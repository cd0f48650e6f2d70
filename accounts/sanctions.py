"""An account's suspension as the rest of the server sees it: two columns of the user.

``fairplay`` keeps the record (each suspension with its reason, who and when, its lifting and
its appeal) and writes its projection here, ``User.suspended`` and ``User.suspended_until``,
through ``suspension_set``. Keeping it on the user row makes the check free where it matters:
the token look-up (``accounts.authentication``) already reads every column of the user, so a
request of a suspended account is refused without a query of its own, and a change of the row
reaches every web process at once (``accounts.token_cache``: a user saved sends
``forget-user``). A suspension with an end needs no write when it ends: it is compared with the
clock at each check.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts import signals, token_cache
from accounts.models import Session, User
from core.errors import NotAllowed

#: Where a suspended player appeals (fairplay's route), named in every refusal.
APPEAL_ROUTE = "/api/v1/me/appeals"


class AccountSuspended(NotAllowed):
    """403: the account is suspended; ``suspension`` in the body says until when (null: until
    lifted), where to appeal, and, at a log-in, a token that opens only the sanctions routes."""

    code = "account_suspended"
    detail = gettext_lazy("This account is suspended.")


def suspended_now(user: Any, now: datetime | None = None) -> bool:
    """Whether ``user`` (the request's, as the token look-up read it) is suspended now."""
    if not getattr(user, "suspended", False):
        return False
    until = user.suspended_until
    return until is None or until > (now or timezone.now())


def refusal(user: Any, *, appeal_token: str | None = None) -> AccountSuspended:
    """The 403 a suspended account gets: its end (or none) in the text and in ``suspension``."""
    until = user.suspended_until
    if until is None:
        detail = _("This account is suspended until staff lift it. Appeal at %(route)s.") % {
            "route": APPEAL_ROUTE
        }
    else:
        detail = _("This account is suspended until %(until)s (UTC). Appeal at %(route)s.") % {
            "until": until.astimezone(UTC).strftime("%Y-%m-%d %H:%M"),
            "route": APPEAL_ROUTE,
        }
    suspension: dict[str, Any] = {
        "until": until.isoformat() if until else None,
        "appeal": APPEAL_ROUTE,
    }
    if appeal_token is not None:
        suspension["appeal_token"] = appeal_token
    return AccountSuspended(detail, extra={"suspension": suspension})


def check_not_suspended(user: Any) -> None:
    """``AccountSuspended`` while ``user`` is suspended."""
    if suspended_now(user):
        raise refusal(user)


def refuse_sign_in(user: Any, key: str) -> None:
    """After a log-in made ``key``: 403 if the account is suspended. The session it made stays,
    but while the suspension lasts its key opens only the routes a suspended account may use
    (its sanctions, its appeal, logging out), so the person can appeal without playing."""
    if suspended_now(user):
        raise refusal(user, appeal_token=key)


def stream_refusals(holders: list[tuple[int, str | None]]) -> dict[tuple[int, str | None], str]:
    """Which open streams' holders (account, session) may no longer stream, and why: the
    account suspended (``suspended``), deactivated or deleted, or the session ended
    (``signed_out``). The live streams ask it (``games.live.feed.HOLDER_CHECKS``) when a
    stream opens and when a notice says the account changed: two indexed reads, never per frame."""
    users = {
        user.pk: user
        for user in User.objects.filter(pk__in={u for u, _ in holders}).only(
            "id", "is_active", "suspended", "suspended_until"
        )
    }
    wanted = {s for _, s in holders if s is not None}
    sessions = (
        {str(pk) for pk in Session.objects.filter(pk__in=wanted).values_list("pk", flat=True)}
        if wanted
        else set()
    )
    out: dict[tuple[int, str | None], str] = {}
    for user_id, session_id in holders:
        user = users.get(user_id)
        if user is not None and suspended_now(user):
            out[(user_id, session_id)] = "suspended"
        elif (
            user is None
            or not user.is_active
            or (session_id is not None and session_id not in sessions)
        ):
            out[(user_id, session_id)] = "signed_out"
    return out


@transaction.atomic
def suspension_set(*, user_id: int, suspended: bool, until: datetime | None) -> User:
    """Write the account's suspension (fairplay calls it for a suspension, a lifting, a new
    end); a suspension also ends every session at once, in every process. Saving the user
    tells every web process to forget its sessions on commit (``accounts.token_cache``)."""
    user = User.objects.select_for_update().get(pk=user_id)
    user.suspended, user.suspended_until = suspended, (until if suspended else None)
    user.save(update_fields=["suspended", "suspended_until"])
    if suspended:
        token_cache.forget_user(user_id)  # here at once; each deleted session tells the others
        Session.objects.filter(user_id=user_id).delete()
        signals.account_suspended.send(User, user_id=user_id, until=until)
    return user
