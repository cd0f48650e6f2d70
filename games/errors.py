"""The games' domain errors: plain exceptions with a stable ``code`` (no HTTP here).

The API edge maps their kinds (``core.errors``) to statuses; the rules core's
``IllegalMove`` travels as ``MoveRefused`` with the rules' own code (``move_refused``), and a
text for people from ``RULES_TEXTS``: the rules core knows no Django, so its refusals are
translated here, at its edge.
"""

from __future__ import annotations

import re

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from core import error_texts
from core.errors import Conflict, Invalid, NotAllowed, NotFound, Refused, Throttled
from games.rules.errors import CODES


class GameNotFound(NotFound):
    detail = gettext_lazy("No such game.")


class TableNotFound(NotFound):
    detail = gettext_lazy("No such table.")


class NotAPlayer(NotAllowed):
    code = "not_a_player"
    detail = gettext_lazy("You do not sit at this game.")


class NotYourSeat(NotAllowed):
    code = "not_your_seat"
    detail = gettext_lazy("You cannot act for that seat.")


class NotStarted(Conflict):
    code = "not_started"
    detail = gettext_lazy("The game has not started yet: its table is still waiting for players.")


class StaleVersion(Conflict):
    """The caller's ``expected_version`` is not the game's version: the game moved on."""

    code = "stale_version"
    detail = gettext_lazy("The game has moved on since that version; reload it and try again.")

    def __init__(self, expected: int, actual: int) -> None:
        super().__init__(
            _("Expected version %(expected)s, but the game is at version %(actual)s.")
            % {"expected": expected, "actual": actual},
            extra={"version": actual},
        )
        self.expected = expected
        self.actual = actual


class AlreadyStarted(Conflict):
    code = "already_started"
    detail = gettext_lazy("The game at this table has already started.")


class TableClosed(Conflict):
    code = "table_closed"
    detail = gettext_lazy("This table was abandoned.")


class TableFull(Conflict):
    code = "table_full"
    detail = gettext_lazy("Every seat at this table is taken.")


class SeatTaken(Conflict):
    code = "seat_taken"
    detail = gettext_lazy("That seat is taken.")


class AlreadySeated(Conflict):
    code = "already_seated"
    detail = gettext_lazy("You already sit at this table.")


class TableNotFull(Conflict):
    code = "table_not_full"
    detail = gettext_lazy("Every seat must be taken (by a user or a bot) before the start.")


class InvalidRules(Invalid):
    code = "invalid_rules"
    detail = gettext_lazy("Those rules are not valid.")


class InvalidSeats(Invalid):
    code = "invalid_seats"
    detail = gettext_lazy("A table has three seats: user, open or bot.")


class UnknownUser(Invalid):
    code = "unknown_user"
    detail = gettext_lazy("No user with that username.")


class InvalidBuyIn(Invalid):
    code = "invalid_buy_in"
    detail = gettext_lazy("A buy-in is a whole number of chips, 0 (nothing at stake) or more.")


class BadStep(Invalid):
    detail = gettext_lazy("No such step.")


class IdempotencyKeyReused(Refused):
    code = "idempotency_key_reused"
    detail = gettext_lazy("This Idempotency-Key was used for a different request.")


class MoveRefused(Refused):
    """The rules refuse the command; ``code`` is the rules core's ``IllegalMove.code``."""

    code = "illegal_move"


#: The text of each rules core refusal (``games.rules.errors.CODES``, whose English reasons are
#: the rules core's own and stay untranslated there).
RULES_TEXTS = {
    "not_your_turn": gettext_lazy("Another seat is to act."),
    "wrong_phase": gettext_lazy("That command is not possible in this phase of the turn."),
    "must_draw_first": gettext_lazy("Draw from the stock or take the discard first."),
    "already_drew": gettext_lazy("This turn already drew or took the discard."),
    "card_not_in_hand": gettext_lazy("That card is not in your hand."),
    "invalid_meld": gettext_lazy("Those cards do not make a meld."),
    "invalid_lay_off": gettext_lazy("That card cannot be laid off on that meld."),
    "discard_not_usable": gettext_lazy(
        "The top discard does not make a new meld with those cards."
    ),
    "draw_blocked": gettext_lazy("A lay-off on your meld blocks your Draw call this turn."),
    "not_opened": gettext_lazy("You need an exposed meld first."),
    "no_draw_call_pending": gettext_lazy("Nobody has called Draw."),
    "no_round_in_play": gettext_lazy("No round is being played."),
    "unknown_command": gettext_lazy("Unknown command type."),
    "bad_command": gettext_lazy("The command is malformed."),
    "stock_empty": gettext_lazy("The stock is empty."),
    "unknown_meld": gettext_lazy("No meld with that id."),
    "rule_disabled": gettext_lazy("These rules do not allow that."),
    "already_resigned": gettext_lazy("This seat has already resigned."),
}

#: The rules core's more specific reasons (``IllegalMove(code, detail)`` with a fixed detail),
#: by code and English detail. A reason with values in it (a card code aside) is not here: its
#: refusal says the code's text.
RULES_DETAIL_TEXTS = {
    ("bad_command", "a command is an object with a 'type'"): gettext_lazy(
        "A command is an object with a 'type'."
    ),
    ("bad_command", "seat must be 0, 1 or 2"): gettext_lazy("seat must be 0, 1 or 2."),
    ("bad_command", "'cards' must be a list of card codes"): gettext_lazy(
        "'cards' must be a list of card codes."
    ),
    ("bad_command", "'meld_id' must be an integer"): gettext_lazy("'meld_id' must be an integer."),
    ("bad_command", "give either 'cards' or 'meld_id'"): gettext_lazy(
        "Give either 'cards' or 'meld_id'."
    ),
    ("bad_command", "'hidden' must be true or false"): gettext_lazy(
        "'hidden' must be true or false."
    ),
    ("bad_command", "a client seed is 1 to 64 of A-Z a-z 0-9 _ -"): gettext_lazy(
        "A client seed is 1 to 64 of A-Z a-z 0-9 _ -."
    ),
    ("wrong_phase", "answer the Draw call: challenge or fold"): gettext_lazy(
        "Answer the Draw call: challenge or fold."
    ),
    ("wrong_phase", "the match is over"): gettext_lazy("The match is over."),
    ("wrong_phase", "a round is in play or the match is over"): gettext_lazy(
        "A round is in play or the match is over."
    ),
    ("no_round_in_play", "the match is over"): gettext_lazy("The match is over."),
    ("rule_disabled", "the taken discard must go into a new meld"): gettext_lazy(
        "The taken discard must go into a new meld."
    ),
    ("rule_disabled", "secret sets are off"): gettext_lazy("Secret sets are off."),
    ("rule_disabled", "Draw calls are off"): gettext_lazy("Draw calls are off."),
    ("discard_not_usable", "the discard pile is empty"): gettext_lazy("The discard pile is empty."),
    ("discard_not_usable", "the discard and those cards make no meld"): gettext_lazy(
        "The discard and those cards make no meld."
    ),
    ("invalid_lay_off", "the discard can only go onto a meld of your own"): gettext_lazy(
        "The discard can only go onto a meld of your own."
    ),
    ("invalid_lay_off", "nobody may lay off on a secret set"): gettext_lazy(
        "Nobody may lay off on a secret set."
    ),
    ("invalid_meld", "a secret set is four of a kind"): gettext_lazy(
        "A secret set is four of a kind."
    ),
}

#: ``card_not_in_hand`` when the rules core names the cards: card codes are the same in every
#: language, so the refusal keeps them.
NOT_IN_HAND = gettext_lazy("Not in your hand: %(cards)s.")
_CARD_LIST = re.compile(r"[A2-9TJQK][CDHS](?:, [A2-9TJQK][CDHS])*")


def _register_rules_texts() -> None:
    """The rules codes are the command's 422s: each with its texts in the registry."""
    for code, text in RULES_TEXTS.items():
        error_texts.register(code, text)
    for (code, _reason), text in RULES_DETAIL_TEXTS.items():
        error_texts.register(code, text)
    error_texts.register("card_not_in_hand", NOT_IN_HAND)


_register_rules_texts()


def rules_text(code: str, detail: str | None = None) -> str:
    """A rules refusal for people, in the active language: the specific reason when it can be
    translated, else the code's text."""
    if detail and detail != CODES.get(code):
        specific = RULES_DETAIL_TEXTS.get((code, detail))
        if specific is not None:
            return str(specific)
        if code == "card_not_in_hand" and _CARD_LIST.fullmatch(detail):
            return NOT_IN_HAND % {"cards": detail}
    return str(RULES_TEXTS.get(code, Refused.detail))


def move_refused(code: str, detail: str | None = None) -> MoveRefused:
    """The domain error of a rules refusal (``IllegalMove``'s ``code`` and ``detail``)."""
    return MoveRefused(rules_text(code, detail), code)


class TooManyWaitingTables(Conflict):
    code = "too_many_waiting_tables"
    detail = gettext_lazy("You have too many tables waiting for players: start or leave one first.")


class TooManyStreams(Throttled):
    """The account already holds as many live streams open as it may
    (``TONGITS_MAX_STREAMS_PER_USER``, ``ops.stream_slots``): a quota of open streams, not a
    rate. ``retry_after`` (and the Retry-After header) says when to try again; a place frees
    as soon as one of the account's streams closes."""

    code = "too_many_streams"
    detail = gettext_lazy("You hold as many live streams open as one account may.")

    def __init__(self, limit: int, retry_after: float = 5) -> None:
        text = ngettext(
            "You already hold %(limit)s live stream open, the most one account may: close one "
            "you no longer read, then try again.",
            "You already hold %(limit)s live streams open, the most one account may: close one "
            "you no longer read, then try again.",
            limit,
        )
        super().__init__(retry_after, text % {"limit": limit})


class InvitationsPending(Conflict):
    code = "invitations_pending"
    detail = gettext_lazy("Every invited player must accept before the match starts.")


class NoInvitation(Conflict):
    code = "no_invitation"
    detail = gettext_lazy("You have no open invitation to this table.")


class NotActive(Conflict):
    code = "not_active"
    detail = gettext_lazy("The match is not being played.")


class AlreadyResigned(Conflict):
    code = "already_resigned"
    detail = gettext_lazy("You have already resigned this match.")


class NotFinished(Conflict):
    code = "not_finished"
    detail = gettext_lazy("A spectator may read this once the match is over.")


class MatchNotOver(Conflict):
    code = "match_not_over"
    detail = gettext_lazy(
        "Only a finished match can be played again: this one is not over (or was called off)."
    )


class RematchOpen(Conflict):
    code = "rematch_open"
    detail = gettext_lazy("A rematch of this match is already proposed: accept or decline it.")


class RematchClosed(Conflict):
    code = "rematch_closed"
    detail = gettext_lazy(
        "The rematch of this match is closed: it started, was declined or lapsed."
    )


class NoRematch(Conflict):
    code = "no_rematch"
    detail = gettext_lazy("Nobody has proposed a rematch of this match.")


class AlreadyAnswered(Conflict):
    code = "already_answered"
    detail = gettext_lazy("You have already answered this rematch.")


class PlayerUnavailable(Conflict):
    code = "player_unavailable"
    detail = gettext_lazy(
        "A player of this match has left (a deleted or deactivated account): no rematch."
    )


class InvalidSpectators(Invalid):
    code = "invalid_spectators"
    detail = gettext_lazy(
        "visibility must be private, unlisted or public, and spectator_delay 0 to 50."
    )
