"""What a table's chips must be, from its events alone: the checks of ``manage.py
verify_ledger`` and of a game's audit.

A table played for chips says everything in its own log: ``game_started`` records the seats and
the ``buy_in``, each ``round_ended`` its payouts, and ``match_ended`` / ``aborted`` how it ended.
``expected`` reads those events (never the snapshot or the game row) and applies the
table-stakes rule (``games.rules.table_stakes``); ``problems`` holds the ledger's entries for the
table against that; ``verify_ledger`` adds the ledger's own invariants
(``chips.ledger.problems``) and covers every table.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from chips import ledger
from chips import selectors as chips_selectors
from chips.models import Entry
from chips.services import service_fees
from games import store
from games.models import Game
from games.rules import table_stakes


def seat_owners(seats: Any) -> list[int | None]:
    """Each seat's owner for the ledger: a person's user id, None for a bot (the house)."""
    return [None if s.get("kind") == "bot" else s.get("user_id") for s in seats]


@dataclass(frozen=True)
class Expected:
    """A table's chips as its events say: who sat where, the buy-in, and (once the match is
    over) what each seat is owed by the rules and paid under table stakes."""

    game_id: str
    seats: list[int | None]
    buy_in: int
    over: str | None  # "match_ended" | "aborted" | None (still running)
    owed: list[int]
    paid: list[int] | None
    fee_percent: int = 0
    fees: list[int] | None = None


def expected(game_id: uuid.UUID | str) -> Expected | None:
    """What the ledger must hold for this table, from its events alone (None: no chips)."""
    rows = store.load_events(
        game_id, types=("game_started", "round_ended", "match_ended", "aborted")
    )
    started: dict[str, Any] | None = None
    owed = [0, 0, 0]
    over = None
    for event_type, data in ((row.type, row.data) for row in rows):
        if event_type == "game_started":
            started = data
        elif event_type == "round_ended":
            owed = [o + p for o, p in zip(owed, data.get("payouts", [0, 0, 0]), strict=True)]
        else:
            over = event_type
    if started is None or not started.get("buy_in"):
        return None
    buy_in = int(started["buy_in"])
    fee_percent = int(started.get("fee_percent", 0))
    seats = seat_owners(started.get("seats", []))
    paid = fees = None
    if over == "match_ended":
        paid = table_stakes(owed, [buy_in] * 3)
        fees = service_fees(seats, paid, fee_percent)
    elif over == "aborted":
        paid = [0, 0, 0]
    return Expected(str(game_id), seats, buy_in, over, owed, paid, fee_percent, fees)


def problems(game_id: uuid.UUID | str) -> list[str]:
    """How the ledger's entries for this table differ from what its events say (none: sound).

    The buy-ins: each seat's ``-buy_in`` (a bot's from the house) into the escrow. Once settled,
    each seat's buy-in plus its table-stakes result (a refund: the buy-in) out of it, and, at a
    table with a service fee, each winner's fee from their wallet to the house.
    """
    want = expected(game_id)
    booked = chips_selectors.table_entries(game_id)
    if want is None:
        return [f"table {game_id} has chips entries but no buy-in"] if booked else []
    out = []
    escrow = ledger.escrow_of(game_id)
    buy_in = booked.get("buy_in")
    stakes = chips_selectors.per_account(want.seats, [-want.buy_in] * 3)
    stakes[escrow] = 3 * want.buy_in
    if buy_in is None:
        out.append(f"table {game_id}: no buy_in entry")
    elif buy_in.postings != stakes:
        out.append(f"table {game_id}: buy-ins {buy_in.postings}, the events say {stakes}")
    settled = booked.get("payout") or booked.get("refund")
    if want.paid is None:
        if settled is not None:
            out.append(f"table {game_id}: settled while its match runs")
        return out
    if settled is None:
        return out  # not settled yet (the task, or the sweeper, will): not a mismatch
    cause = "refund" if want.over == "aborted" else "payout"
    if settled.cause != cause:
        out.append(f"table {game_id}: a {settled.cause}, the events say {cause}")
    paid_out = chips_selectors.per_account(want.seats, [want.buy_in + p for p in want.paid])
    paid_out[escrow] = -3 * want.buy_in
    if settled.postings != paid_out:
        out.append(
            f"table {game_id}: paid out {settled.postings}, the events say {paid_out} "
            f"(owed {want.owed}, table stakes {want.paid}, buy-in {want.buy_in})"
        )
    fee = booked.get("service_fee")
    if want.fees and any(want.fees):
        fees = chips_selectors.per_account(want.seats, [-f for f in want.fees])
        fees[ledger.house_id()] = fees.get(ledger.house_id(), 0) + sum(want.fees)
        fees = {a: m for a, m in fees.items() if m}
        if fee is None:
            out.append(f"table {game_id}: no service_fee entry, the events say {fees}")
        elif fee.postings != fees:
            out.append(
                f"table {game_id}: service fee {fee.postings}, the events say {fees} "
                f"({want.fee_percent} % of {want.paid})"
            )
    elif fee is not None:
        out.append(f"table {game_id}: a service fee {fee.postings}, the events say none")
    return out


def unsettled_tables() -> list[uuid.UUID]:
    """Finished or aborted tables with chips at stake that are not settled yet."""
    qs = Game.objects.filter(
        buy_in__gt=0,
        settled_at__isnull=True,
        status__in=(Game.Status.FINISHED, Game.Status.ABORTED),
    )
    return list(qs.values_list("pk", flat=True))


def tables_with_stakes() -> list[uuid.UUID]:
    """Every started table played for chips (the ones ``verify_ledger`` checks)."""
    qs = Game.objects.filter(buy_in__gt=0, version__gt=0)
    return list(qs.order_by("created_at").values_list("pk", flat=True))


@dataclass(frozen=True)
class Verified:
    """What ``verify_ledger`` found: every problem as a sentence, and what it looked at."""

    problems: list[str]
    entries: int
    tables: int
    unsettled: int


def verify_ledger() -> Verified:
    """The ledger's own invariants (``chips.ledger.problems``) and, for every table played for
    chips (or named by an entry), its buy-ins and settlement against its events."""
    found = ledger.problems()
    tables = set(tables_with_stakes())
    tables.update(Entry.objects.filter(game_id__isnull=False).values_list("game_id", flat=True))
    for game_id in sorted(tables, key=str):
        found.extend(problems(game_id))
    return Verified(found, Entry.objects.count(), len(tables), len(unsettled_tables()))
