"""Domain errors: plain exceptions with a stable machine-readable ``code``.

Services, selectors and the store raise these; they know nothing of HTTP. The API edge
(``core.api_errors``) maps each *kind* below to an HTTP status in one table, so a new
error needs only a class here (or in an app's ``errors`` module) with a ``code``.

    class TableFull(Conflict):
        code = "table_full"
        detail = gettext_lazy("Every seat at this table is taken.")

    raise TableFull()                       # the defaults
    raise MoveRefused("...", code="card_not_in_hand")
    raise StaleVersion(...)                 # extra={"version": 7} travels to the body

``detail`` is text for people, translated: a class's ``detail`` is ``gettext_lazy`` (rendered in
the answer's language when the API writes the body), a detail with values is
``_("... %(name)s ...") % {...}`` where it is raised. A class that sets its own ``code`` or
``detail`` registers the pair in ``core.error_texts``.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from core import error_texts

#: The longest error detail (a message quoting at most about 100 characters of input).
MAX_DETAIL = 200


def clip(text: str, limit: int = MAX_DETAIL) -> str:
    """``text`` cut to ``limit`` characters (with an ellipsis) so no answer echoes a long input."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class DomainError(Exception):
    """An error a caller can act on: ``code`` to switch on, ``detail`` for people, ``extra`` keys
    (never ``code`` or ``detail``) for the client, such as the current ``version``."""

    code: str = "error"
    detail: str = gettext_lazy("The request could not be processed.")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Each error class is an entry of the registry: a test finds every code's text there.
        if "code" in vars(cls) or "detail" in vars(cls):
            error_texts.register(cls.code, cls.detail)

    def __init__(
        self,
        detail: str | None = None,
        code: str | None = None,
        *,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.detail = detail or type(self).detail
        self.code = code or type(self).code
        self.extra = dict(extra or {})
        super().__init__(self.detail)


# The kinds. The API maps each to one HTTP status (core.api_errors.HTTP_STATUS).


class Invalid(DomainError):
    """The request's values are not acceptable (bad rules, bad seats, unknown user)."""

    code = "invalid"


class NotFound(DomainError):
    code = "not_found"
    detail = gettext_lazy("Not found.")


class NotAllowed(DomainError):
    """The caller may not do or see this (not a player of the game, not their seat)."""

    code = "permission_denied"
    detail = gettext_lazy("You may not do this.")


class Conflict(DomainError):
    """The request does not fit the resource's current state (stale version, table full)."""

    code = "conflict"
    detail = gettext_lazy("The request conflicts with the current state of the resource.")


class Refused(DomainError):
    """Well-formed and allowed, but refused on its merits (a move the rules forbid)."""

    code = "refused"
    detail = gettext_lazy("The request was refused.")


class Unavailable(DomainError):
    """A service this one depends on cannot be reached now (an identity provider's keys); the
    same request may work in a moment."""

    code = "unavailable"
    detail = gettext_lazy("A service this request needs cannot be reached now: try again.")


class Unauthenticated(DomainError):
    """The credentials given are wrong."""

    code = "authentication_failed"
    detail = gettext_lazy("Incorrect authentication credentials.")


class Throttled(DomainError):
    """Too many attempts: wait ``retry_after`` seconds (in ``extra``; also the Retry-After
    header). Raised by checks that must run inside a service or before a view's own work, such
    as failed log-ins (``accounts.login_throttle``); DRF's throttles raise their own."""

    code = "throttled"
    detail = gettext_lazy("Too many requests.")

    def __init__(self, retry_after: float, detail: str | None = None) -> None:
        seconds = max(1, int(-(-retry_after // 1)))
        super().__init__(
            detail or _("Too many attempts: try again in %(seconds)s s.") % {"seconds": seconds},
            extra={"retry_after": seconds},
        )
