"""``manage.py rebuild_balances``: every wallet's and escrow's balance again from the entries."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from chips import ledger


class Command(BaseCommand):
    help = (
        "Recompute every balance row (wallets and escrows: balance, chips in play, the last "
        "daily bonus) from the ledger's entries alone, in one transaction, and report the rows "
        "that differed. The entries are the truth; the balances are their projection."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check",
            action="store_true",
            help="Change nothing: exit 1 if the live balances differ from a rebuild.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        found = ledger.differences() if options["check"] else ledger.rebuild()
        for diff in found:
            self.stdout.write(
                f"account {diff.account_id}: was {diff.live}, from the entries {diff.rebuilt}"
            )
        accounts = len(ledger.live_balances())
        if options["check"] and found:
            raise CommandError(f"{len(found)} of {accounts} balances differ from a rebuild")
        if options["check"]:
            summary = f"checked {accounts} balances: each equals a rebuild from the entries"
        else:
            summary = f"rebuilt {accounts} balances from the entries: {len(found)} differed"
        self.stdout.write(self.style.SUCCESS(summary))
