"""Rematches: after a match ends, one of its people proposes to play it again; the others
accept or decline, with the consent rules of an invitation (nobody is made to play).

One proposal per match (``games.models.Rematch``): the proposer counts as accepted; a decline
closes it; unanswered, it lapses after ``TONGITS_REMATCH_SECONDS``. When the last person
accepts, a new table with the same seats at the same indexes (people and bot levels), the same
rules, rated and buy-in starts at once in that transaction (``lobby.table_again``: buy-ins
escrowed as at any start), the seat after the last match's first dealer dealing first
(``rules.rematch_dealer``); ``Rematch.new_game`` links the two matches both ways.

Consent: each person must cover the buy-in when they accept (``InsufficientChips``, as an
invitation), and nobody's account may be deleted or deactivated (``PlayerUnavailable``). The
waiting-tables quota does not apply: a rematch's table never waits for players, it starts
when the last person accepts (as quick play does).

Every change wakes, on commit, each person's ``/me/stream`` (``WAKE_USER``), which sends a
``rematch`` frame (``games.live.rematch``). Services write and raise domain errors; no HTTP.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from core import notices
from games import lobby, selectors, store
from games.errors import (
    AlreadyAnswered,
    MatchNotOver,
    NoRematch,
    NotAPlayer,
    PlayerUnavailable,
    RematchClosed,
    RematchOpen,
)
from games.live.listener import WAKE_USER
from games.models import Game, Rematch, Seat
from games.presenters import rematch_dict, rematch_status
from games.rules import rematch_dealer


def rematch_get(*, game_id: uuid.UUID | str, user: Any) -> dict[str, Any]:
    """The match's rematch: status, each person's answer, the next game once started."""
    return selectors.rematch_view(game_id=game_id, user=user)


def rematch_propose(*, game_id: uuid.UUID | str, user: Any) -> dict[str, Any]:
    """Propose to play a finished match again (the proposer has accepted). A match of one
    person and two bots starts again at once: nobody else must agree."""
    with transaction.atomic():
        game, seats, rematch = _lock(game_id, user)
        if game.status != Game.Status.FINISHED:
            raise MatchNotOver()
        if rematch is not None:
            if rematch_status(rematch) == Rematch.Status.OPEN:
                raise RematchOpen()
            if not _lapse(rematch, seats):
                raise RematchClosed()
        else:
            _consent(game, seats, user)
            rematch = Rematch.objects.create(
                game=game,
                proposed_by=user,
                answers={str(user.pk): True},
                expires_at=timezone.now() + timedelta(seconds=settings.TONGITS_REMATCH_SECONDS),
            )
            _start_if_agreed(game, seats, rematch, user)
            _announce(seats)
            return rematch_dict(rematch, seats)
    raise RematchClosed()  # lapsed just now, and marked so (committed)


def rematch_answer(*, game_id: uuid.UUID | str, user: Any, accept: bool) -> dict[str, Any]:
    """Accept or decline the match's open rematch; the last acceptance starts the next match,
    a decline closes the proposal."""
    with transaction.atomic():
        game, seats, rematch = _lock(game_id, user)
        if rematch is None:
            raise NoRematch()
        if rematch.status != Rematch.Status.OPEN:
            raise RematchClosed()
        if not _lapse(rematch, seats):
            if str(user.pk) in rematch.answers:
                raise AlreadyAnswered()
            if accept:
                _consent(game, seats, user)
            rematch.answers = {**rematch.answers, str(user.pk): bool(accept)}
            if not accept:
                rematch.status = Rematch.Status.DECLINED
            rematch.save(update_fields=["answers", "status", "updated_at"])
            _start_if_agreed(game, seats, rematch, user)
            _announce(seats)
            return rematch_dict(rematch, seats)
    raise RematchClosed()  # lapsed just now, and marked so (committed)


def _lock(game_id: uuid.UUID | str, user: Any) -> tuple[Game, list[Seat], Rematch | None]:
    """The match's row locked (every rematch write of one match in turn), its seats if the
    user played it (else ``NotAPlayer``; staff may read but not propose), its rematch."""
    game = store.get_game(game_id, lock=True)
    seats = selectors.match_people(game, user)
    if not any(s.user_id == user.pk for s in seats):
        raise NotAPlayer(_("You did not play this match."))
    return game, seats, Rematch.objects.filter(game=game).first()


def _lapse(rematch: Rematch, seats: list[Seat]) -> bool:
    """Mark an open rematch past its time lapsed (True), telling its people."""
    if rematch.status != Rematch.Status.OPEN or rematch_status(rematch) != Rematch.Status.LAPSED:
        return False
    rematch.status = Rematch.Status.LAPSED
    rematch.save(update_fields=["status", "updated_at"])
    _announce(seats)
    return True


def _consent(game: Game, seats: list[Seat], user: Any) -> None:
    """What an acceptance asks, as an invitation's: every person still has an account, and
    the user's wallet covers the buy-in (checked again, for real, at the start)."""
    for seat in seats:
        person = seat.user
        if person is not None and (not person.is_active or getattr(person, "deleted_at", None)):
            raise PlayerUnavailable()
    mine = next(s.index for s in seats if s.user_id == user.pk)
    lobby._check_chips(user, game.buy_in, mine)


def _start_if_agreed(game: Game, seats: list[Seat], rematch: Rematch, user: Any) -> None:
    """Every person accepted: the next match, started now (in the caller's transaction)."""
    people = [str(s.user_id) for s in seats if s.user_id]
    if rematch.status != Rematch.Status.OPEN or not all(rematch.answers.get(p) for p in people):
        return
    state = store.state_of(game)
    assert state is not None, "a finished match has a state"
    # The proposer creates and starts it (the user who just answered, should they be gone).
    starter = next((s.user for s in seats if s.user_id == rematch.proposed_by_id), user)
    again = lobby.table_again(game=game, user=starter, first_dealer=rematch_dealer(state))
    rematch.new_game, rematch.status = again, Rematch.Status.STARTED
    rematch.save(update_fields=["new_game", "status", "updated_at"])


def _announce(seats: list[Seat]) -> None:
    """Wake, on commit, the ``/me/stream`` of each person of the match."""
    for user_id in sorted({s.user_id for s in seats if s.user_id}):
        notices.send(WAKE_USER, str(user_id))
