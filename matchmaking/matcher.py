"""The matcher: tables of three from the tickets that search, and bots where people are late.

Rules (docs/matchmaking.md). Tickets match only within one room, on equal rules and the same
``rated``. The oldest ticket picks first: it takes the oldest others that fit (a party's
people count as its size) until three people sit, every two of the tickets within the rating
window of the one that has waited longer, and no two people of different tickets where either
blocked the other or who held one sign-in identity in turn (one person's accounts). A window
is ``TONGITS_MATCH_WINDOW`` points of the ordinal wide, doubling every
``TONGITS_MATCH_WINDOW_DOUBLING_SECONDS`` of waiting, unbounded after
``TONGITS_MATCH_WINDOW_UNBOUNDED_SECONDS``. When the oldest ticket finds no three people and
has waited its ``bots_after``, it sits with the others that fit and accept bots too, and bots
of the room's level fill the rest.

How: ``plan`` is the pure choice over candidates; ``match_room`` runs it on a room's searching
tickets in one transaction, under an advisory lock of the room (two matchers, say two
schedulers of a cluster, never work one room at once) and row locks on the tickets (``FOR
UPDATE SKIP LOCKED``: a ticket a cancel holds is left for the next pass). Each table is made
and started in a savepoint with the people's buy-ins escrowed (``lobby.table_matched``): the
tickets become ``matched`` in the same commit, so a ticket is seated once or not at all. A
person who can no longer cover the buy-in loses their ticket (``insufficient_chips``), one who
sat down elsewhere meanwhile too (``already_seated``), and the others search on.
``run_matcher`` is the loop (a thread of ``manage.py run_scheduler``): a pass on each
``NOTIFY matchmaking`` (a ticket began or ended) and at least every
``TONGITS_MATCH_INTERVAL_SECONDS`` (windows widen and bots fall due with time alone).
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from accounts import selectors as accounts
from chips.errors import InsufficientChips
from core import listening
from games import lobby
from matchmaking import services, signals
from matchmaking.models import Member, Ticket, TicketEvent
from social import selectors as social

logger = logging.getLogger(__name__)

#: Tickets of one room a pass considers (the oldest); the next pass takes the rest.
BATCH = 600
#: A pass at most this often, however many tickets notify.
MIN_GAP_SECONDS = 0.05


@dataclass(frozen=True)
class Candidate:
    """A searching ticket as the planner sees it."""

    id: Any
    size: int
    users: frozenset[int]
    rating: float
    waited: float
    bots_after: float | None


@dataclass
class Plan:
    """A table to form: these tickets' people, then ``bots`` bots."""

    tickets: list[Candidate]
    bots: int = 0
    people: list[int] = field(default_factory=list)


def window(waited: float) -> float:
    """How far apart in rating a ticket that has waited ``waited`` seconds may sit."""
    if waited >= settings.TONGITS_MATCH_WINDOW_UNBOUNDED_SECONDS:
        return float("inf")
    doubling = settings.TONGITS_MATCH_WINDOW_DOUBLING_SECONDS
    return settings.TONGITS_MATCH_WINDOW * 2 ** (waited / doubling if doubling > 0 else 0)


def plan(candidates: list[Candidate], kept_apart: set[frozenset[int]]) -> list[Plan]:
    """The tables to form from ``candidates`` (oldest first), never seating together two
    people of ``kept_apart``; each ticket in at most one table."""

    def fits(a: Candidate, b: Candidate) -> bool:
        if any(frozenset((x, y)) in kept_apart for x in a.users for y in b.users):
            return False
        return abs(a.rating - b.rating) <= max(window(a.waited), window(b.waited))

    used: set[Any] = set()
    plans = []
    for first in candidates:
        if first.id in used:
            continue
        chosen, seats = [first], first.size
        for other in candidates:
            if seats == 3:
                break
            if other.id in used or other is first or seats + other.size > 3:
                continue
            if all(fits(other, c) for c in chosen):
                chosen.append(other)
                seats += other.size
        if seats == 3:
            plans.append(Plan(chosen))
        elif first.bots_after is not None and first.waited >= first.bots_after:
            with_bots = [c for c in chosen if c.bots_after is not None]
            plans.append(Plan(with_bots, bots=3 - sum(c.size for c in with_bots)))
        else:
            continue
        used.update(c.id for c in plans[-1].tickets)
    return plans


def _room_lock(room: str, rules_key: str, rated: bool) -> bool:
    """This transaction's hold on one room's matching, or False if another matcher has it."""
    key = zlib.crc32(f"matchmaking:{room}:{rules_key}:{rated}".encode())
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [0x70A7, key - 2**31])
        return bool(cursor.fetchone()[0])


def _candidates(tickets: list[Ticket], people: dict[Any, list[int]], now: datetime) -> list:
    ratings = accounts.ordinals(uid for ids in people.values() for uid in ids)
    out = []
    for ticket in tickets:
        ids = people[ticket.pk]
        out.append(
            Candidate(
                id=ticket.pk,
                size=len(ids),
                users=frozenset(ids),
                rating=sum(ratings[uid] for uid in ids) / len(ids),
                waited=(now - ticket.searching_since).total_seconds(),
                bots_after=ticket.bots_after,
            )
        )
    return out


def _seat(found: Plan, tickets: dict[Any, Ticket], people: dict[Any, list[int]]) -> Any:
    """Form one planned table; the game, or None when a ticket had to go (told why)."""
    chosen = [tickets[c.id] for c in found.tickets]
    order = [uid for ticket in chosen for uid in people[ticket.pk]]
    busy = lobby.seated_now(order)
    if busy:
        for ticket in chosen:
            if busy & set(people[ticket.pk]):
                services.end(ticket, "already_seated")
        return None
    users = {u.pk: u for u in get_user_model().objects.filter(pk__in=order)}
    first = chosen[0]
    room = services.rooms().get(first.room)
    try:
        game = lobby.table_matched(
            people=[users[uid] for uid in order],
            bots=[first.bot_level] * found.bots,
            rules=first.rules,
            rated=first.rated,
            buy_in=first.buy_in,
            fee_percent=room.fee_percent if room is not None else 0,
        )
    except InsufficientChips as short:
        poor = order[short.seat] if short.seat is not None else order[0]
        ticket = next(t for t in chosen if poor in people[t.pk])
        services.end(ticket, "insufficient_chips")
        return None
    now = timezone.now()
    for ticket in chosen:
        ticket.status, ticket.game_id, ticket.ended_at = Ticket.Status.MATCHED, game.pk, now
        ticket.save(update_fields=["status", "game_id", "ended_at"])
    Member.objects.filter(ticket__in=chosen, active=True).update(active=False)
    for ticket in chosen:
        services.tell(ticket, TicketEvent.Kind.MATCHED, people[ticket.pk], game_id=str(game.pk))
    signals.matched.send(Ticket, game_id=game.pk, user_ids=order)
    return game


def match_room(room: str, rules_key: str, rated: bool, *, now: datetime | None = None) -> int:
    """One pass over one room's searching tickets: the tables formed."""
    formed = 0
    with transaction.atomic():
        if not _room_lock(room, rules_key, rated):
            return 0
        now = now or timezone.now()
        rows = list(
            Ticket.objects.select_for_update(skip_locked=True)
            .filter(status=Ticket.Status.SEARCHING, room=room, rules_key=rules_key, rated=rated)
            .order_by("searching_since", "id")[:BATCH]
        )
        if not rows:
            return 0
        people: dict[Any, list[int]] = {t.pk: [] for t in rows}
        for ticket_id, user_id in (
            Member.objects.filter(ticket__in=rows, status=Member.Status.JOINED)
            .order_by("id")
            .values_list("ticket_id", "user_id")
        ):
            people[ticket_id].append(user_id)
        tickets = {t.pk: t for t in rows if people[t.pk]}
        everyone = [uid for ids in people.values() for uid in ids]
        due = any(
            t.bots_after is not None and (now - t.searching_since).total_seconds() >= t.bots_after
            for t in tickets.values()
        )
        if len(everyone) < 3 and not due:  # no table can form: spare the pass its reads
            return 0
        kept_apart = social.blocked_pairs(everyone) | accounts.linked_pairs(everyone)
        candidates = _candidates(list(tickets.values()), people, now)
        while candidates:
            plans = plan(candidates, kept_apart)
            if not plans:
                break
            gone: set[Any] = set()
            for found in plans:
                with transaction.atomic():
                    game = _seat(found, tickets, people)
                if game is not None:
                    formed += 1
                    gone.update(c.id for c in found.tickets)
                else:  # a ticket ended; the others of its table search on in the next round
                    gone.update(c.id for c in found.tickets if tickets[c.id].status != "searching")
                    break
            remaining = [c for c in candidates if c.id not in gone]
            if len(remaining) == len(candidates):
                break
            candidates = remaining
    return formed


def rooms_searching() -> list[tuple[str, str, bool]]:
    """The (room, rules, rated) groups that have a ticket searching."""
    return list(
        Ticket.objects.filter(status=Ticket.Status.SEARCHING)
        .values_list("room", "rules_key", "rated")
        .distinct()
    )


def match_once(*, now: datetime | None = None) -> int:
    """A pass over every room (and the parties whose invitations lapsed): tables formed."""
    services.lapse_parties(now=now)
    return sum(match_room(*group, now=now) for group in rooms_searching())


def run_matcher(stop: threading.Event, *, poll: float | None = None) -> None:
    """The loop: a pass, then wait for a ticket's notice or the interval (until ``stop``).
    A database error is logged and retried: the loop never dies of one."""
    interval = settings.TONGITS_MATCH_INTERVAL_SECONDS if poll is None else poll
    listener = listening.listen("matcher", services.CHANNEL)
    try:
        while not stop.is_set():
            started = time.monotonic()
            try:
                match_once()
            except Exception:
                logger.exception("matcher: pass failed; retrying")
                connection.close()
            stop.wait(max(0.0, MIN_GAP_SECONDS - (time.monotonic() - started)))
            if listener is None:
                stop.wait(interval)
                listener = listening.listen("matcher", services.CHANNEL)
            elif not listening.wait(listener, interval, "matcher"):
                listener = None
    finally:
        if listener is not None:
            listener.close()
        connection.close()
