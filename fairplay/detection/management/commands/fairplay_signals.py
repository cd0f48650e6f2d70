"""``manage.py fairplay_signals [--check]``: the detection's projections again from the logs."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from fairplay.detection import projections


class Command(BaseCommand):
    help = (
        "Score every settled match again from the games' event log and the chips ledger alone "
        "and replace the fair-play signals (scored matches, pair sums) with the result, in one "
        "transaction; with --check change nothing and exit 1 if the live ones differ. Flags "
        "already raised are not raised again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check",
            action="store_true",
            help="Change nothing: exit 1 if the live projections differ from a rebuild.",
        )
        parser.add_argument("--no-progress", action="store_true", help="No progress bar.")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.process_time()

        def progress(games: Iterable[Any], total: int) -> Iterable[Any]:
            return tqdm(games, total=total, unit="match", desc="score", file=self.stderr._out)

        bar = None if options["no_progress"] else progress
        found = projections.differences(bar) if options["check"] else projections.rebuild(bar)
        for diff in found:
            self.stdout.write(f"{diff.what} {diff.key}: was {diff.live}, rebuilt {diff.rebuilt}")
        matches = len(projections.settled_matches())
        cpu = time.process_time() - started
        if options["check"] and found:
            raise CommandError(f"{len(found)} rows differ from a rebuild of {matches} matches")
        verb = "checked" if options["check"] else "rebuilt"
        self.stdout.write(
            self.style.SUCCESS(
                f"{verb} the signals of {matches} matches ({cpu:.1f} s CPU): {len(found)} differed"
            )
        )
