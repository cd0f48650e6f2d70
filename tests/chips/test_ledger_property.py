"""A property over random sequences of what players and staff do: sign-ups, daily bonuses,
table starts (some refused for want of chips), aborts, resignations, finished matches,
adjustments and deletions. After every step the ledger sums to zero, no wallet is negative, the
balances equal a rebuild, ``verify_ledger`` finds nothing, and every wallet holds exactly what
a plain model of the rules says it should."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from django.db import transaction
from hypothesis import HealthCheck, settings
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
from chips import ledger, services
from chips.errors import AlreadyClaimed, InsufficientChips
from games import lobby, play, store
from games.rules import table_stakes
from tests.chips.support import (
    assert_sound,
    available,
    in_play,
    play_to_the_end,
    raw,
    settle,
)
from tests.conftest import DEFAULT_PASSWORD

pytestmark = pytest.mark.django_db
# One round a match; at stake 30 every loser owes at least 30, so a buy-in of 20 is always cut.
RULES = {"preset": "standard", "turn_seconds": 0, "wins_to_match": 1, "stake": 30}
BUY_INS = [0, 20, 100, 400, 900]
GRANT, BONUS = 1000, 200
DAY0 = datetime(2026, 6, 1, 12, tzinfo=UTC)
_names = itertools.count(1)
# Which running table a rule acts on: drawn from a fixed range, taken modulo their number.
TABLE_PICKS = st.integers(0, 7)
SEEN: Counter[str] = Counter()


def event(what: str) -> None:
    SEEN[what] += 1


@dataclass
class Table:
    game_id: str
    seats: list[object | None]  # the user of each seat, None for a bot
    buy_in: int
    resigned: set[int] = field(default_factory=set)


class Economy(RuleBasedStateMachine):
    """The model: each player's available chips and chips in play, and the running tables."""

    def __init__(self) -> None:
        super().__init__()
        # Each example starts from the same database: its writes are rolled back at teardown.
        self.atomic = transaction.atomic()
        self.atomic.__enter__()
        self.users: list = []
        self.deleted: set[int] = set()
        self.available: dict[int, int] = {}
        self.in_play: dict[int, int] = {}
        self.claimed: set[tuple[int, int]] = set()
        self.tables: list[Table] = []
        self.house = ledger.house_balance()

    def live(self) -> list:
        return [u for u in self.users if u.pk not in self.deleted]

    def table(self, pick: int) -> Table | None:
        """The running table ``pick`` names (None when none runs). How many tables run depends
        on the shuffles (a start is refused for want of chips the last matches took), so it
        decides neither which rules may run nor the range of a draw: Hypothesis replays a
        history only if its draws are the same whatever the matches dealt."""
        return self.tables[pick % len(self.tables)] if self.tables else None

    @initialize()
    def two_players(self) -> None:
        self.sign_up()
        self.sign_up()

    @rule()
    def sign_up(self) -> None:
        user, _, _ = user_register(username=f"econ{next(_names)}", password=DEFAULT_PASSWORD)
        self.users.append(user)
        self.available[user.pk], self.in_play[user.pk] = GRANT, 0
        self.house -= GRANT

    @rule(data=st.data(), day=st.integers(0, 3))
    def daily_bonus(self, data, day) -> None:
        user = data.draw(st.sampled_from(self.live()))
        now = DAY0 + timedelta(days=day)
        try:
            services.daily_bonus_claim(user_id=user.pk, now=now)
        except AlreadyClaimed:
            assert (user.pk, day) in self.claimed
            return
        assert (user.pk, day) not in self.claimed
        self.claimed.add((user.pk, day))
        self.available[user.pk] += BONUS
        self.house -= BONUS

    @rule(data=st.data(), amount=st.integers(-1500, 1500).filter(bool))
    def adjustment(self, data, amount) -> None:
        user = data.draw(st.sampled_from(self.live()))
        try:
            services.adjust(user_id=user.pk, amount=amount, reason="property", staff_id=None)
        except InsufficientChips:
            assert self.available[user.pk] + amount < 0
            return
        self.available[user.pk] += amount
        self.house -= amount

    @rule(data=st.data(), humans=st.integers(1, 3), buy_in=st.sampled_from(BUY_INS))
    def start_a_table(self, data, humans, buy_in) -> None:
        people = self.live()
        if len(people) < humans:
            return
        chosen = data.draw(st.permutations(people)).copy()[:humans]
        seats = chosen + [None] * (3 - humans)
        owner, *others = chosen
        specs = [{"kind": "user"}]
        specs += [{"kind": "user", "username": u.username} for u in others]
        specs += [{"kind": "bot", "level": "easy"}] * (3 - humans)
        short = any(self.available[u.pk] < buy_in for u in chosen)
        try:
            game = lobby.table_create(
                user=owner, rules=RULES, seats=specs, rated=False, buy_in=buy_in
            )
            for other in others:
                lobby.table_respond(game_id=game.pk, user=other, accept=True)
            if others:
                lobby.table_start(game_id=game.pk, user=owner)
        except InsufficientChips:
            assert short
            event("a start refused for want of chips")
            return
        assert not short
        event("a table started" + (" for chips" if buy_in else ""))
        for user in chosen:
            self.available[user.pk] -= buy_in
            self.in_play[user.pk] += buy_in
        self.house -= buy_in * (3 - humans)
        self.tables.append(Table(str(game.pk), seats, buy_in))

    def _close(self, table: Table, paid: list[int] | None) -> None:
        self.tables.remove(table)
        for seat, user in enumerate(table.seats):
            back = table.buy_in + (0 if paid is None else paid[seat])
            if user is None:
                self.house += back
                continue
            self.in_play[user.pk] -= table.buy_in
            if user.pk in self.deleted:
                self.house += back  # a deleted account's payout follows its chips
            else:
                self.available[user.pk] += back

    @rule(pick=TABLE_PICKS)
    def finish(self, pick) -> None:
        table = self.table(pick)
        if table is None:
            return
        play_to_the_end(table.game_id, dict(enumerate(table.seats)), seed=len(self.tables))
        self._settle_finished(table)

    def _settle_finished(self, table: Table) -> None:
        owed = list(store.load(table.game_id).chips)
        assert settle(table.game_id) == "settled"
        paid = table_stakes(owed, [table.buy_in] * 3)
        event("a match finished" + (" (capped)" if paid != owed else ""))
        self._close(table, paid)

    @rule(pick=TABLE_PICKS)
    def abort(self, pick) -> None:
        table = self.table(pick)
        if table is None:
            return
        version = store.read(table.game_id).version
        if play.abort_idle(game_id=table.game_id, expected_version=version) != "done":
            # Resigned seats, played at once by the server, may have ended the match already
            # (one round wins it): then it is settled as a finished match.
            assert store.read(table.game_id).status == "finished"
            self._settle_finished(table)
            return
        settle(table.game_id)
        event("a match aborted")
        self._close(table, None)

    @rule(pick=TABLE_PICKS, seat=st.sampled_from([0, 1, 2]))
    def resign(self, pick, seat) -> None:
        table = self.table(pick)
        user = None if table is None else table.seats[seat]
        # Whether a match has ended by itself depends on its shuffles: looked at after the draws.
        if user is None or seat in table.resigned or store.read(table.game_id).status != "active":
            return
        play.resign(table.game_id, user.pk)
        table.resigned.add(seat)
        event("a player resigned")

    @precondition(lambda self: len(self.live()) > 2)
    @rule(data=st.data())
    def delete_an_account(self, data) -> None:
        user = data.draw(st.sampled_from(self.live()))
        account_delete(user=user, password=DEFAULT_PASSWORD)
        event("an account deleted")
        self.deleted.add(user.pk)
        self.house += self.available[user.pk]
        self.available[user.pk] = 0
        for table in self.tables:
            if user in table.seats:
                table.resigned.add(table.seats.index(user))

    def teardown(self) -> None:
        transaction.set_rollback(True)
        self.atomic.__exit__(None, None, None)

    @invariant()
    def the_ledger_is_sound_and_matches_the_model(self) -> None:
        raw("SET CONSTRAINTS ALL IMMEDIATE")  # the database's own check that entries balance
        raw("SET CONSTRAINTS ALL DEFERRED")
        assert_sound()
        for user in self.users:
            assert available(user) == self.available[user.pk], user
            assert in_play(user) == self.in_play[user.pk], user
        assert ledger.house_balance() == self.house


@pytest.fixture
def economy_settings(settings):
    settings.TONGITS_SIGNUP_GRANT = GRANT
    settings.TONGITS_DAILY_BONUS = BONUS
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def test_random_histories_keep_the_ledger_sound(economy_settings):
    SEEN.clear()
    run_state_machine_as_test(
        Economy,
        settings=settings(
            max_examples=40,
            stateful_step_count=15,
            deadline=None,
            # The same histories every run (each still deals its own shuffles): the coverage
            # checked below does not depend on luck.
            derandomize=True,
            database=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        ),
    )
    # The histories went everywhere the ledger can go.
    for what in (
        "a table started for chips",
        "a start refused for want of chips",
        "a match finished",
        "a match finished (capped)",
        "a match aborted",
        "a player resigned",
        "an account deleted",
    ):
        assert SEEN[what], (what, dict(SEEN))
