"""A property over random histories of purchases (some replayed), refunds (some after the chips
were spent, some before their purchase), tables played for chips in rooms with and without a
service fee, their settlements, and account deletions. After every step the ledger sums to zero,
no wallet is negative, a player who owes has nothing in their wallet (every credit repaid the
debt first), ``verify_ledger`` (with its store checks) finds nothing, and every wallet and debt
holds what a plain model says."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass

import pytest
from django.db import transaction
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from accounts.services import account_delete, user_register
from chips import ledger
from chips.errors import ChipsOwed, InsufficientChips
from games import lobby, store
from games.rules import table_stakes
from store import services
from store.errors import PurchaseRevoked
from tests.chips.support import assert_sound, available, play_to_the_end, raw, settle
from tests.conftest import DEFAULT_PASSWORD
from tests.purchases.appstore import Authority

pytestmark = pytest.mark.django_db

GRANT = 100
PRODUCTS = {"chips_100": 100, "chips_1000": 1000}
RULES = {"preset": "standard", "turn_seconds": 0, "wins_to_match": 1, "stake": 10}
_names = itertools.count(1)
SEEN: Counter[str] = Counter()


@dataclass
class Bought:
    signed: str
    user: object
    chips: int
    refunded: bool = False


@dataclass
class Table:
    game_id: str
    people: list
    buy_in: int
    fee_percent: int


class Purchases(RuleBasedStateMachine):
    authority: Authority  # set by the test

    def __init__(self) -> None:
        super().__init__()
        self.atomic = transaction.atomic()
        self.atomic.__enter__()
        self.users: list = []
        self.deleted: set[int] = set()
        self.available: dict[int, int] = {}
        self.in_play: dict[int, int] = {}
        self.owed: dict[int, int] = {}
        self.bought: list[Bought] = []
        self.refunded_early: set[str] = set()
        self.tables: list[Table] = []

    def live(self) -> list:
        return [u for u in self.users if u.pk not in self.deleted]

    def credit(self, user, chips: int) -> None:
        """A credit to the wallet: the debt first, the rest to the wallet (or, for a deleted
        account, to the house)."""
        repaid = min(chips, self.owed[user.pk])
        self.owed[user.pk] -= repaid
        if user.pk not in self.deleted:
            self.available[user.pk] += chips - repaid
        if repaid:
            SEEN["a debt repaid"] += 1

    @initialize()
    def two_players(self) -> None:
        self.sign_up()
        self.sign_up()

    @rule()
    def sign_up(self) -> None:
        user, _, _ = user_register(username=f"buyer{next(_names)}", password=DEFAULT_PASSWORD)
        self.users.append(user)
        self.available[user.pk], self.in_play[user.pk], self.owed[user.pk] = GRANT, 0, 0

    @rule(
        data=st.data(),
        product=st.sampled_from(sorted(PRODUCTS)),
        early=st.sampled_from([False, False, False, True]),
    )
    def buy(self, data, product, early) -> None:
        user = data.draw(st.sampled_from(self.live()))
        signed = self.authority.transaction(productId=product)
        if early:  # the store's refund arrives before the app sends the purchase
            services.apple_notification(
                signed_payload=self.authority.notification("REFUND", signed)
            )
            with pytest.raises(PurchaseRevoked):
                services.apple_transaction(user_id=user.pk, signed_transaction=signed)
            SEEN["a refund before its purchase"] += 1
            return
        credited = services.apple_transaction(user_id=user.pk, signed_transaction=signed)
        assert not credited.replayed
        self.bought.append(Bought(signed, user, PRODUCTS[product]))
        self.credit(user, PRODUCTS[product])
        SEEN["a purchase"] += 1

    @rule(data=st.data(), fee=st.sampled_from([0, 10]))
    def buy_spend_and_get_refunded(self, data, fee) -> None:
        """The fraud the debt is for: buy, sit down for most of it, have the store refund it."""
        user = data.draw(st.sampled_from(self.live()))
        signed = self.authority.transaction(productId="chips_1000")
        services.apple_transaction(user_id=user.pk, signed_transaction=signed)
        bought = Bought(signed, user, 1000)
        self.bought.append(bought)
        self.credit(user, 1000)
        SEEN["a purchase"] += 1
        self._start([user], 600, fee)
        self._refund(bought, 1)

    @precondition(lambda self: self.bought)
    @rule(data=st.data())
    def replay(self, data) -> None:
        bought = data.draw(st.sampled_from(self.bought))
        if bought.user.pk in self.deleted:
            return
        again = services.apple_transaction(user_id=bought.user.pk, signed_transaction=bought.signed)
        assert again.replayed

    @precondition(lambda self: self.bought)
    @rule(data=st.data(), times=st.integers(1, 2))
    def refund(self, data, times) -> None:
        self._refund(data.draw(st.sampled_from(self.bought)), times)

    def _refund(self, bought: Bought, times: int) -> None:
        notice = self.authority.notification("REFUND", bought.signed)
        for _ in range(times):
            services.apple_notification(signed_payload=notice)
        if bought.refunded:
            return
        bought.refunded = True
        user = bought.user
        taken = min(self.available[user.pk], bought.chips)
        self.available[user.pk] -= taken
        self.owed[user.pk] += bought.chips - taken
        SEEN["a refund"] += 1
        if taken < bought.chips:
            SEEN["a refund after spending"] += 1

    @rule(
        data=st.data(),
        humans=st.integers(1, 2),
        buy_in=st.sampled_from([0, 60, 300, 600]),
        fee=st.sampled_from([0, 5, 10]),
    )
    def start_a_table(self, data, humans, buy_in, fee) -> None:
        people = self.live()
        if len(people) < humans:
            return
        self._start(data.draw(st.permutations(people))[:humans], buy_in, fee)

    def _start(self, chosen: list, buy_in: int, fee: int) -> None:
        humans = len(chosen)
        owing = buy_in and any(self.owed[u.pk] for u in chosen)
        short = any(self.available[u.pk] < buy_in for u in chosen)
        try:
            game = lobby.table_matched(
                people=chosen,
                bots=["easy"] * (3 - humans),
                rules=RULES,
                rated=False,
                buy_in=buy_in,
                fee_percent=fee,
            )
        except ChipsOwed:
            assert owing
            SEEN["a buy-in refused for a debt"] += 1
            return
        except InsufficientChips:
            assert short and not owing
            return
        assert not owing and not short
        for user in chosen:
            self.available[user.pk] -= buy_in
            self.in_play[user.pk] += buy_in
        self.tables.append(Table(str(game.pk), chosen, buy_in, fee if buy_in else 0))

    @rule(pick=st.integers(0, 7))
    def finish(self, pick) -> None:
        # Whether a table started hangs on earlier matches' shuffles: no draw may depend on it.
        if not self.tables:
            return
        table = self.tables[pick % len(self.tables)]
        self.tables.remove(table)
        play_to_the_end(table.game_id, dict(enumerate(table.people)), seed=len(self.tables))
        owed = list(store.load(table.game_id).chips)
        assert settle(table.game_id) == "settled"
        if not table.buy_in:
            return
        paid = table_stakes(owed, [table.buy_in] * 3)
        if table.fee_percent:
            SEEN["a match with a service fee settled"] += 1
        for seat, user in enumerate(table.people):
            fee = paid[seat] * table.fee_percent // 100 if paid[seat] > 0 else 0
            if fee:
                SEEN["a service fee"] += 1
            self.in_play[user.pk] -= table.buy_in
            self.credit(user, table.buy_in + paid[seat] - fee)
        SEEN["a match settled"] += 1

    @precondition(lambda self: len(self.live()) > 2)
    @rule(data=st.data())
    def delete_an_account(self, data) -> None:
        user = data.draw(st.sampled_from(self.live()))
        account_delete(user=user, password=DEFAULT_PASSWORD)
        self.deleted.add(user.pk)
        self.available[user.pk] = 0
        SEEN["an account deleted"] += 1

    def teardown(self) -> None:
        transaction.set_rollback(True)
        self.atomic.__exit__(None, None, None)

    @invariant()
    def the_ledger_is_sound_and_matches_the_model(self) -> None:
        raw("SET CONSTRAINTS ALL IMMEDIATE")
        raw("SET CONSTRAINTS ALL DEFERRED")
        assert_sound()
        for user in self.users:
            owed = ledger.owed(user.pk)
            assert (available(user), owed) == (self.available[user.pk], self.owed[user.pk]), user
            if owed and user.pk not in self.deleted:
                assert available(user) == 0  # every credit repaid the debt first


def test_random_histories_of_purchases_refunds_and_fees_keep_the_ledger_sound(apple, settings):
    settings.TONGITS_SIGNUP_GRANT = GRANT
    settings.TONGITS_STORE_PRODUCTS = "apple:chips_100:100,apple:chips_1000:1000"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    services.seed_products()
    Purchases.authority = apple
    SEEN.clear()
    run_state_machine_as_test(
        Purchases,
        settings=hypothesis_settings(
            max_examples=10,
            stateful_step_count=16,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        ),
    )
    for what in (
        "a purchase",
        "a refund",
        "a refund after spending",
        "a refund before its purchase",
        "a debt repaid",
        "a buy-in refused for a debt",
        "a match with a service fee settled",
        "a match settled",
        "an account deleted",
    ):
        assert SEEN[what], (what, dict(SEEN))
    # Whether a person at a table with a fee won chips, and so paid it, hangs on the server's
    # shuffles (one to four of the run's seven settlements): tests/chips/test_service_fee.py
    # charges fees on dealt hands; here the model and the ledger agree on whatever was charged.
