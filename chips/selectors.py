"""Reads of the chips ledger (selectors read, services write): a wallet, its statement, a table's
settlement, the chips leaderboard, an account's export."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import F, QuerySet
from django.urls import reverse
from django.utils import timezone

from chips import ledger, services
from chips.models import Account, Balance, Entry, Posting
from core import prepared


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


# ---------------------------------------------------------------- a wallet


# Every lobby and wallet screen reads it: one prepared statement.
_WALLET = """
SELECT b.balance, b.in_play, b.bonus_day, a.listed,
    (SELECT -d.balance FROM chips_account da JOIN chips_balance d ON d.account_id = da.id
     WHERE da.kind = 'debt' AND da.user_id = a.user_id)
FROM chips_account a JOIN chips_balance b ON b.account_id = a.id
WHERE a.kind = 'wallet' AND a.user_id = %(user)s
"""


def wallet(*, user_id: int, now: datetime | None = None) -> dict[str, Any]:
    """The user's chips: ``available`` (in the wallet, what a buy-in can take), ``in_play`` (in
    the escrows of matches not settled yet), ``balance`` (both), ``owed`` (what a refunded
    purchase left them owing the house), and the daily bonus's state.
    Opens the wallet (with its sign-up grant) for an account older than the ledger."""
    row = prepared.fetch_one(_WALLET, {"user": user_id})
    if row is None:
        services.open_wallet(user_id)
        row = prepared.fetch_one(_WALLET, {"user": user_id})
    balance, in_play, bonus_day, listed, owed = row  # type: ignore[misc]
    now = now or timezone.now()
    bonus = settings.TONGITS_DAILY_BONUS
    claimed = bonus_day is not None and bonus_day >= services.bonus_day(now)
    return {
        "balance": balance + in_play,
        "available": balance,
        "in_play": in_play,
        "owed": owed or 0,
        "listed": listed,
        "daily_bonus": {
            "amount": bonus,
            "available": bonus > 0 and not claimed and not owed,
            "next_at": _iso(services.next_bonus_at(now)) if claimed else _iso(now),
        },
    }


def statement(*, user_id: int) -> QuerySet[Posting]:
    """The user's wallet postings, newest first (the cursor pages of ``/me/wallet/entries``)."""
    return (
        Posting.objects.filter(account__kind=Account.Kind.WALLET, account__user_id=user_id)
        .select_related("entry")
        .order_by("-id")
    )


def statement_item(posting: Posting) -> dict[str, Any]:
    """One line of a wallet's statement: the entry, this wallet's side of it, the balance after."""
    entry = posting.entry
    settled = entry.cause in (Entry.Cause.PAYOUT, Entry.Cause.REFUND)
    return {
        "id": entry.pk,
        "created_at": entry.created_at,
        "cause": entry.cause,
        "amount": posting.amount,
        # A settlement pays the buy-in back with the result: the result alone, won or lost.
        "match_result": posting.amount - entry.data.get("buy_in", 0) if settled else None,
        "balance_after": posting.balance_after,
        "game_id": entry.game_id,
        # The match's detail (its result and settlement); the route is the public match API's.
        "match": reverse("match-detail", kwargs={"game_id": entry.game_id})
        if entry.game_id
        else None,
        "reason": entry.reason,
    }


def export(*, user_id: int) -> dict[str, Any]:
    """The user's wallet and every entry of it, oldest first (``/me/export``)."""
    if ledger.wallet_of(user_id) is None:
        return {"wallet": None, "entries": []}
    rows = statement(user_id=user_id).order_by("id")
    return {
        "wallet": wallet(user_id=user_id),
        "entries": [statement_item(p) for p in rows.iterator(chunk_size=500)],
    }


# ---------------------------------------------------------------- a table


@dataclass(frozen=True)
class Booked:
    """One entry of a table: its cause and each account's side of it."""

    id: int
    cause: str
    created_at: datetime
    postings: dict[int, int]
    escrow: int
    data: dict[str, Any]


def table_entries(game_id: uuid.UUID | str) -> dict[str, Booked]:
    """The ledger's entries about one table, by cause (buy_in, payout, refund)."""
    escrow = ledger.escrow_of(game_id)
    out: dict[str, Booked] = {}
    entries = Entry.objects.filter(game_id=game_id).prefetch_related("postings")
    for entry in entries.order_by("id"):
        postings = {p.account_id: p.amount for p in entry.postings.all()}
        out[entry.cause] = Booked(
            entry.pk,
            entry.cause,
            entry.created_at,
            postings,
            postings.get(escrow, 0) if escrow is not None else 0,
            entry.data,
        )
    return out


def seat_accounts(seats: Sequence[int | None]) -> list[int | None]:
    """The account each seat pays from and is paid to: a person's wallet, the house for a bot."""
    house = ledger.house_id()
    return [house if owner is None else ledger.wallet_of(owner) for owner in seats]


def per_account(seats: Sequence[int | None], amounts: Sequence[int]) -> dict[int | None, int]:
    """Amounts per seat summed per account (two bots share the house's posting)."""
    out: dict[int | None, int] = defaultdict(int)
    for account, amount in zip(seat_accounts(seats), amounts, strict=True):
        out[account] += amount
    return {a: m for a, m in out.items() if m}


def settlement(*, game_id: uuid.UUID | str) -> dict[str, Any] | None:
    """A table's chips as the ledger holds them: the buy-in, then (once settled) what the rules
    said each seat owed or was owed, what was paid, and whether the table-stakes cap cut it.
    None for a table with nothing at stake."""
    booked = table_entries(game_id)
    buy_in = booked.get("buy_in")
    if buy_in is None:
        return None
    done = booked.get("payout") or booked.get("refund")
    data = done.data if done else {}
    fee = booked.get("service_fee")
    paid = data.get("paid")
    fees = fee.data.get("fees") if fee else None
    if paid is not None and done is not None and done.cause == "payout" and fees is None:
        fees = [0] * len(paid)
    return {
        "buy_in": buy_in.data.get("buy_in"),
        "escrowed": buy_in.escrow,
        "settled": done is not None,
        "kind": done.cause if done else None,
        "owed": data.get("owed"),
        "paid": paid,
        "capped": data.get("capped", False),
        "fee_percent": data.get("fee_percent", 0),
        "fees": fees,
        "net": [p - f for p, f in zip(paid, fees, strict=True)] if paid and fees else None,
        "entries": [
            {"id": b.id, "cause": b.cause, "created_at": b.created_at}
            for b in sorted(booked.values(), key=lambda b: b.id)
        ],
    }


# ---------------------------------------------------------------- the house

_HOUSE_DAYS = """
SELECT (e.created_at AT TIME ZONE 'UTC')::date AS day, e.cause, sum(p.amount)
FROM chips_posting p JOIN chips_entry e ON e.id = p.entry_id
WHERE p.account_id = %(house)s
GROUP BY 1, 2 ORDER BY 1, 2
"""


def house(*, days: int = 30) -> dict[str, Any]:
    """The house's balance now and over its last ``days`` days of activity: per UTC day what
    each cause moved in (+) or out (-) of it and the balance at the day's end (staff only)."""
    with connection.cursor() as cursor:
        cursor.execute(_HOUSE_DAYS, {"house": ledger.house_id()})
        rows = cursor.fetchall()
    per_day: dict[Any, dict[str, int]] = defaultdict(dict)
    for day, cause, amount in rows:
        per_day[day][cause] = int(amount)
    running = 0
    history = []
    for day in sorted(per_day):
        running += sum(per_day[day].values())
        history.append({"day": day, "causes": per_day[day], "balance": running})
    return {"balance": running, "days": history[-days:] if days else []}


# ---------------------------------------------------------------- the leaderboard


def leaderboard() -> QuerySet[Balance]:
    """Wallets whose owners chose to be listed, richest first (chips in play count)."""
    return (
        Balance.objects.filter(
            account__kind=Account.Kind.WALLET,
            account__listed=True,
            account__closed_at__isnull=True,
            account__user__is_active=True,
        )
        .annotate(total=F("balance") + F("in_play"))
        .select_related("account__user")
        .order_by("-total", "account_id")
    )


def listed_chips(user_ids: Sequence[int]) -> dict[int, int]:
    """The chips of those of these players who chose to be listed."""
    rows = leaderboard().filter(account__user_id__in=list(user_ids))
    return dict(rows.values_list("account__user_id", "total"))
