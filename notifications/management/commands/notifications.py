"""``manage.py notifications rebuild [--check]``: the inbox against the logs it comes from."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from notifications import rebuild


class Command(BaseCommand):
    help = (
        "rebuild: project the games' and chips' logs from their start and add any notification "
        "missing; --check: compare only (exit 1 when the inbox differs)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("action", choices=["rebuild"])
        parser.add_argument("--check", action="store_true", help="Compare; change nothing.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["check"]:
            diff = rebuild.check()
            if not diff.same:
                for row in sorted(diff.missing, key=repr)[:20]:
                    self.stderr.write(f"missing: {row}")
                for row in sorted(diff.extra, key=repr)[:20]:
                    self.stderr.write(f"extra: {row}")
                raise CommandError(
                    f"the inbox differs from the logs: {len(diff.missing)} missing, "
                    f"{len(diff.extra)} extra"
                )
            self.stdout.write("the inbox equals a projection of the logs")
            return
        added = rebuild.repair()
        self.stdout.write(f"{added} notifications added")
