"""``manage.py verify_ledger``: the chips ledger's invariants, and every table's chips against
its events.

The ledger's own (``chips.ledger.problems``): every entry sums to zero over two postings or
more, the whole ledger sums to zero, each posting's balance-after is its account's running sum,
no wallet or escrow is negative, the balances equal a rebuild from the entries, a settled
table's escrow is empty. Then per table played for chips (``games.stakes.problems``): its
buy-ins are what ``game_started`` says, and once settled its payout is the table-stakes result
of its rounds' payouts (a refund, for an aborted match). Exit status 1 on any problem, so cron
or CI can alert on it; tables finished but not yet settled are counted, not failed (the
settlement task or the sweeper settles them).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from games import stakes


class Command(BaseCommand):
    help = (
        "Check the chips ledger (entries balance, the ledger sums to zero, balances equal a "
        "rebuild) and every table's buy-ins and settlement against its events."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--quiet", action="store_true", help="Print problems only.")

    def handle(self, *args: Any, **options: Any) -> None:
        found = stakes.verify_ledger()
        for line in found.problems:
            self.stdout.write(f"PROBLEM {line}")
        if found.problems:
            raise CommandError(f"{len(found.problems)} problems in the chips ledger")
        if not options["quiet"]:
            self.stdout.write(
                self.style.SUCCESS(
                    f"ledger sound: {found.entries} entries, {found.tables} tables played for "
                    f"chips checked against their events, {found.unsettled} awaiting settlement"
                )
            )
