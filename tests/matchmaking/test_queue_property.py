"""A property of the whole matchmaker on PostgreSQL: over random queues, block graphs, cancels
and waits, no blocked pair ever shares a table, every ticket ends matched, cancelled or still
searching, and nobody sits at two tables."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.models import Game, Seat
from matchmaking import matcher, services
from matchmaking.models import Member, Ticket
from social import services as social
from tests.chips.support import assert_sound
from tests.matchmaking.support import person

PEOPLE = 9

steps = st.lists(
    st.one_of(
        st.tuples(st.just("queue"), st.integers(0, PEOPLE - 1), st.sampled_from([None, 5.0])),
        st.tuples(st.just("cancel"), st.integers(0, PEOPLE - 1), st.none()),
        st.tuples(st.just("match"), st.integers(0, 40), st.none()),
    ),
    min_size=1,
    max_size=25,
)
blocks = st.sets(
    st.tuples(st.integers(0, PEOPLE - 1), st.integers(0, PEOPLE - 1)).filter(lambda p: p[0] < p[1]),
    max_size=8,
)


_names = itertools.count()


def nine_people() -> list:
    """Nine people with chips (no password: none is needed, and hashing nine is slow)."""
    from django.contrib.auth import get_user_model

    make = get_user_model().objects.create
    return [person(lambda: make(username=f"mm{next(_names)}")) for _ in range(PEOPLE)]


@pytest.mark.django_db
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=steps, blocked=blocks)
def test_random_queues_blocks_and_cancels_keep_every_promise(plan, blocked):
    from django.db import transaction

    with transaction.atomic():
        people = nine_people()
        for a, b in blocked:
            social.block_add(user=people[a], username=people[b].username)
        now = timezone.now()
        for kind, who, extra in plan:
            if kind == "queue":
                try:
                    services.ticket_create(
                        user=people[who], room="100:5", bots_after=extra, rules="standard"
                    )
                except Exception as refused:  # one open ticket, seated, ...: a domain error
                    assert getattr(refused, "code", None) in {"already_searching", "already_seated"}
            elif kind == "cancel":
                member = Member.objects.filter(user=people[who], active=True).first()
                if member is not None:
                    services.ticket_cancel(user=people[who], ticket_id=member.ticket_id)
            else:
                now += timedelta(seconds=who)
                matcher.match_once(now=now)

        tickets = list(Ticket.objects.all())
        assert {t.status for t in tickets} <= {"matched", "cancelled", "searching"}
        ids = {p.pk: n for n, p in enumerate(people)}
        seats = Seat.objects.filter(game__status=Game.Status.ACTIVE, user__isnull=False)
        per_person = [uid for uid in seats.values_list("user_id", flat=True)]
        assert len(per_person) == len(set(per_person))  # nobody at two tables
        for game_id in {t.game_id for t in tickets if t.game_id}:
            seated = [
                ids[s]
                for s in Seat.objects.filter(game_id=game_id, user__isnull=False).values_list(
                    "user_id", flat=True
                )
            ]
            for a, b in itertools.combinations(seated, 2):
                assert (min(a, b), max(a, b)) not in blocked
        for ticket in tickets:
            if ticket.status == "matched":
                assert ticket.game_id is not None
        assert Member.objects.filter(active=True, ticket__status="matched").count() == 0
        assert_sound()
        transaction.set_rollback(True)
