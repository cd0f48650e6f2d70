"""Table stakes through the services: buy-ins into escrow with the start, or nothing at all;
the settlement out of it, once, under the table-stakes rule; refunds; resignations."""

from __future__ import annotations

import pytest

from accounts.services import account_delete
from chips import ledger, services
from chips.errors import InsufficientChips
from chips.models import Entry
from games import lobby, play, store
from games.models import Event, Game
from games.rules import table_stakes
from tests.chips.support import (
    ONE_ROUND,
    assert_sound,
    available,
    entries_of,
    escrow_balance,
    in_play,
    play_to_the_end,
    quick_table,
    settle,
)
from tests.conftest import DEFAULT_PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def grants(settings):
    settings.TONGITS_SIGNUP_GRANT = 1000
    settings.TONGITS_DAILY_BONUS = 200


def three_at_a_table(user_factory, buy_in: int, rules=ONE_ROUND):
    users = [user_factory() for _ in range(3)]
    for user in users:
        services.open_wallet(user.pk)
    owner = users[0]
    seats = [{"kind": "user"}] + [{"kind": "user", "username": u.username} for u in users[1:]]
    game = lobby.table_create(user=owner, rules=rules, seats=seats, rated=False, buy_in=buy_in)
    for other in users[1:]:
        lobby.table_respond(game_id=game.pk, user=other, accept=True)
    return users, game


def test_quick_play_escrows_the_buy_ins_with_the_start(user_factory):
    user = user_factory()
    game = quick_table(user, 100)
    assert Game.objects.get(pk=game.pk).status == Game.Status.ACTIVE
    assert available(user) == 900 and in_play(user) == 100
    assert escrow_balance(game.pk) == 300  # the bots' buy-ins came from the house
    started = Event.objects.get(game=game, seq=1).data
    assert started["buy_in"] == 100  # the events say what is at stake
    buy_in = Entry.objects.get(key=f"buy_in:{game.pk}")
    legs = dict(buy_in.postings.values_list("account_id", "amount"))
    assert legs == {
        ledger.wallet_of(user.pk): -100,
        ledger.house_id(): -200,
        ledger.escrow_of(game.pk): 300,
    }
    assert_sound()


def test_a_start_that_a_seat_cannot_cover_is_refused_and_nothing_is_escrowed(user_factory):
    users, game = three_at_a_table(user_factory, 500)
    services.adjust(user_id=users[2].pk, amount=-600, reason="spent elsewhere", staff_id=None)
    before = [available(u) for u in users]
    with pytest.raises(InsufficientChips) as refused:
        lobby.table_start(game_id=game.pk, user=users[0])
    assert refused.value.seat == 2 and refused.value.extra == {"seat": 2}
    assert [available(u) for u in users] == before  # nothing taken from anyone
    assert entries_of(game.pk) == [] and escrow_balance(game.pk) in (None, 0)
    row = Game.objects.get(pk=game.pk)
    assert row.status == Game.Status.WAITING and row.version == 0  # nothing appended
    assert not Event.objects.filter(game=game).exists()
    # Once seat 2 can cover it, the same table starts.
    services.adjust(user_id=users[2].pk, amount=100, reason="back", staff_id=None)
    lobby.table_start(game_id=game.pk, user=users[0])
    assert [available(u) for u in users] == [500, 500, 0]
    assert_sound()


def test_sitting_down_asks_for_the_buy_in(user_factory):
    rich, poor = user_factory(), user_factory()
    services.open_wallet(poor.pk)
    services.adjust(user_id=poor.pk, amount=-950, reason="test", staff_id=None)
    game = lobby.table_create(user=rich, seats=None, rated=False, buy_in=100)
    with pytest.raises(InsufficientChips) as refused:
        lobby.table_join(game_id=game.pk, user=poor)
    assert refused.value.seat == 1
    with pytest.raises(InsufficientChips):
        lobby.table_create(user=poor, rated=False, buy_in=100)
    with pytest.raises(InsufficientChips):
        quick_table(poor, 100)
    assert available(poor) == 50 and not Entry.objects.filter(cause="buy_in").exists()


def test_a_finished_match_pays_the_table_stakes_result_once(user_factory):
    users, game = three_at_a_table(user_factory, 100)
    lobby.table_start(game_id=game.pk, user=users[0])
    play_to_the_end(game.pk, dict(enumerate(users)), seed=3)
    state = store.load(game.pk)
    owed = list(state.chips)
    paid = table_stakes(owed, [100, 100, 100])
    assert settle(game.pk) == "settled"
    assert settle(game.pk) == "settled"  # run again: nothing more is posted
    assert [available(u) for u in users] == [1000 + p for p in paid]
    assert [in_play(u) for u in users] == [0, 0, 0]
    assert escrow_balance(game.pk) == 0
    assert [c for c, _ in entries_of(game.pk)] == ["buy_in", "payout"]
    payout = Entry.objects.get(key=f"payout:{game.pk}")
    assert payout.data["owed"] == owed and payout.data["paid"] == paid
    assert_sound()


def test_a_loser_never_loses_more_than_the_buy_in(user_factory):
    """At stake 40 a round's loser owes far more than a buy-in of 10: the cap binds."""
    rules = {"preset": "standard", "wins_to_match": 2, "stake": 40}
    users, game = three_at_a_table(user_factory, 10, rules)
    lobby.table_start(game_id=game.pk, user=users[0])
    play_to_the_end(game.pk, dict(enumerate(users)), seed=5)
    owed = list(store.load(game.pk).chips)
    assert min(owed) < -10, owed  # a loser owes more than the buy-in
    settle(game.pk)
    paid = table_stakes(owed, [10, 10, 10])
    got = [available(u) - 1000 for u in users]
    assert got == paid and min(got) >= -10 and sum(got) == 0
    assert Entry.objects.get(key=f"payout:{game.pk}").data["capped"] is True
    assert_sound()


def test_an_aborted_match_refunds_every_buy_in(user_factory):
    user = user_factory()
    rules = {"preset": "standard", "turn_seconds": 0}
    game = quick_table(user, 250, rules)
    head = store.read(game.pk)
    assert play.abort_idle(game_id=game.pk, expected_version=head.version) == play.Outcome.DONE
    row = Game.objects.get(pk=game.pk)
    assert row.status == Game.Status.ABORTED and row.awaiting == Game.Awaiting.SETTLE
    assert available(user) == 750  # in escrow until the refund
    assert settle(game.pk) == "refunded"
    assert settle(game.pk) == "refunded"
    assert available(user) == 1000 and in_play(user) == 0 and escrow_balance(game.pk) == 0
    assert [c for c, _ in entries_of(game.pk)] == ["buy_in", "refund"]
    row.refresh_from_db()
    assert row.settled_at is not None and row.awaiting == Game.Awaiting.NONE
    assert_sound()


def test_an_aborted_match_without_chips_needs_no_settlement(user_factory):
    user = user_factory()
    game = quick_table(user, 0, {"preset": "standard", "turn_seconds": 0})
    play.abort_idle(game_id=game.pk, expected_version=store.read(game.pk).version)
    row = Game.objects.get(pk=game.pk)
    assert row.awaiting == Game.Awaiting.NONE and settle(game.pk) == "nothing_to_do"
    assert entries_of(game.pk) == []


def test_a_resigners_chips_follow_the_match(user_factory):
    users, game = three_at_a_table(user_factory, 100)
    lobby.table_start(game_id=game.pk, user=users[0])
    play.resign(game.pk, users[1].pk)
    play_to_the_end(game.pk, dict(enumerate(users)), seed=11)
    owed = list(store.load(game.pk).chips)
    settle(game.pk)
    assert [available(u) - 1000 for u in users] == table_stakes(owed, [100, 100, 100])
    assert_sound()


def test_a_deleted_players_chips_go_to_the_house(user_factory):
    users, game = three_at_a_table(user_factory, 100)
    lobby.table_start(game_id=game.pk, user=users[0])
    account_delete(user=users[2], password=DEFAULT_PASSWORD)  # resigns; 900 to the house
    assert available(users[2]) == 0 and in_play(users[2]) == 100
    assert Entry.objects.get(key=f"account_deleted:{users[2].pk}").data == {"amount": 900}
    play_to_the_end(game.pk, dict(enumerate(users)), seed=2)
    settle(game.pk)
    owed = list(store.load(game.pk).chips)
    paid = table_stakes(owed, [100, 100, 100])
    assert available(users[2]) == 0 and in_play(users[2]) == 0  # its payout followed it
    if 100 + paid[2] > 0:
        sweep = Entry.objects.get(key=f"account_deleted:{users[2].pk}:{game.pk}")
        assert sweep.data == {"amount": 100 + paid[2]}
    assert [available(u) - 1000 for u in users[:2]] == paid[:2]
    assert_sound()
