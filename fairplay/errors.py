"""Fair play's domain errors: plain exceptions with a stable ``code`` (no HTTP here)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy

from core.errors import Conflict, Invalid, NotAllowed, NotFound


class CaseNotFound(NotFound):
    code = "case_not_found"
    detail = gettext_lazy("No case with that id.")


class SuspensionNotFound(NotFound):
    code = "suspension_not_found"
    detail = gettext_lazy("No suspension with that id.")


class UnknownAccount(Invalid):
    code = "unknown_account"
    detail = gettext_lazy("No account with that username.")


class CaseDecided(Conflict):
    code = "case_decided"
    detail = gettext_lazy("This case is decided; an appeal reopens it.")


class InvalidDecision(Invalid):
    code = "invalid_decision"
    detail = gettext_lazy("This decision is not valid for this case.")


class InvalidUntil(Invalid):
    code = "invalid_until"
    detail = gettext_lazy("A suspension ends in the future, or never (null).")


class AlreadyLifted(Conflict):
    code = "already_lifted"
    detail = gettext_lazy("This suspension is over or lifted already.")


class NotFinished(Conflict):
    code = "game_not_finished"
    detail = gettext_lazy("Only a finished game's seats can be reported.")


class NotSeated(NotAllowed):
    code = "not_a_player"
    detail = gettext_lazy("Only a player of this game can report its seats.")


class OwnSeat(Invalid):
    code = "own_seat"
    detail = gettext_lazy("You cannot report your own seat.")


class NotAPerson(Invalid):
    code = "seat_not_a_person"
    detail = gettext_lazy("That seat is empty or a bot's: only a person can be reported.")


class AlreadyReported(Conflict):
    code = "already_reported"
    detail = gettext_lazy("You have reported a seat of this game already.")


class NotSuspended(Conflict):
    code = "not_suspended"
    detail = gettext_lazy("Your account is not suspended: there is nothing to appeal.")


class AlreadyAppealed(Conflict):
    code = "already_appealed"
    detail = gettext_lazy("You have appealed this suspension already.")
