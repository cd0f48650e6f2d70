"""The chips ledger: accounts, one door for every transfer (``post``), and its invariants.

A transfer is one ``chips_entry`` row with its ``chips_posting`` rows, written with the balances
they change in one transaction (the caller's, when there is one, so a table's buy-ins commit
with its ``game_started``):

1. lock the balance rows of the accounts it touches, in account-id order (every transfer locks
   in the same order, so two never deadlock), and refuse (``Short``, having written nothing) if
   one would go below zero; the CHECK on ``chips_balance`` backs this up. A key posted before
   means the cause has already been paid: nothing more happens (``Posted.created`` is False);
2. insert the entry, ``ON CONFLICT (key) DO NOTHING``, the guard against a twin posting the
   same cause at the same moment;
3. insert the postings, each with the account's balance after it, and update the balances.

Two transfers from one wallet at once are serialised on that wallet's row: the second sees what
the first left and is refused if that no longer covers it, so the same chips are never spent
twice. The house has no balance row: its balance is the negation of all the others', so grants
and the bots' buy-ins wait on no shared row. A debt account (what a store refund left a player
owing) is the one kind whose balance is at or below zero: a transfer may take it further down,
never above zero.

This module knows no game and no account app: tables are UUIDs, players user ids.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from chips.models import Account, Balance
from core import prepared


class Short(Exception):
    """Some accounts cannot cover their side of a transfer (nothing was posted)."""

    def __init__(self, accounts: list[int]) -> None:
        super().__init__(f"accounts {accounts} cannot cover the transfer")
        self.accounts = accounts


@dataclass(frozen=True)
class Posted:
    """What ``post`` did: the entry's id, whether this call wrote it (False: the key had been
    posted before, by this cause), and the balances after it of the accounts it changed."""

    entry_id: int
    created: bool
    balances: dict[int, int] = field(default_factory=dict)


# ---------------------------------------------------------------- accounts

#: The house's account id (migration 0002 makes it; every entry makes it again if missing).
HOUSE = 1


def house_id() -> int:
    """The house's account: the source of grants and the bots' bankroll."""
    return HOUSE


def _ensure(kind: str, *, user_id: int | None = None, game_id: Any = None) -> tuple[int, bool]:
    """The account of this kind and owner, with its balance row; made if missing (True)."""
    if kind in (Account.Kind.WALLET, Account.Kind.DEBT, Account.Kind.HELD):
        lookup, conflict = {"user_id": user_id}, f"(user_id) WHERE kind = '{kind}'"
    else:
        lookup, conflict = {"game_id": game_id}, "(game_id) WHERE kind = 'escrow'"
    found = Account.objects.filter(kind=kind, **lookup).values_list("id", flat=True)
    existing = found.first()
    if existing is not None:
        return existing, False
    with connection.cursor() as cursor:
        cursor.execute(
            "WITH a AS (INSERT INTO chips_account (kind, user_id, game_id, created_at, listed) "
            f"VALUES (%s, %s, %s, %s, false) ON CONFLICT {conflict} DO NOTHING RETURNING id) "
            "INSERT INTO chips_balance (account_id, balance, in_play, debt) "
            "SELECT id, 0, 0, %s FROM a RETURNING account_id",
            [kind, user_id, game_id, timezone.now(), kind == Account.Kind.DEBT],
        )
        row = cursor.fetchone()
    if row is None:  # made at the same moment by another transaction
        return found.get(), False
    return row[0], True


def ensure_wallet(user_id: int) -> tuple[int, bool]:
    """A user's wallet account id, and whether it was opened now."""
    return _ensure(Account.Kind.WALLET, user_id=user_id)


def ensure_escrow(game_id: uuid.UUID | str) -> int:
    """A table's escrow account id (made on first use)."""
    return _ensure(Account.Kind.ESCROW, game_id=str(game_id))[0]


def wallet_of(user_id: int) -> int | None:
    """The user's wallet account id, or None if they never had one."""
    return (
        Account.objects.filter(kind=Account.Kind.WALLET, user_id=user_id)
        .values_list("id", flat=True)
        .first()
    )


def ensure_debt(user_id: int) -> int:
    """A user's debt account id (made the first time a store refund finds its chips spent)."""
    return _ensure(Account.Kind.DEBT, user_id=user_id)[0]


def debt_of(user_id: int) -> int | None:
    """The user's debt account id, or None if they never owed anything."""
    return (
        Account.objects.filter(kind=Account.Kind.DEBT, user_id=user_id)
        .values_list("id", flat=True)
        .first()
    )


def owed(user_id: int) -> int:
    """What the user owes the house now (0: nothing): minus their debt account's balance."""
    row = prepared.fetch_one(_OWED, {"user": user_id})
    return 0 if row is None else -int(row[0])


_OWED = """
SELECT b.balance FROM chips_account a JOIN chips_balance b ON b.account_id = a.id
WHERE a.kind = 'debt' AND a.user_id = %(user)s
"""


def ensure_held(user_id: int) -> int:
    """A user's held account id (made the first time fair play holds their winnings)."""
    return _ensure(Account.Kind.HELD, user_id=user_id)[0]


def held_of(user_id: int) -> int | None:
    """The user's held account id, or None if their winnings were never held."""
    return (
        Account.objects.filter(kind=Account.Kind.HELD, user_id=user_id)
        .values_list("id", flat=True)
        .first()
    )


def holding_of(user_id: int) -> int | None:
    """The user's held account id while a hold is on (None: their winnings go to the wallet)."""
    return (
        Account.objects.filter(kind=Account.Kind.HELD, user_id=user_id, holding=True)
        .values_list("id", flat=True)
        .first()
    )


def escrow_of(game_id: uuid.UUID | str) -> int | None:
    return (
        Account.objects.filter(kind=Account.Kind.ESCROW, game_id=game_id)
        .values_list("id", flat=True)
        .first()
    )


@dataclass(frozen=True)
class TableAccounts:
    """The accounts of a table's seats in one read: the wallet of each person (None where they
    have none yet), the table's escrow (None before its buy-ins), the closed wallets, the
    debt accounts of those who ever owed the house, and the held accounts of those whose
    winnings are held now (by user id)."""

    wallets: dict[int, int]
    escrow: int | None
    closed: frozenset[int]
    debts: dict[int, int] = field(default_factory=dict)
    held: dict[int, int] = field(default_factory=dict)


# A held account is read only while its hold is on: the settlement's one read learns of a hold
# at no extra round trip.
_TABLE_ACCOUNTS = """
SELECT id, kind, user_id, closed_at IS NOT NULL FROM chips_account
WHERE (kind IN ('wallet', 'debt') AND user_id = ANY(%(users)s))
   OR (kind = 'held' AND holding AND user_id = ANY(%(users)s))
   OR (kind = 'escrow' AND game_id = %(game)s)
"""


def table_accounts(game_id: uuid.UUID | str, user_ids: Iterable[int]) -> TableAccounts:
    rows = prepared.fetch_all(_TABLE_ACCOUNTS, {"users": list(user_ids), "game": str(game_id)})
    wallets = {user: account for account, kind, user, _ in rows if kind == "wallet"}
    debts = {user: account for account, kind, user, _ in rows if kind == "debt"}
    held = {user: account for account, kind, user, _ in rows if kind == "held"}
    escrow = next((account for account, kind, _, _ in rows if kind == "escrow"), None)
    closed = frozenset(account for account, _, _, is_closed in rows if is_closed)
    return TableAccounts(wallets, escrow, closed, debts, held)


# ---------------------------------------------------------------- the one door

# The balances a transfer touches, locked in account-id order, and whether its key was posted
# (read before the lock waits: the entry's own insert is the guard against a twin).
_LOCK = """
SELECT account_id, balance, in_play, (SELECT id FROM chips_entry WHERE key = %(key)s), debt
FROM chips_balance WHERE account_id = ANY(%(accounts)s) ORDER BY account_id FOR UPDATE
"""

_POSTED = "SELECT id FROM chips_entry WHERE key = %(key)s"

# The house is made again if a test flush emptied the table (nothing to do otherwise).
_INSERT_ENTRY = """
WITH house AS (
    INSERT INTO chips_account (id, kind, created_at, listed)
    VALUES (%(house)s, 'house', %(now)s, false) ON CONFLICT DO NOTHING
)
INSERT INTO chips_entry (cause, key, game_id, user_id, created_by_id, reason, data, created_at)
VALUES (%(cause)s, %(key)s, %(game)s, %(user)s, %(by)s, %(reason)s, %(data)s::jsonb, %(now)s)
ON CONFLICT (key) DO NOTHING
RETURNING id
"""

# The postings' insert runs whether or not the update reads it (a data-modifying WITH always
# runs to completion): one round trip for both.
_APPLY = """
WITH p AS (
    INSERT INTO chips_posting (entry_id, account_id, amount, balance_after)
    SELECT %(entry)s, a, m, b
    FROM unnest(%(legs)s::bigint[], %(amounts)s::bigint[], %(afters)s::bigint[]) AS x(a, m, b)
)
UPDATE chips_balance SET balance = x.b, in_play = chips_balance.in_play + x.i,
    bonus_day = greatest(x.d, chips_balance.bonus_day)
FROM unnest(%(tracked)s::bigint[], %(balances)s::bigint[], %(plays)s::bigint[],
            %(days)s::date[]) AS x(a, b, i, d)
WHERE chips_balance.account_id = x.a
"""


def post(
    *,
    cause: str,
    key: str,
    postings: Mapping[int, int],
    game_id: uuid.UUID | str | None = None,
    user_id: int | None = None,
    created_by_id: int | None = None,
    reason: str = "",
    data: dict[str, Any] | None = None,
    in_play: Mapping[int, int] | None = None,
    bonus_day: Mapping[int, date] | None = None,
    now: datetime | None = None,
) -> Posted:
    """Post one transfer: ``postings`` maps account ids to amounts (+ in, - out) summing to zero.

    Exactly once per ``key``: a key posted before changes nothing and answers ``created=False``.
    ``in_play`` moves wallets' chips-in-play figures (a buy-in +, its settlement -),
    ``bonus_day`` records a daily bonus's day. Raises ``Short`` (having written nothing) when a
    wallet or escrow would go below zero. Runs in the caller's transaction if there is one,
    in three round trips (lock, entry, postings and balances) and no savepoint, else in a
    transaction of its own.
    """
    amounts: dict[int, int] = defaultdict(int)
    for account, amount in postings.items():
        amounts[account] += int(amount)
    amounts = {a: m for a, m in amounts.items() if m}
    if sum(amounts.values()) != 0 or len(amounts) < 2:
        raise ValueError(f"a transfer's postings sum to zero over two accounts or more: {postings}")
    extra = dict(in_play or {})
    days = dict(bonus_day or {})
    entry = {
        "house": HOUSE,
        "cause": cause,
        "key": key,
        "game": str(game_id) if game_id else None,
        "user": user_id,
        "by": created_by_id,
        "reason": reason,
        "data": json.dumps(data or {}, sort_keys=True),
        "now": now or timezone.now(),
    }
    if not connection.in_atomic_block:  # its own transaction: the locks last until the write
        with transaction.atomic():
            return _post(entry, amounts, extra, days)
    # In the caller's: no savepoint, and a refusal is raised before anything is written.
    return _post(entry, amounts, extra, days)


def _post(
    entry: dict[str, Any], amounts: dict[int, int], extra: dict[int, int], days: dict[int, date]
) -> Posted:
    """``post``'s statements, given the entry's row (``_INSERT_ENTRY``'s parameters)."""
    key = entry["key"]
    tracked = sorted((set(amounts) | set(extra) | set(days)) - {HOUSE})
    rows = prepared.fetch_all(_LOCK, {"key": key, "accounts": tracked})
    posted = next((row[3] for row in rows if row[3] is not None), None)
    if posted is not None:
        return Posted(posted, False)
    current = {a: (b, i) for a, b, i, _, _ in rows}
    debts = {a for a, _, _, _, debt in rows if debt}
    missing = [a for a in tracked if a not in current]
    if missing:
        raise ValueError(f"accounts {missing} have no balance row (only the house has none)")
    over = [a for a in debts if current[a][0] + amounts.get(a, 0) > 0]
    if over:
        raise ValueError(f"debt accounts {over} would be owed chips: repay no more than is owed")
    short = [a for a in tracked if a not in debts and current[a][0] + amounts.get(a, 0) < 0]
    if short:
        twin = prepared.fetch_one(_POSTED, {"key": key})  # posted while we waited
        if twin is not None:
            return Posted(twin[0], False)
        raise Short(short)
    row = prepared.fetch_one(_INSERT_ENTRY, entry)
    if row is None:  # a twin committed it between our lock and our insert
        return Posted(prepared.fetch_one(_POSTED, {"key": key})[0], False)  # type: ignore[index]
    after = {a: current[a][0] + amounts.get(a, 0) for a in tracked}
    legs = sorted(amounts)
    prepared.fetch_all(
        _APPLY,
        {
            "entry": row[0],
            "legs": legs,
            "amounts": [amounts[a] for a in legs],
            "afters": [after.get(a) for a in legs],
            "tracked": tracked,
            "balances": [after[a] for a in tracked],
            "plays": [extra.get(a, 0) for a in tracked],
            "days": [days.get(a) for a in tracked],
        },
    )
    return Posted(row[0], True, after)


# ---------------------------------------------------------------- reads


def balances(accounts: Iterable[int]) -> dict[int, int]:
    """The projected balances of these accounts (the house: its derived balance; a debt: minus
    what is owed)."""
    wanted = list(accounts)
    out = dict(Balance.objects.filter(account_id__in=wanted).values_list("account_id", "balance"))
    house = house_id()
    if house in wanted:
        out[house] = house_balance()
    return out


def house_balance() -> int:
    """What the house holds: minus every other account's chips (the ledger sums to zero)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(amount), 0) FROM chips_posting p JOIN chips_account a "
            "ON a.id = p.account_id WHERE a.kind = 'house'"
        )
        return int(cursor.fetchone()[0])


# ---------------------------------------------------------------- rebuild and invariants


_REBUILT = """
WITH sums AS (
    SELECT p.account_id, sum(p.amount) AS balance FROM chips_posting p GROUP BY p.account_id
),
settled AS (
    SELECT DISTINCT game_id FROM chips_entry WHERE cause IN ('payout', 'refund')
),
play AS (
    SELECT p.account_id, -sum(p.amount) AS in_play
    FROM chips_posting p JOIN chips_entry e ON e.id = p.entry_id
    JOIN chips_account a ON a.id = p.account_id AND a.kind = 'wallet'
    WHERE e.cause = 'buy_in' AND e.game_id NOT IN (SELECT game_id FROM settled)
    GROUP BY p.account_id
),
bonus AS (
    SELECT p.account_id, max((e.data ->> 'day')::date) AS bonus_day
    FROM chips_posting p JOIN chips_entry e ON e.id = p.entry_id
    WHERE e.cause = 'daily_bonus' GROUP BY p.account_id
)
SELECT a.id, coalesce(s.balance, 0), coalesce(pl.in_play, 0), b.bonus_day
FROM chips_account a
LEFT JOIN sums s ON s.account_id = a.id
LEFT JOIN play pl ON pl.account_id = a.id
LEFT JOIN bonus b ON b.account_id = a.id
WHERE a.kind <> 'house'
ORDER BY a.id
"""


@dataclass(frozen=True)
class Difference:
    """An account whose projected row differs from the one rebuilt from the entries."""

    account_id: int
    live: tuple[int, int, date | None] | None
    rebuilt: tuple[int, int, date | None]


def rebuilt_balances() -> dict[int, tuple[int, int, date | None]]:
    """Every wallet's and escrow's (balance, in_play, bonus_day) from the entries alone."""
    with connection.cursor() as cursor:
        cursor.execute(_REBUILT)
        return {a: (int(b), int(i), d) for a, b, i, d in cursor.fetchall()}


def live_balances() -> dict[int, tuple[int, int, date | None]]:
    rows = Balance.objects.values_list("account_id", "balance", "in_play", "bonus_day")
    return {a: (b, i, d) for a, b, i, d in rows}


def differences() -> list[Difference]:
    """Where the live projection and a rebuild disagree (nothing, when all is well)."""
    rebuilt, live = rebuilt_balances(), live_balances()
    out = [Difference(a, live.get(a), row) for a, row in rebuilt.items() if live.get(a) != row]
    out += [Difference(a, row, (0, 0, None)) for a, row in live.items() if a not in rebuilt]
    return out


@transaction.atomic
def rebuild() -> list[Difference]:
    """Rewrite every balance row from the entries (``manage.py rebuild_balances``); returns what
    was different before. Locks the balances for the transaction, so no transfer interleaves."""
    with connection.cursor() as cursor:
        cursor.execute("LOCK TABLE chips_balance IN EXCLUSIVE MODE")
    found = differences()
    rebuilt = rebuilt_balances()
    Balance.objects.exclude(account_id__in=list(rebuilt)).delete()
    debts = set(Account.objects.filter(kind=Account.Kind.DEBT).values_list("id", flat=True))
    for account_id, (balance, in_play, day) in rebuilt.items():
        Balance.objects.update_or_create(
            account_id=account_id,
            defaults={
                "balance": balance,
                "in_play": in_play,
                "bonus_day": day,
                "debt": account_id in debts,
            },
        )
    return found


def problems() -> list[str]:
    """The ledger's own invariants, each broken one as a sentence (none: all hold):

    every entry sums to zero over two postings or more; the whole ledger sums to zero; each
    posting's ``balance_after`` is its account's running sum; no wallet or escrow is negative
    and no debt positive; the projection equals a rebuild; each settled table's escrow is empty;
    and the checks registered by other apps (``register_check``: the stores' payloads) pass.
    """
    out: list[str] = []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT e.id, coalesce(sum(p.amount), 0), count(p.id) FROM chips_entry e "
            "LEFT JOIN chips_posting p ON p.entry_id = e.id GROUP BY e.id "
            "HAVING coalesce(sum(p.amount), 0) <> 0 OR count(p.id) < 2 ORDER BY e.id"
        )
        for entry_id, total, legs in cursor.fetchall():
            out.append(f"entry {entry_id} does not balance: {legs} postings summing to {total}")
        cursor.execute("SELECT coalesce(sum(amount), 0) FROM chips_posting")
        total = int(cursor.fetchone()[0])
        if total:
            out.append(f"the ledger sums to {total}, not 0")
        cursor.execute(
            "SELECT id, account_id, balance_after, running FROM ("
            "  SELECT p.id, p.account_id, p.balance_after,"
            "         sum(p.amount) OVER (PARTITION BY p.account_id ORDER BY p.id) AS running"
            "  FROM chips_posting p JOIN chips_account a ON a.id = p.account_id"
            "  WHERE a.kind <> 'house') r "
            "WHERE balance_after IS DISTINCT FROM running ORDER BY id LIMIT 20"
        )
        for posting_id, account_id, after, running in cursor.fetchall():
            out.append(
                f"posting {posting_id} of account {account_id} says {after} after it, "
                f"the running sum is {running}"
            )
        cursor.execute(
            "SELECT b.account_id, b.balance, a.kind FROM chips_balance b JOIN chips_account a "
            "ON a.id = b.account_id WHERE ((b.balance < 0 OR b.in_play < 0) AND a.kind <> 'debt') "
            "OR (b.balance > 0 AND a.kind = 'debt') OR (b.debt <> (a.kind = 'debt'))"
        )
        for account_id, balance, kind in cursor.fetchall():
            sign = "positive" if kind == "debt" else "negative"
            out.append(f"{kind} account {account_id} is {sign}: {balance}")
        cursor.execute(
            "SELECT a.game_id, b.balance FROM chips_account a JOIN chips_balance b "
            "ON b.account_id = a.id WHERE a.kind = 'escrow' AND b.balance <> 0 AND a.game_id IN "
            "(SELECT game_id FROM chips_entry WHERE cause IN ('payout', 'refund'))"
        )
        for game_id, balance in cursor.fetchall():
            out.append(f"the escrow of settled table {game_id} still holds {balance}")
    for diff in differences():
        out.append(
            f"account {diff.account_id}: projected {diff.live}, rebuilt from the entries "
            f"{diff.rebuilt}"
        )
    for check in _CHECKS:
        out.extend(check())
    return out


#: Further checks of the entries, each answering its problems as sentences (``register_check``).
_CHECKS: list[Callable[[], list[str]]] = []


def register_check(check: Callable[[], list[str]]) -> None:
    """Add a check to ``problems`` (once): an app above the ledger holds the entries it caused
    against its own records, e.g. each purchase against the store payload that proved it."""
    if check not in _CHECKS:
        _CHECKS.append(check)
