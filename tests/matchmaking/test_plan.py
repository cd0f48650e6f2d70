"""The matcher's choice over candidates (``matchmaking.matcher.plan``), pure: tables of three
people, oldest first, within rating windows, never two kept apart, each ticket once."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matchmaking.matcher import Candidate, plan, window


@pytest.fixture(autouse=True)
def windows(settings):
    settings.TONGITS_MATCH_WINDOW = 5.0
    settings.TONGITS_MATCH_WINDOW_DOUBLING_SECONDS = 10.0
    settings.TONGITS_MATCH_WINDOW_UNBOUNDED_SECONDS = 30.0


def ticket(n: int, *, size: int = 1, rating: float = 0.0, waited: float = 0.0, bots=None):
    users = frozenset(range(n * 10, n * 10 + size))
    return Candidate(n, size, users, rating, waited, bots)


def test_three_singles_make_one_table():
    found = plan([ticket(1), ticket(2), ticket(3)], set())
    assert [[c.id for c in p.tickets] for p in found] == [[1, 2, 3]]
    assert found[0].bots == 0


def test_the_oldest_picks_first_and_nine_make_three_tables():
    found = plan([ticket(n) for n in range(9)], set())
    assert [[c.id for c in p.tickets] for p in found] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]


def test_a_party_of_two_sits_with_a_stranger_never_split():
    found = plan([ticket(1), ticket(2, size=2), ticket(3)], set())
    assert [[c.id for c in p.tickets] for p in found] == [[1, 2]]


def test_the_window_widens_with_the_wait():
    assert window(0) == 5.0 and window(10) == 10.0 and window(20) == 20.0
    assert window(30) == float("inf")
    far = [ticket(1, rating=0), ticket(2, rating=8), ticket(3, rating=16)]
    assert plan(far, set()) == []
    later = [ticket(1, rating=0, waited=21), ticket(2, rating=12), ticket(3, rating=16)]
    assert len(plan(later, set())) == 1


def test_kept_apart_people_never_share_a_table():
    kept = {frozenset((10, 20))}  # ticket 1's person and ticket 2's
    found = plan([ticket(1), ticket(2), ticket(3), ticket(4)], kept)
    assert [[c.id for c in p.tickets] for p in found] == [[1, 3, 4]]


def test_bots_fill_once_the_oldest_has_waited_its_bots_after():
    alone = [ticket(1, waited=5, bots=20.0)]
    assert plan(alone, set()) == []
    due = plan([ticket(1, waited=21, bots=20.0), ticket(2, bots=20.0)], set())
    assert [[c.id for c in p.tickets] for p in due] == [[1, 2]] and due[0].bots == 1
    people_only = plan([ticket(1, waited=21, bots=20.0), ticket(2, bots=None)], set())
    assert [[c.id for c in p.tickets] for p in people_only] == [[1]]
    assert people_only[0].bots == 2


queues = st.lists(
    st.tuples(
        st.integers(min_value=1, max_value=3),  # size
        st.floats(min_value=-10, max_value=40, allow_nan=False),  # rating
        st.floats(min_value=0, max_value=60, allow_nan=False),  # waited
        st.one_of(st.none(), st.floats(min_value=0, max_value=40, allow_nan=False)),
    ),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(queue=queues, blocks=st.sets(st.tuples(st.integers(0, 300), st.integers(0, 300))))
def test_any_queue_gives_full_tables_of_distinct_tickets_and_no_kept_apart_pair(queue, blocks):
    candidates = [
        ticket(n, size=size, rating=rating, waited=waited, bots=bots)
        for n, (size, rating, waited, bots) in enumerate(queue)
    ]
    candidates.sort(key=lambda c: -c.waited)  # oldest first, as the matcher loads them
    kept = {frozenset(pair) for pair in blocks if pair[0] != pair[1]}
    found = plan(candidates, kept)
    seen = [c.id for p in found for c in p.tickets]
    assert len(seen) == len(set(seen))  # each ticket at one table at most
    for table in found:
        people = [u for c in table.tickets for u in c.users]
        assert len(people) + table.bots == 3 and table.tickets
        for a, b in itertools.combinations(table.tickets, 2):
            assert not any(frozenset((x, y)) in kept for x in a.users for y in b.users)
            assert abs(a.rating - b.rating) <= max(window(a.waited), window(b.waited))
        if table.bots:
            assert all(c.bots_after is not None for c in table.tickets)
            assert table.tickets[0].waited >= table.tickets[0].bots_after
