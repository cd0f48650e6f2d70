"""The tournaments' domain errors: plain exceptions with a stable ``code`` (no HTTP here)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy

from core.errors import Conflict, Invalid, NotFound


class TournamentNotFound(NotFound):
    detail = gettext_lazy("No such tournament.")


class InvalidTournament(Invalid):
    code = "invalid_tournament"
    detail = gettext_lazy("These are not a tournament's settings.")


class TournamentFull(Conflict):
    code = "tournament_full"
    detail = gettext_lazy("This tournament has no place left.")


class RegistrationClosed(Conflict):
    code = "registration_closed"
    detail = gettext_lazy("Registration for this tournament is closed.")


class AlreadyRegistered(Conflict):
    code = "already_registered"
    detail = gettext_lazy("You are registered for this tournament already.")


class NotRegistered(Conflict):
    code = "not_registered"
    detail = gettext_lazy("You are not registered for this tournament.")


class TournamentOver(Conflict):
    code = "tournament_over"
    detail = gettext_lazy("This tournament has finished or was cancelled.")


class TournamentNotFinished(Conflict):
    code = "tournament_not_finished"
    detail = gettext_lazy("This tournament has not finished: its export is not sealed yet.")
