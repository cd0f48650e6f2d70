"""The chips ledger: accounts, one door for every transfer (``post``), and its invariants.

A transfer is one ``chips_entry`` row with its ``chips_posting`` rows, written with the balances
they change in one transaction (the caller's, when there is one, so a table's buy-ins commit
with its ``game_started``):

1. insert the entry, ``ON CONFLICT (key) DO NOTHING``: a key already posted means the cause has
   already been paid, and nothing more happens (``Posted.created`` is False);
2. lock the balance rows of the accounts it touches, in account-id order (every transfer locks
   in the same order, so two never deadlock), and refuse (``Short``) if one would go below zero;
   the CHECK on ``chips_balance`` backs this up;
3. insert the postings, each with the account's balance after it, and update the balances.

Two transfers from one wallet at once are serialised on that wallet's row: the second sees what
the first left and is refused if that no longer covers it, so the same chips are never spent
twice. The house has no balance row: its balance is the negation of all the others', so grants
and the bots' buy-ins wait on no shared row.

This module knows no game and no account app: tables are UUIDs, players user ids.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from chips.models import Account, Balance, Entry


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


def house_id() -> int:
    """The house's account (made on first use)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM chips_account WHERE kind = 'house'")
        row = cursor.fetchone()
        if row is None:
            cursor.execute(
                "INSERT INTO chips_account (kind, created_at, listed) VALUES ('house', %s, false) "
                "ON CONFLICT DO NOTHING",
                [timezone.now()],
            )
            cursor.execute("SELECT id FROM chips_account WHERE kind = 'house'")
            row = cursor.fetchone()
    return row[0]


def _ensure(kind: str, *, user_id: int | None = None, game_id: Any = None) -> tuple[int, bool]:
    """The account of this kind and owner, with its balance row; made if missing (True)."""
    if kind == Account.Kind.WALLET:
        lookup, conflict = {"user_id": user_id}, "(user_id) WHERE kind = 'wallet'"
    else:
        lookup, conflict = {"game_id": game_id}, "(game_id) WHERE kind = 'escrow'"
    found = Account.objects.filter(kind=kind, **lookup).values_list("id", flat=True).first()
    if found is not None:
        return found, False
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO chips_account (kind, user_id, game_id, created_at, listed) "
            f"VALUES (%s, %s, %s, %s, false) ON CONFLICT {conflict} DO NOTHING RETURNING id",
            [kind, user_id, game_id, timezone.now()],
        )
        row = cursor.fetchone()
        if row is None:  # made at the same moment by another transaction
            return Account.objects.filter(kind=kind, **lookup).values_list("id", flat=True)[
                0
            ], False
        cursor.execute(
            "INSERT INTO chips_balance (account_id, balance, in_play) VALUES (%s, 0, 0)", [row[0]]
        )
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


def escrow_of(game_id: uuid.UUID | str) -> int | None:
    return (
        Account.objects.filter(kind=Account.Kind.ESCROW, game_id=game_id)
        .values_list("id", flat=True)
        .first()
    )


# ---------------------------------------------------------------- the one door


_INSERT_ENTRY = """
INSERT INTO chips_entry (cause, key, game_id, user_id, created_by_id, reason, data, created_at)
VALUES (%s, %s, %s, %s, %s, %s, %s::jsonb, %s)
ON CONFLICT (key) DO NOTHING
RETURNING id
"""

_LOCK = """
SELECT account_id, balance, in_play FROM chips_balance
WHERE account_id = ANY(%s) ORDER BY account_id FOR UPDATE
"""

# The postings' insert runs whether or not the update reads it (a data-modifying WITH always
# runs to completion): one round trip for both.
_APPLY = """
WITH p AS (
    INSERT INTO chips_posting (entry_id, account_id, amount, balance_after)
    SELECT %s, a, m, b FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[]) AS x(a, m, b)
    WHERE m <> 0
    RETURNING 1
)
UPDATE chips_balance SET balance = x.b, in_play = chips_balance.in_play + x.i,
    bonus_day = greatest(x.d, chips_balance.bonus_day)
FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::date[]) AS x(a, b, i, d)
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
    ``bonus_day`` records a daily bonus's day. Raises ``Short`` (and posts nothing) when a
    wallet or escrow would go below zero. Runs in the caller's transaction if there is one.
    """
    amounts: dict[int, int] = defaultdict(int)
    for account, amount in postings.items():
        amounts[account] += int(amount)
    amounts = {a: m for a, m in amounts.items() if m}
    if sum(amounts.values()) != 0 or len(amounts) < 2:
        raise ValueError(f"a transfer's postings sum to zero over two accounts or more: {postings}")
    extra = dict(in_play or {})
    days = dict(bonus_day or {})
    house = house_id()
    tracked = sorted((set(amounts) | set(extra) | set(days)) - {house})
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            _INSERT_ENTRY,
            [
                cause,
                key,
                str(game_id) if game_id else None,
                user_id,
                created_by_id,
                reason,
                json.dumps(data or {}, sort_keys=True),
                now or timezone.now(),
            ],
        )
        row = cursor.fetchone()
        if row is None:
            return Posted(Entry.objects.filter(key=key).values_list("id", flat=True)[0], False)
        entry_id = row[0]
        cursor.execute(_LOCK, [tracked])
        current = {a: (b, i) for a, b, i in cursor.fetchall()}
        missing = [a for a in tracked if a not in current]
        if missing:
            raise ValueError(f"accounts {missing} have no balance row (only the house has none)")
        short = [a for a in tracked if current[a][0] + amounts.get(a, 0) < 0]
        if short:
            raise Short(short)
        after = {a: current[a][0] + amounts.get(a, 0) for a in tracked}
        legs = sorted(amounts)
        cursor.execute(
            _APPLY,
            [
                entry_id,
                legs,
                [amounts[a] for a in legs],
                [after.get(a) for a in legs],
                tracked,
                [after[a] for a in tracked],
                [extra.get(a, 0) for a in tracked],
                [days.get(a) for a in tracked],
            ],
        )
    return Posted(entry_id, True, after)


# ---------------------------------------------------------------- reads


def balances(accounts: Iterable[int]) -> dict[int, int]:
    """The projected balances of these accounts (the house: its derived balance)."""
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
    for account_id, (balance, in_play, day) in rebuilt.items():
        Balance.objects.update_or_create(
            account_id=account_id,
            defaults={"balance": balance, "in_play": in_play, "bonus_day": day},
        )
    return found


def problems() -> list[str]:
    """The ledger's own invariants, each broken one as a sentence (none: all hold):

    every entry sums to zero over two postings or more; the whole ledger sums to zero; each
    posting's ``balance_after`` is its account's running sum; no wallet or escrow is negative;
    the projection equals a rebuild; each settled table's escrow is empty.
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
            "SELECT account_id, balance FROM chips_balance WHERE balance < 0 OR in_play < 0"
        )
        for account_id, balance in cursor.fetchall():
            out.append(f"account {account_id} is negative: {balance}")
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
    return out
