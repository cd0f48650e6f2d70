"""Tables before their match: create, join, leave, answer an invitation, start (the lobby).

A seat given to a named user is an invitation: the table starts only once every invited user
has accepted (``table_respond``); a declined or expired invitation (``TONGITS_INVITATION_SECONDS``)
frees the seat. Nobody can be made to play.

A table is a ``games_game`` row at version 0 with three ``games_seat`` rows. Its writes are small
ORM transactions under the row lock; the start is the game's first write through the door
(``games.application.execute``): ``game_started`` and the first deal.

A table may be played for table stakes (``buy_in`` chips a seat, docs/chips.md): the start moves
every seat's buy-in into the table's escrow in its own transaction (``chips.services``; a bot's
from the house), or is refused with ``InsufficientChips`` naming the seat that cannot cover it,
with nothing escrowed and nothing appended. Sitting down at such a table (creating, joining,
accepting) already asks for the chips, so a player finds out before the others wait on them.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from chips import services as chips
from chips.errors import ChipsOwed, InsufficientChips
from games import signals, store
from games.application import Sender, execute
from games.errors import (
    AlreadySeated,
    AlreadyStarted,
    InvalidBuyIn,
    InvalidRules,
    InvalidSeats,
    InvalidSpectators,
    InvitationsPending,
    NoInvitation,
    NotAPlayer,
    SeatTaken,
    TableClosed,
    TableFull,
    TableNotFull,
    TooManyWaitingTables,
    UnknownUser,
)
from games.models import MAX_SPECTATOR_DELAY, Game, IdempotencyRecord, Seat
from games.rules import RuleSet, new_game
from games.rules.bots import LEVELS

BOT_LEVELS = tuple(LEVELS)

#: Apps above games that keep some people from seating others (blocks: ``social``) register
#: ``guard(by_user_id, user_id) -> bool`` here at start-up. A named seat that a guard refuses is
#: answered exactly as an unknown username is, so the person asking is not told why.
SEATING_GUARDS: list[Callable[[int, int], bool]] = []


def may_seat(by_user_id: int, user_id: int) -> bool:
    """Whether every guard of ``SEATING_GUARDS`` lets ``by_user_id`` seat ``user_id``."""
    return by_user_id == user_id or all(guard(by_user_id, user_id) for guard in SEATING_GUARDS)


#: Upper bounds on numeric rule options a client may set (the rules core only wants >= 0).
RULE_LIMITS = {
    "turn_seconds": 24 * 3600,
    "wins_to_match": 99,
    "turn_cap": 1000,
    "base": 1000,
    "tongits": 1000,
    "draw_won_challenged": 1000,
    "per_ace": 1000,
    "per_secret_set": 1000,
    "burned_penalty": 1000,
    "draw_folded": 1000,
    "stake": 1000,
}


def rules_from(spec: str | dict[str, Any] | None) -> RuleSet:
    """A RuleSet from a preset name or options (optionally over ``"preset"``), bounded for play.

    The rules core's own reasons are English only, so a refusal names what can be translated (an
    unknown preset, a value over its bound) and is otherwise ``InvalidRules``' text."""
    preset = spec.get("preset") if isinstance(spec, dict) else spec
    if isinstance(preset, str) and preset not in RuleSet.PRESETS:
        raise InvalidRules(
            _("No rules preset %(name)s; the presets are %(presets)s.")
            % {"name": repr(preset[:40]), "presets": ", ".join(RuleSet.PRESETS)}
        )
    try:
        rules = RuleSet.from_dict(spec)
    except (ValueError, TypeError):
        raise InvalidRules() from None
    values = rules.to_dict()
    for name, limit in RULE_LIMITS.items():
        if (values.get(name) or 0) > limit:
            raise InvalidRules(
                _("%(name)s must be at most %(limit)s.") % {"name": name, "limit": limit}
            )
    return rules


def table_rules(rules: str | dict[str, Any] | None, *, rated: bool) -> RuleSet:
    """A table's rules from a preset or options (``rules_from``); a ``rated`` table's turns
    are at least ``TONGITS_RATED_MIN_TURN_SECONDS`` (10) or unlimited: nobody is rated on
    being timed out."""
    ruleset = rules_from(rules)
    seconds = ruleset.turn_seconds
    if rated and seconds and seconds < settings.TONGITS_RATED_MIN_TURN_SECONDS:
        raise InvalidRules(
            _(
                "A rated table needs turn_seconds of at least %(seconds)s, or 0; play it casual "
                "(rated: false)."
            )
            % {"seconds": f"{settings.TONGITS_RATED_MIN_TURN_SECONDS:g}"}
        )
    return ruleset


@transaction.atomic
def table_create(
    *,
    user: Any,
    rules: str | dict[str, Any] | None = None,
    seats: list[dict[str, Any]] | None = None,
    rated: bool = True,
    buy_in: int = 0,
    visibility: str = Game.Visibility.PRIVATE,
    spectator_delay: int = 0,
    spectator_chat: bool = False,
) -> Game:
    """A table waiting for players. Seats: ``{"kind": "user"}`` (the creator), ``{"kind":
    "user", "username": ...}`` (an invitation to that user), ``{"kind": "open"}``, ``{"kind":
    "bot", "level": "easy" | "normal" | "hard"}``. Default: the creator and two open seats.

    A table of the creator and bots only starts at once (quick play): nobody else must agree.
    A ``rated`` table (the default) needs ``turn_seconds`` of at least
    ``TONGITS_RATED_MIN_TURN_SECONDS`` (10) or 0: nobody is rated on being timed out.
    ``buy_in`` (chips a seat, 0 by default: nothing at stake) is escrowed at the start.
    ``visibility`` (private, unlisted or public), ``spectator_delay`` (0 to
    ``MAX_SPECTATOR_DELAY`` events) and ``spectator_chat``: who may watch, how far behind, and
    whether spectators have the table chat's spectators' channel (docs/live.md "Spectators").
    """
    ruleset = table_rules(rules, rated=rated)
    buy_in = checked_buy_in(buy_in)
    specs = seats if seats is not None else [{"kind": "user"}, {"kind": "open"}, {"kind": "open"}]
    if not isinstance(specs, list) or len(specs) != 3:
        raise InvalidSeats(_("Give exactly three seats."))
    if visibility not in Game.Visibility.values:
        raise InvalidSpectators(
            _("visibility must be one of %(values)s.")
            % {"values": ", ".join(Game.Visibility.values)}
        )
    if not isinstance(spectator_delay, int) or not 0 <= spectator_delay <= MAX_SPECTATOR_DELAY:
        raise InvalidSpectators(
            _("spectator_delay must be from 0 to %(max)s.") % {"max": MAX_SPECTATOR_DELAY}
        )
    game = Game.objects.create(
        rules=ruleset.to_dict(),
        created_by=user,
        rated=bool(rated),
        buy_in=buy_in,
        visibility=visibility,
        spectator_delay=spectator_delay,
        spectator_chat=bool(spectator_chat),
    )
    now = timezone.now()
    taken: set[int] = set()
    user_model = get_user_model()
    rows = []
    for index, spec in enumerate(specs):
        kind = spec.get("kind") if isinstance(spec, dict) else None
        row = Seat(game=game, index=index)
        if kind == "user":
            username = spec.get("username")
            if username:
                seated = user_model.objects.filter(username__iexact=username).first()
                if seated is None or not may_seat(user.pk, seated.pk):
                    raise UnknownUser(
                        _("No user named %(username)s.") % {"username": repr(username)}
                    )
            else:
                seated = user
            if seated.pk in taken:
                raise InvalidSeats(
                    _("%(username)s cannot sit twice.") % {"username": seated.username}
                )
            taken.add(seated.pk)
            row.user = seated
            if seated.pk == user.pk:
                row.joined_at = now
            else:  # an invitation: the seat is theirs once they accept
                row.invitation, row.invited_at = Seat.Invitation.PENDING, now
        elif kind == "bot":
            level = spec.get("level", "normal")
            if level not in BOT_LEVELS:
                raise InvalidSeats(
                    _("Bot level must be one of %(levels)s.") % {"levels": ", ".join(BOT_LEVELS)}
                )
            row.bot_level = level
        elif kind != "open":
            raise InvalidSeats(
                _("Seat %(seat)s: kind must be user, open or bot.") % {"seat": index}
            )
        rows.append(row)
    Seat.objects.bulk_create(rows)
    for row in rows:
        if row.invitation == Seat.Invitation.PENDING:
            signals.invited.send(
                Game, game_id=game.pk, seat=row.index, user_id=row.user_id, by_user_id=user.pk
            )
    if all(s.bot_level or s.user_id == user.pk for s in rows):
        _start(game, rows, user)
        game.refresh_from_db()
    else:
        mine = next((s.index for s in rows if s.user_id == user.pk), None)
        if mine is not None:
            _check_chips(user, buy_in, mine)
        _check_waiting_quota(user)
    return game


def rooms(*, user: Any) -> list[dict[str, Any]]:
    """Quick play's rooms (``TONGITS_ROOMS``): each a buy-in with its matching stake, and
    whether the user's wallet covers its buy-in now. A room is a table created with that
    ``buy_in`` and ``rules.stake``; free play (buy-in 0) is always open."""
    return [
        {
            "key": f"{room['buy_in']}:{room['stake']}",
            "buy_in": room["buy_in"],
            "stake": room["stake"],
            "bot_level": room.get("bot_level", "normal"),
            "bots_after": settings.TONGITS_MATCH_BOTS_AFTER_SECONDS,
            "fee_percent": room.get("fee_percent", 0),
            "affordable": chips.can_cover(user_id=user.pk, buy_in=room["buy_in"]),
        }
        for room in settings.TONGITS_ROOMS
    ]


def checked_buy_in(buy_in: Any) -> int:
    """A table's buy-in: a whole number of chips from 0 to ``TONGITS_MAX_BUY_IN``."""
    limit = settings.TONGITS_MAX_BUY_IN
    if isinstance(buy_in, bool) or not isinstance(buy_in, int) or not 0 <= buy_in <= limit:
        raise InvalidBuyIn(
            _("buy_in must be a whole number of chips from 0 to %(limit)s.") % {"limit": limit}
        )
    return buy_in


def _check_chips(user: Any, buy_in: int, seat: int) -> None:
    """Refuse a seat at a table whose buy-in the user's wallet cannot cover now, or while they
    owe chips from a refunded purchase (``ChipsOwed``)."""
    if buy_in and chips.owes(user.pk):
        raise ChipsOwed(chips.owes(user.pk), seat=seat)
    if buy_in and not chips.can_cover(user_id=user.pk, buy_in=buy_in):
        raise InsufficientChips(
            _("This table's buy-in is %(buy_in)s chips: your wallet does not hold that many.")
            % {"buy_in": buy_in},
            seat=seat,
        )


def _check_waiting_quota(user: Any) -> None:
    """At most ``TONGITS_MAX_WAITING_TABLES`` of a user's tables wait for players at once (one
    user once filled the lobby with 30). Counted under a lock on the user's row, so two
    concurrent creations cannot both take the last place."""
    user_model = get_user_model()
    user_model.objects.select_for_update().filter(pk=user.pk).first()
    waiting = Game.objects.filter(created_by=user, status=Game.Status.WAITING).count()
    if waiting > settings.TONGITS_MAX_WAITING_TABLES:  # this new table included
        raise TooManyWaitingTables()


def _lock_table(game_id: uuid.UUID | str) -> Game:
    game = store.get_game(game_id, lock=True)
    if game.status == Game.Status.ABANDONED:
        raise TableClosed()
    if game.status != Game.Status.WAITING:
        raise AlreadyStarted()
    expire_invitations(game)
    return game


def expire_invitations(game: Game) -> int:
    """Free the seats of the table's lapsed invitations (on a locked table); how many."""
    limit = timezone.now() - timedelta(seconds=settings.TONGITS_INVITATION_SECONDS)
    return Seat.objects.filter(
        game=game, invitation=Seat.Invitation.PENDING, invited_at__lt=limit
    ).update(user=None, invitation=Seat.Invitation.NONE, invited_at=None, joined_at=None)


@transaction.atomic
def table_respond(*, game_id: uuid.UUID | str, user: Any, accept: bool) -> Game:
    """Accept or decline one's invitation to a table; a declined seat becomes open."""
    game = _lock_table(game_id)
    seat = game.seats.filter(user=user, invitation=Seat.Invitation.PENDING).first()
    if seat is None:
        raise NoInvitation()
    if accept:
        _check_chips(user, game.buy_in, seat.index)
        seat.invitation, seat.joined_at = Seat.Invitation.ACCEPTED, timezone.now()
    else:
        seat.user, seat.invitation, seat.invited_at = None, Seat.Invitation.NONE, None
    seat.save(update_fields=["user", "invitation", "invited_at", "joined_at"])
    game.save(update_fields=["updated_at"])
    signals.invitation_answered.send(
        Game,
        game_id=game.pk,
        seat=seat.index,
        user_id=user.pk,
        accepted=accept,
        creator_id=game.created_by_id,
    )
    return game


@transaction.atomic
def table_join(*, game_id: uuid.UUID | str, user: Any, seat: int | None = None) -> Game:
    """Take an open seat (the first one, or ``seat``) at a table that has not started."""
    game = _lock_table(game_id)
    seats = list(game.seats.order_by("index"))
    if any(s.user_id == user.pk for s in seats):
        raise AlreadySeated()
    if seat is not None:
        chosen = next((s for s in seats if s.index == seat), None)
        if chosen is None:
            raise InvalidSeats(_("Seats are 0, 1 and 2."))
        if chosen.kind != "open":
            raise SeatTaken()
    else:
        chosen = next((s for s in seats if s.kind == "open"), None)
        if chosen is None:
            raise TableFull()
    _check_chips(user, game.buy_in, chosen.index)
    chosen.user, chosen.joined_at = user, timezone.now()
    chosen.save(update_fields=["user", "joined_at"])
    game.save(update_fields=["updated_at"])
    return game


@transaction.atomic
def table_leave(*, game_id: uuid.UUID | str, user: Any) -> Game:
    """Give up one's seat before the start; a table with no user left is abandoned."""
    game = _lock_table(game_id)
    seats = list(game.seats.order_by("index"))
    mine = next((s for s in seats if s.user_id == user.pk), None)
    if mine is None:
        raise NotAPlayer(_("You do not sit at this table."))
    mine.user, mine.joined_at = None, None
    mine.invitation, mine.invited_at = Seat.Invitation.NONE, None
    mine.save(update_fields=["user", "joined_at", "invitation", "invited_at"])
    if not any(s.user_id for s in seats if s is not mine):
        game.status = Game.Status.ABANDONED
    game.save(update_fields=["status", "updated_at"])
    return game


@transaction.atomic
def table_start(*, game_id: uuid.UUID | str, user: Any) -> Game:
    """Start the match once every seat is filled: ``game_started`` and the first deal.

    A seated user or the table's creator may start it. Shuffles with ``random.SystemRandom``.
    At a table with a buy-in, every seat's chips move to its escrow in this transaction, or
    the start is refused (``InsufficientChips``, naming the seat) and nothing is written.
    """
    game = _lock_table(game_id)
    seats = list(game.seats.select_related("user").order_by("index"))
    if user.pk != game.created_by_id and not any(s.user_id == user.pk for s in seats):
        raise NotAPlayer(_("You do not sit at this table."))
    if any(s.kind == "open" for s in seats):
        raise TableNotFull()
    if any(s.invitation == Seat.Invitation.PENDING for s in seats):
        raise InvitationsPending()
    _start(game, seats, user)
    game.refresh_from_db()
    return game


def table_again(*, game: Game, user: Any, first_dealer: int) -> Game:
    """A rematch's table (``games.rematch``, in its transaction): the same seats at the same
    indexes (people and bot levels), rules, rated and buy-in as ``game``, created by ``user``
    and started at once with ``first_dealer`` dealing first (buy-ins escrowed as at any
    start). Every person has agreed: nobody is invited."""
    again = Game.objects.create(
        rules=game.rules, created_by=user, rated=game.rated, buy_in=game.buy_in
    )
    now = timezone.now()
    rows = [
        Seat(
            game=again,
            index=seat.index,
            user_id=seat.user_id,
            bot_level=seat.bot_level,
            joined_at=now if seat.user_id else None,
        )
        for seat in game.seats.order_by("index")
    ]
    Seat.objects.bulk_create(rows)
    before = store.state_of(game)  # the same room: the same service fee
    fee = before.fee_percent if before is not None else 0
    _start(again, rows, user, first_dealer=first_dealer, fee_percent=fee)
    again.refresh_from_db()
    return again


def table_matched(
    *,
    people: list[Any],
    bots: list[str],
    rules: dict[str, Any],
    rated: bool,
    buy_in: int,
    fee_percent: int = 0,
) -> Game:
    """A table the matchmaker formed, started at once in the caller's transaction: ``people``
    (users, who all asked to play) in the first seats, then a bot of each of ``bots``' levels;
    the first person is its creator. Every buy-in is escrowed as at any start, or
    ``InsufficientChips`` names the seat that cannot cover it and nothing is written.
    ``fee_percent``: the room's service fee on winnings, recorded in ``game_started``."""
    if len(people) + len(bots) != 3 or not people:
        raise InvalidSeats(_("Give exactly three seats."))
    with transaction.atomic():
        game = Game.objects.create(
            rules=rules, created_by=people[0], rated=rated, buy_in=checked_buy_in(buy_in)
        )
        now = timezone.now()
        rows = [
            Seat(game=game, index=index, user=person, joined_at=now)
            for index, person in enumerate(people)
        ]
        rows += [
            Seat(game=game, index=len(people) + n, bot_level=level) for n, level in enumerate(bots)
        ]
        Seat.objects.bulk_create(rows)
        _start(game, rows, people[0], fee_percent=fee_percent)
    game.refresh_from_db()
    return game


def table_arranged(
    *,
    seats: list[Any],
    rules: dict[str, Any],
    created_by: Any,
    visibility: str = Game.Visibility.PUBLIC,
) -> Game:
    """A table whose seats were decided elsewhere (a tournament's draw), started at once in
    the caller's transaction: each of ``seats`` a user (who registered to play) or a bot level.
    Casual and with nothing at stake: what the match is played for is booked by the caller.
    ``created_by``: the first person seated, else the given user (a table of bots)."""
    if len(seats) != 3:
        raise InvalidSeats(_("Give exactly three seats."))
    people = [s for s in seats if not isinstance(s, str)]
    creator = people[0] if people else created_by
    with transaction.atomic():
        game = Game.objects.create(
            rules=rules, created_by=creator, rated=False, buy_in=0, visibility=visibility
        )
        now = timezone.now()
        rows = [
            Seat(game=game, index=index, bot_level=seat)
            if isinstance(seat, str)
            else Seat(game=game, index=index, user=seat, joined_at=now)
            for index, seat in enumerate(seats)
        ]
        Seat.objects.bulk_create(rows)
        _start(game, rows, creator)
    game.refresh_from_db()
    return game


def seated_now(user_ids: list[int]) -> set[int]:
    """Which of these users sit at a table waiting for players or in play."""
    busy = (Game.Status.WAITING, Game.Status.ACTIVE)
    return set(
        Seat.objects.filter(user_id__in=user_ids, game__status__in=busy)
        .exclude(invitation=Seat.Invitation.PENDING)
        .values_list("user_id", flat=True)
    )


def _start(
    game: Game,
    seats: list[Seat],
    user: Any,
    *,
    first_dealer: int | None = None,
    fee_percent: int = 0,
) -> None:
    """``game_started`` and the first deal on a locked (or just created) full table, after the
    buy-ins (if any) are in escrow: both commit together or neither does. ``first_dealer``: a
    rematch's (else drawn, or the creator's seat, as the rules say); ``fee_percent``: a
    matchmaker room's service fee (only with a buy-in)."""
    seat_dicts: list[dict[str, Any]] = []
    for s in seats:
        if s.bot_level:
            seat_dicts.append({"kind": "bot", "level": s.bot_level})
        else:
            # The user id only: names are resolved when read (games.players), never stored in
            # the chained log, so an account's deletion leaves nothing personal in it.
            seat_dicts.append({"kind": "user", "user_id": s.user_id})
    rng = random.SystemRandom()
    rules = RuleSet.from_dict(game.rules)
    # first_dealer "creator" (h19): the seat of the table's creator, else seat 0
    creator = next((s.index for s in seats if s.user_id and s.user_id == game.created_by_id), 0)
    rated, buy_in = game.rated, game.buy_in
    chips.escrow_buy_ins(
        game_id=game.pk, seats=[None if s.bot_level else s.user_id for s in seats], buy_in=buy_in
    )
    execute(
        game.pk,
        sender=Sender.user(user),
        step=lambda _state, _actor: [
            new_game(
                rules,
                seat_dicts,
                rng,
                creator_seat=creator,
                rated=rated,
                buy_in=buy_in,
                first_dealer=first_dealer,
                fee_percent=fee_percent if buy_in else 0,
            )
        ],
        expected_version=0,
        rng=rng,
        starts=True,
    )
    people = [s.user_id for s in seats if s.user_id]
    signals.match_started.send(Game, game_id=game.pk, user_ids=people)


@transaction.atomic
def player_departs(*, user: Any) -> list[uuid.UUID]:
    """An account is being deleted: give up its seats at tables not started yet, and forget the
    stored command answers (idempotent replies) of its games, which show names. Returns the ids
    of every game it sat at. Its seats in started games stay: the log names them by id, and a
    running match times their turns out (the turn deadline) until it ends."""
    game_ids = list(Seat.objects.filter(user=user).values_list("game_id", flat=True))
    waiting = Game.objects.filter(pk__in=game_ids, status=Game.Status.WAITING)
    for game_id in waiting.values_list("pk", flat=True):
        table_leave(game_id=game_id, user=user)
    IdempotencyRecord.objects.filter(Q(game_id__in=game_ids) | Q(user=user)).delete()
    return game_ids
