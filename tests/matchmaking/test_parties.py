"""Parties: a ticket names friends, who join or decline; a party sits at one table; blocks and
linked accounts keep people apart."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import LoginClaim
from matchmaking import matcher, services
from matchmaking.errors import NotAFriend, TicketClosed
from matchmaking.models import Ticket, TicketEvent
from notifications.models import Kind, Notification
from social import services as social
from tests.matchmaking.support import person, queue, seats_of, tables_of

pytestmark = pytest.mark.django_db


def friends(a, b) -> None:
    social.friend_add(user=a, username=b.username)
    social.friend_add(user=b, username=a.username)


def test_a_party_of_two_and_a_stranger_sit_together(user_factory):
    ana, ben, cy = (person(user_factory) for _ in range(3))
    friends(ana, ben)
    party = queue(ana, friends=[ben.username])
    assert party.status == "forming" and party.size == 2
    invite = Notification.objects.get(user=ben, kind=Kind.PARTY_INVITE)
    assert invite.data == {"ticket_id": str(party.pk), "by_user_id": ana.pk}
    stranger = queue(cy)
    assert matcher.match_once() == 0  # the party is not searching yet
    joined = services.ticket_join(user=ben, ticket_id=party.pk)
    assert joined.status == "searching"
    assert matcher.match_once() == 1
    tables = tables_of([party, stranger])
    assert [sorted(t) for t in tables.values()] == [sorted([ana.pk, ben.pk, cy.pk])]
    assert set(TicketEvent.objects.filter(kind="matched").values_list("user_id", flat=True)) == {
        ana.pk,
        ben.pk,
        cy.pk,
    }


def test_a_party_is_never_split_over_two_tables(user_factory):
    people = [person(user_factory) for _ in range(5)]
    friends(people[0], people[1])
    party = queue(people[0], friends=[people[1].username])
    services.ticket_join(user=people[1], ticket_id=party.pk)
    singles = [queue(p) for p in people[2:]]
    assert matcher.match_once() == 1
    tables = tables_of([party, *singles])
    (seated,) = tables.values()
    assert {people[0].pk, people[1].pk} <= set(seated)


def test_only_friends_may_be_named_and_a_block_looks_the_same(user_factory):
    ana, ben, cy = (person(user_factory) for _ in range(3))
    with pytest.raises(NotAFriend) as stranger:
        queue(ana, friends=[ben.username])
    friends(ana, cy)
    social.block_add(user=cy, username=ana.username)  # ends the friendship too
    with pytest.raises(NotAFriend) as blocked:
        queue(ana, friends=[cy.username])
    assert str(stranger.value.detail) == str(blocked.value.detail)
    assert not Ticket.objects.exists()


def test_a_decline_or_a_member_leaving_ends_the_party_and_the_others_are_told(user_factory):
    ana, ben, cy = (person(user_factory) for _ in range(3))
    friends(ana, ben)
    friends(ana, cy)
    party = queue(ana, friends=[ben.username, cy.username])
    services.ticket_join(user=ben, ticket_id=party.pk)
    updated = TicketEvent.objects.filter(ticket=party, kind="updated")
    assert set(updated.values_list("user_id", flat=True)) == {ana.pk, ben.pk, cy.pk}
    assert {e.data["joined"] for e in updated} == {ben.username}
    services.ticket_decline(user=cy, ticket_id=party.pk)
    party.refresh_from_db()
    assert (party.status, party.reason) == ("cancelled", "member_declined")
    told = set(
        TicketEvent.objects.filter(ticket=party, kind="cancelled").values_list("user", flat=True)
    )
    assert told == {ana.pk, ben.pk}
    with pytest.raises(TicketClosed):
        services.ticket_join(user=cy, ticket_id=party.pk)

    again = queue(ana, friends=[ben.username])
    services.ticket_join(user=ben, ticket_id=again.pk)
    services.ticket_cancel(user=ben, ticket_id=again.pk)  # a member leaves
    again.refresh_from_db()
    assert (again.status, again.reason) == ("cancelled", "member_left")
    assert queue(ana).status == "searching"  # free to queue again


def test_a_party_whose_friends_never_answer_lapses(user_factory, settings):
    settings.TONGITS_PARTY_INVITE_SECONDS = 60.0
    ana, ben = person(user_factory), person(user_factory)
    friends(ana, ben)
    party = queue(ana, friends=[ben.username])
    matcher.match_once(now=timezone.now() + timedelta(seconds=30))
    party.refresh_from_db()
    assert party.status == "forming"
    matcher.match_once(now=timezone.now() + timedelta(seconds=61))
    party.refresh_from_db()
    assert (party.status, party.reason) == ("cancelled", "party_lapsed")


def test_people_who_blocked_each_other_are_never_seated_together(user_factory):
    ana, ben, cy, dee = (person(user_factory) for _ in range(4))
    social.block_add(user=ben, username=ana.username)
    tickets = [queue(p) for p in (ana, ben, cy, dee)]
    assert matcher.match_once() == 1
    (seated,) = tables_of(tickets).values()
    assert not {ana.pk, ben.pk} <= set(seated)
    assert seats_of([cy.pk, dee.pk]) == {cy.pk: 1, dee.pk: 1}


def test_accounts_that_held_one_identity_are_kept_apart(user_factory):
    ana, alt, cy, dee = (person(user_factory) for _ in range(4))
    for user in (ana, alt):  # one phone's key, held by one account and then the other
        LoginClaim.objects.create(user=user, method="device", subject="a" * 64)
    tickets = [queue(p) for p in (ana, alt, cy, dee)]
    assert matcher.match_once() == 1
    (seated,) = tables_of(tickets).values()
    assert not {ana.pk, alt.pk} <= set(seated)


def test_deleting_an_account_ends_its_tickets_and_its_party_is_told(user_factory):
    from accounts import services as accounts
    from tests.conftest import DEFAULT_PASSWORD

    ana, ben = person(user_factory), person(user_factory)
    friends(ana, ben)
    party = queue(ana, friends=[ben.username])
    accounts.account_delete(user=ben, password=DEFAULT_PASSWORD)
    party.refresh_from_db()
    assert (party.status, party.reason) == ("cancelled", "member_left")
    told = TicketEvent.objects.get(ticket=party, user=ana, kind="cancelled")
    assert told.data["reason"] == "member_left"
    alone = queue(ana)
    accounts.account_delete(user=ana, password=DEFAULT_PASSWORD)
    alone.refresh_from_db()
    assert alone.status == "cancelled"
