"""The matchmaker's domain errors: a stable ``code`` each, no HTTP (the API edge maps kinds)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy

from core.errors import Conflict, Invalid, NotFound


class InvalidRoom(Invalid):
    code = "invalid_room"
    detail = gettext_lazy("No such room: pick one of GET /rooms.")


class NotAFriend(Invalid):
    """A party names someone who is not the owner's friend (or who may not be asked: a block
    gets this same answer, so it is never revealed)."""

    code = "not_a_friend"
    detail = gettext_lazy("A party may only name your friends.")


class AlreadySearching(Conflict):
    code = "already_searching"
    detail = gettext_lazy("You already have a ticket open: cancel it first.")


class AlreadySeated(Conflict):
    code = "already_seated"
    detail = gettext_lazy("You sit at a table waiting for players or in play.")


class AlreadyMatched(Conflict):
    code = "already_matched"
    detail = gettext_lazy("This ticket has found its table already.")


class TicketClosed(Conflict):
    code = "ticket_closed"
    detail = gettext_lazy("This ticket has ended.")


class TicketNotFound(NotFound):
    detail = gettext_lazy("No ticket of yours with that id.")
