"""The games' domain errors: plain exceptions with a stable ``code`` (no HTTP here).

The API edge maps their kinds (``core.errors``) to statuses; the rules core's
``IllegalMove`` travels as ``MoveRefused`` with the rules' own code.
"""

from __future__ import annotations

from core.errors import Conflict, Invalid, NotAllowed, NotFound, Refused, Throttled


class GameNotFound(NotFound):
    detail = "No such game."


class TableNotFound(NotFound):
    detail = "No such table."


class NotAPlayer(NotAllowed):
    code = "not_a_player"
    detail = "You do not sit at this game."


class NotYourSeat(NotAllowed):
    code = "not_your_seat"
    detail = "You cannot act for that seat."


class NotStarted(Conflict):
    code = "not_started"
    detail = "The game has not started yet: its table is still waiting for players."


class StaleVersion(Conflict):
    """The caller's ``expected_version`` is not the game's version: the game moved on."""

    code = "stale_version"
    detail = "The game has moved on since that version; reload it and try again."

    def __init__(self, expected: int, actual: int) -> None:
        super().__init__(
            f"Expected version {expected}, but the game is at version {actual}.",
            extra={"version": actual},
        )
        self.expected = expected
        self.actual = actual


class AlreadyStarted(Conflict):
    code = "already_started"
    detail = "The game at this table has already started."


class TableClosed(Conflict):
    code = "table_closed"
    detail = "This table was abandoned."


class TableFull(Conflict):
    code = "table_full"
    detail = "Every seat at this table is taken."


class SeatTaken(Conflict):
    code = "seat_taken"
    detail = "That seat is taken."


class AlreadySeated(Conflict):
    code = "already_seated"
    detail = "You already sit at this table."


class TableNotFull(Conflict):
    code = "table_not_full"
    detail = "Every seat must be taken (by a user or a bot) before the start."


class InvalidRules(Invalid):
    code = "invalid_rules"
    detail = "Those rules are not valid."


class InvalidSeats(Invalid):
    code = "invalid_seats"
    detail = "A table has three seats: user, open or bot."


class UnknownUser(Invalid):
    code = "unknown_user"
    detail = "No user with that username."


class InvalidBuyIn(Invalid):
    code = "invalid_buy_in"
    detail = "A buy-in is a whole number of chips, 0 (nothing at stake) or more."


class BadStep(Invalid):
    detail = "No such step."


class IdempotencyKeyReused(Refused):
    code = "idempotency_key_reused"
    detail = "This Idempotency-Key was used for a different request."


class MoveRefused(Refused):
    """The rules refuse the command; ``code`` is the rules core's ``IllegalMove.code``."""

    code = "illegal_move"


class TooManyWaitingTables(Conflict):
    code = "too_many_waiting_tables"
    detail = "You have too many tables waiting for players: start or leave one first."


class TooManyStreams(Throttled):
    """The account already holds as many live streams open as it may
    (``TONGITS_MAX_STREAMS_PER_USER``, ``ops.stream_slots``): a quota of open streams, not a
    rate. ``retry_after`` (and the Retry-After header) says when to try again; a place frees
    as soon as one of the account's streams closes."""

    code = "too_many_streams"
    detail = "You hold as many live streams open as one account may."

    def __init__(self, limit: int, retry_after: float = 5) -> None:
        super().__init__(
            retry_after,
            f"You already hold {limit} live stream{'' if limit == 1 else 's'} open, the most "
            "one account may: close one you no longer read, then try again.",
        )


class InvitationsPending(Conflict):
    code = "invitations_pending"
    detail = "Every invited player must accept before the match starts."


class NoInvitation(Conflict):
    code = "no_invitation"
    detail = "You have no open invitation to this table."


class NotActive(Conflict):
    code = "not_active"
    detail = "The match is not being played."


class AlreadyResigned(Conflict):
    code = "already_resigned"
    detail = "You have already resigned this match."


class NotFinished(Conflict):
    code = "not_finished"
    detail = "A spectator may read this once the match is over."


class MatchNotOver(Conflict):
    code = "match_not_over"
    detail = "Only a finished match can be played again: this one is not over (or was called off)."


class RematchOpen(Conflict):
    code = "rematch_open"
    detail = "A rematch of this match is already proposed: accept or decline it."


class RematchClosed(Conflict):
    code = "rematch_closed"
    detail = "The rematch of this match is closed: it started, was declined or lapsed."


class NoRematch(Conflict):
    code = "no_rematch"
    detail = "Nobody has proposed a rematch of this match."


class AlreadyAnswered(Conflict):
    code = "already_answered"
    detail = "You have already answered this rematch."


class PlayerUnavailable(Conflict):
    code = "player_unavailable"
    detail = "A player of this match has left (a deleted or deactivated account): no rematch."


class InvalidSpectators(Invalid):
    code = "invalid_spectators"
    detail = "visibility must be private, unlisted or public, and spectator_delay 0 to 50."
