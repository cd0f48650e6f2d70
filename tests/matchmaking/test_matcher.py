"""The matcher against real PostgreSQL: tables started with their buy-ins escrowed, each ticket
seated once, windows widening with the wait, bots after the wait, a cancel racing a match, a
short wallet at match time, two matchers in two processes."""

from __future__ import annotations

import subprocess
import sys
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from accounts.models import PlayerStats
from chips import ledger
from chips.models import Balance
from games.models import Game
from matchmaking import matcher, services
from matchmaking.errors import AlreadyMatched
from matchmaking.models import Member, Ticket, TicketEvent
from notifications.models import Kind, Notification
from tests.chips.support import assert_sound, escrow_balance
from tests.matchmaking.support import person, queue, seats_of, tables_of
from tests.worker_process import database_url

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def matching(settings):
    settings.TONGITS_MATCH_WINDOW = 5.0
    settings.TONGITS_MATCH_WINDOW_DOUBLING_SECONDS = 10.0
    settings.TONGITS_MATCH_WINDOW_UNBOUNDED_SECONDS = 30.0
    settings.TONGITS_ROOMS = [
        {"buy_in": 100, "stake": 5, "bot_level": "easy"},
        {"buy_in": 1000, "stake": 50, "bot_level": "normal"},
    ]


def rate(user, ordinal: float) -> None:
    PlayerStats.objects.update_or_create(
        player=user, defaults={"mu": 25.0, "sigma": 1.0, "ordinal": ordinal}
    )


def test_three_tickets_make_one_started_table_with_the_buy_ins_escrowed(user_factory):
    people = [person(user_factory) for _ in range(3)]
    tickets = [queue(p) for p in people]
    assert matcher.match_once() == 1
    game_ids = {t.game_id for t in Ticket.objects.all()}
    assert len(game_ids) == 1 and None not in game_ids
    game = Game.objects.get(pk=game_ids.pop())
    assert game.status == Game.Status.ACTIVE and game.buy_in == 1000 and game.rules["stake"] == 50
    assert escrow_balance(game.pk) == 3000
    for p in people:
        wallet = ledger.wallet_of(p.pk)
        assert Balance.objects.get(account_id=wallet).balance == 0
    assert all(t.status == "matched" for t in Ticket.objects.filter(pk__in=[t.pk for t in tickets]))
    assert not Member.objects.filter(active=True).exists()
    frames = TicketEvent.objects.filter(kind="matched").values_list("user_id", "data")
    assert {uid for uid, _ in frames} == {p.pk for p in people}
    assert all(data["game_id"] == str(game.pk) for _, data in frames)
    notes = Notification.objects.filter(kind=Kind.MATCHED, game_id=game.pk)
    assert sorted(notes.values_list("user_id", flat=True)) == sorted(p.pk for p in people)
    assert_sound()


def test_nine_tickets_in_one_room_make_three_tables_everyone_seated_once(user_factory):
    people = [person(user_factory) for _ in range(9)]
    tickets = [queue(p) for p in people]
    assert matcher.match_once() == 3
    assert set(seats_of([p.pk for p in people]).values()) == {1}
    tables = tables_of(tickets)
    assert len(tables) == 3 and sorted(u for t in tables.values() for u in t) == sorted(
        p.pk for p in people
    )
    assert matcher.match_once() == 0  # nothing left, nothing formed twice


def test_rooms_rules_and_rated_never_mix(user_factory):
    a, b, c = (person(user_factory) for _ in range(3))
    queue(a)
    queue(b, rules="house")
    queue(c, room="100:5")
    d = person(user_factory)
    queue(d, rated=False)
    assert matcher.match_once() == 0


def test_the_window_widens_with_the_wait(user_factory):
    people = [person(user_factory) for _ in range(3)]
    for p, ordinal in zip(people, (0.0, 12.0, 16.0), strict=True):
        rate(p, ordinal)
        queue(p)
    assert matcher.match_once() == 0  # 12 and 16 points from the first, windows of 5
    later = timezone.now() + timedelta(seconds=21)  # the first ticket's window is 20 now
    assert matcher.match_once(now=later) == 1


def test_bots_fill_the_seats_after_the_wait(user_factory):
    alone = person(user_factory)
    ticket = queue(alone, room="100:5", bots_after=10.0)
    assert matcher.match_once() == 0
    assert matcher.match_once(now=timezone.now() + timedelta(seconds=11)) == 1
    ticket.refresh_from_db()
    game = Game.objects.get(pk=ticket.game_id)
    levels = list(game.seats.order_by("index").values_list("bot_level", flat=True))
    assert levels == ["", "easy", "easy"] and game.buy_in == 100
    assert escrow_balance(game.pk) == 300  # the bots' buy-ins from the house
    assert_sound()


def test_a_ticket_for_people_only_never_gets_bots(user_factory):
    queue(person(user_factory), bots_after=None)
    assert matcher.match_once(now=timezone.now() + timedelta(hours=1)) == 0


def test_a_seat_short_of_chips_at_match_time_loses_its_ticket_and_the_others_search_on(
    user_factory,
):
    people = [person(user_factory) for _ in range(4)]
    tickets = [queue(p) for p in people]
    poor = people[1]
    ledger.post(  # spent meanwhile: the wallet holds 999 of the 1,000
        cause="adjustment",
        key="adjustment:test-spent",
        postings={ledger.wallet_of(poor.pk): -1, ledger.house_id(): 1},
        user_id=poor.pk,
        reason="spent before the match",
    )
    assert matcher.match_once() == 1
    statuses = {t.pk: Ticket.objects.get(pk=t.pk) for t in tickets}
    assert statuses[tickets[1].pk].status == "cancelled"
    assert statuses[tickets[1].pk].reason == "insufficient_chips"
    seated = {p.pk for p, t in zip(people, tickets, strict=True) if statuses[t.pk].game_id}
    assert seated == {people[0].pk, people[2].pk, people[3].pk}
    told = TicketEvent.objects.get(user=poor, kind="cancelled")
    assert told.data["reason"] == "insufficient_chips"
    assert_sound()


def test_a_person_seated_elsewhere_meanwhile_loses_the_ticket(user_factory):
    from games import lobby

    people = [person(user_factory) for _ in range(4)]
    tickets = [queue(p) for p in people]
    lobby.table_create(user=people[0])  # sits at a waiting table of their own
    assert matcher.match_once() == 1
    first = Ticket.objects.get(pk=tickets[0].pk)
    assert (first.status, first.reason) == ("cancelled", "already_seated")
    assert seats_of([p.pk for p in people[1:]]) == {p.pk: 1 for p in people[1:]}


def race(user, ticket) -> str:
    """A cancel of ``ticket`` and a matcher's pass, let go at the same instant: how the cancel
    came out."""
    outcome: dict[str, str] = {}
    start = threading.Barrier(2)

    def cancel() -> None:
        start.wait()
        try:
            services.ticket_cancel(user=user, ticket_id=ticket.pk)
            outcome["cancel"] = "cancelled"
        except AlreadyMatched:
            outcome["cancel"] = "too late"
        finally:
            connection.close()

    def match() -> None:
        start.wait()
        try:
            matcher.match_once()
        finally:
            connection.close()

    threads = [threading.Thread(target=cancel), threading.Thread(target=match)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return outcome["cancel"]


@pytest.mark.django_db(transaction=True)
def test_a_cancel_racing_a_match_has_exactly_one_winner(user_factory):
    outcomes = set()
    for attempt in range(8):
        people = [person(user_factory) for _ in range(3)]
        tickets = [queue(p) for p in people]
        who = attempt % 3
        outcome = race(people[who], tickets[who])
        outcomes.add(outcome)
        statuses = sorted(
            Ticket.objects.filter(pk__in=[t.pk for t in tickets]).values_list("status", flat=True)
        )
        if outcome == "cancelled":
            assert statuses == ["cancelled", "searching", "searching"]
        else:
            assert statuses == ["matched"] * 3
        assert max(seats_of([p.pk for p in people]).values(), default=0) <= 1
        for ticket in Ticket.objects.filter(status="searching"):  # a clean room for the next
            services.ticket_cancel(user=ticket.owner, ticket_id=ticket.pk)


MATCHER_PROCESS = """
import os, sys, django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tongits_site.settings")
django.setup()
from django.conf import settings
settings.TONGITS_ROOMS = [{"buy_in": 100, "stake": 5, "bot_level": "easy"},
                          {"buy_in": 1000, "stake": 50, "bot_level": "normal"}]
from matchmaking import matcher
from matchmaking.models import Ticket
import time
matcher.BATCH = 15  # five tables a pass: the two processes take turns with the room
formed = 0
for _ in range(int(sys.argv[1])):
    if not Ticket.objects.filter(status="searching").exists():
        break
    done = matcher.match_once()
    formed += done
    if not done:  # the other process holds the room: let it work
        time.sleep(0.005)
print(formed)
"""


@pytest.mark.django_db(transaction=True)
def test_two_matchers_in_two_processes_never_seat_a_ticket_twice(user_factory, tmp_path):
    people = [person(user_factory) for _ in range(300)]
    tickets = [queue(p, room="100:5") for p in people]
    env = {"DATABASE_URL": database_url(), "TONGITS_SEAL_KEY_FILE": "", "LOG_LEVEL": "WARNING"}
    import os

    procs = [
        subprocess.Popen(
            [sys.executable, "-c", MATCHER_PROCESS, "2000"],
            env={**os.environ, **env, "TONGITS_SEAL_KEY_FILE": str(tmp_path / "seal.key")},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [proc.communicate(timeout=300) for proc in procs]
    assert all(proc.returncode == 0 for proc in procs), results
    each = [int(out.strip().splitlines()[-1]) for out, _err in results]
    assert sum(each) == 100, each
    assert set(seats_of([p.pk for p in people]).values()) == {1}
    assert Ticket.objects.filter(pk__in=[t.pk for t in tickets], status="matched").count() == 300
    games = list(Ticket.objects.values_list("game_id", flat=True))
    assert all(games.count(g) == 3 for g in set(games))
    assert_sound()


@pytest.mark.django_db(transaction=True)
def test_manage_run_scheduler_runs_the_matcher_and_stops_with_it(user_factory, tmp_path):
    import os
    import signal
    import time

    log = (tmp_path / "scheduler.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "run_scheduler"],
        env={
            **os.environ,
            "DATABASE_URL": database_url(),
            "TONGITS_SEAL_KEY_FILE": str(tmp_path / "seal.key"),
            "LOG_LEVEL": "WARNING",
        },
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while b"scheduler: running" not in (tmp_path / "scheduler.log").read_bytes():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        tickets = [queue(person(user_factory), room="100:5") for _ in range(3)]
        while Ticket.objects.filter(pk__in=[t.pk for t in tickets], status="matched").count() < 3:
            assert time.monotonic() < deadline, (tmp_path / "scheduler.log").read_text()
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:  # never left running to hold the test database
            proc.kill()
            proc.wait()
            raise
    assert proc.returncode == 0
    assert b"scheduler: stopped" in (tmp_path / "scheduler.log").read_bytes()
