"""Helpers of the matchmaker's tests: people with chips, tickets, and what the tables hold."""

from __future__ import annotations

from collections import Counter
from typing import Any

from chips import services as chips
from games.models import Game, Seat
from matchmaking import services
from matchmaking.models import Ticket

ROOM = "1000:50"


def person(user_factory: Any, **fields: Any) -> Any:
    """A person whose wallet is open (the sign-up grant: 1,000 chips)."""
    user = user_factory(**fields)
    chips.open_wallet(user.pk)
    return user


def queue(user: Any, room: str = ROOM, **given: Any) -> Ticket:
    given.setdefault("bots_after", None)
    return services.ticket_create(user=user, room=room, **given)


def seats_of(user_ids: list[int]) -> Counter:
    """How many started tables each of these people sits at."""
    rows = Seat.objects.filter(user_id__in=user_ids, game__status=Game.Status.ACTIVE)
    return Counter(rows.values_list("user_id", flat=True))


def tables_of(tickets: list[Ticket]) -> dict[Any, list[int]]:
    """The people of each table the tickets were seated at, by game id."""
    games = {t.game_id for t in Ticket.objects.filter(pk__in=[t.pk for t in tickets])} - {None}
    out: dict[Any, list[int]] = {}
    for game_id in games:
        seats = Seat.objects.filter(game_id=game_id).order_by("index")
        out[game_id] = [s.user_id for s in seats if s.user_id]
    return out
