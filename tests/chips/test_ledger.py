"""The ledger's own discipline, in the database itself: append-only entries, double entry, one
post per key, no negative wallet, balances equal to a rebuild."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, transaction
from django.utils import timezone

from chips import ledger, services
from chips.models import Balance, Entry, Posting
from tests.chips.support import assert_sound, available, raw

pytestmark = pytest.mark.django_db


def test_a_new_wallet_gets_the_signup_grant_once(user_factory, settings):
    settings.TONGITS_SIGNUP_GRANT = 1000
    user = user_factory()
    wallet = services.open_wallet(user.pk)
    assert services.open_wallet(user.pk) == wallet  # opened once, granted once
    assert available(user) == 1000
    grant = Entry.objects.get(key=f"signup_grant:{user.pk}")
    legs = dict(grant.postings.values_list("account_id", "amount"))
    assert legs == {ledger.house_id(): -1000, wallet: 1000}
    assert ledger.house_balance() == -1000  # the house is minus everyone else
    assert_sound()


def test_the_same_key_posts_once(user_factory):
    user = user_factory()
    wallet = services.open_wallet(user.pk)
    house = ledger.house_id()
    first = ledger.post(cause="adjustment", key="adjustment:once", postings={house: -5, wallet: 5})
    again = ledger.post(cause="adjustment", key="adjustment:once", postings={house: -9, wallet: 9})
    assert first.created and not again.created and again.entry_id == first.entry_id
    assert Posting.objects.filter(entry_id=first.entry_id).count() == 2
    assert available(user) == 1000 + 5


def test_a_transfer_that_does_not_balance_is_refused_in_code_and_in_the_database(user_factory):
    user = user_factory()
    wallet = services.open_wallet(user.pk)
    with pytest.raises(ValueError, match="sum to zero"):
        ledger.post(cause="adjustment", key="adjustment:bad", postings={wallet: 5})
    # Around the code: the deferred trigger refuses the entry when the transaction commits.
    entry = Entry.objects.create(
        cause="adjustment", key="adjustment:raw", created_at=timezone.now()
    )
    with pytest.raises(IntegrityError, match="does not balance"), transaction.atomic():
        Posting.objects.create(entry=entry, account_id=wallet, amount=7, balance_after=7)
        raw("SET CONSTRAINTS ALL IMMEDIATE")


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE chips_entry SET reason = 'edited'",
        "DELETE FROM chips_entry",
        "UPDATE chips_posting SET amount = amount + 1",
        "DELETE FROM chips_posting",
        "TRUNCATE chips_posting",
        "TRUNCATE chips_entry CASCADE",
    ],
)
def test_entries_and_postings_are_append_only(user_factory, statement):
    services.open_wallet(user_factory().pk)  # a grant: one entry, two postings
    raw("SET CONSTRAINTS ALL IMMEDIATE")  # as at a commit: no check left pending
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        raw(statement)
    assert Entry.objects.count() == 1 and Posting.objects.count() == 2


def test_no_wallet_goes_below_zero(user_factory):
    user = user_factory()
    wallet = services.open_wallet(user.pk)
    house = ledger.house_id()
    with pytest.raises(ledger.Short) as short:
        ledger.post(cause="adjustment", key="adjustment:x", postings={house: 1001, wallet: -1001})
    assert short.value.accounts == [wallet]
    assert not Entry.objects.filter(key="adjustment:x").exists()  # nothing posted
    with pytest.raises(IntegrityError, match="chips_balance_not_negative"), transaction.atomic():
        raw("UPDATE chips_balance SET balance = -1 WHERE account_id = %s", [wallet])
    assert available(user) == 1000


def test_rebuild_balances_restores_a_tampered_projection(user_factory):
    users = [user_factory() for _ in range(3)]
    for user in users:
        services.open_wallet(user.pk)
    services.daily_bonus_claim(user_id=users[0].pk)
    services.adjust(user_id=users[1].pk, amount=-250, reason="support ticket 7", staff_id=None)
    assert_sound()
    call_command("rebuild_balances", "--check")  # equal: exit 0
    wallet = ledger.wallet_of(users[2].pk)
    raw(
        "UPDATE chips_balance SET balance = 5, bonus_day = '2020-01-01' WHERE account_id = %s",
        [wallet],
    )
    with pytest.raises(CommandError, match="differ from a rebuild"):
        call_command("rebuild_balances", "--check")
    with pytest.raises(CommandError, match="problems"):
        call_command("verify_ledger")
    call_command("rebuild_balances")
    assert Balance.objects.get(account_id=wallet).balance == 1000
    assert Balance.objects.get(account_id=wallet).bonus_day is None
    day = services.bonus_day(Entry.objects.get(cause="daily_bonus").created_at)
    assert Balance.objects.get(account_id=ledger.wallet_of(users[0].pk)).bonus_day == day
    assert_sound()
    call_command("verify_ledger")


def test_each_posting_records_the_balance_after_it(user_factory):
    user = user_factory()
    services.open_wallet(user.pk)
    for amount in (10, -3, 7):
        services.adjust(user_id=user.pk, amount=amount, reason="test", staff_id=None)
    afters = list(
        Posting.objects.filter(account_id=ledger.wallet_of(user.pk))
        .order_by("id")
        .values_list("amount", "balance_after")
    )
    assert afters == [(1000, 1000), (10, 1010), (-3, 1007), (7, 1014)]
