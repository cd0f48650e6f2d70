"""``manage.py rebuild_projections``: match history, stats and ratings again from the event log."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from django.core.management.base import BaseCommand
from tqdm import tqdm

from accounts import projections


class Command(BaseCommand):
    help = (
        "Empty every projection of accounts (match records, player matches, player stats and "
        "ratings) and rebuild it from the games' event log alone, in match-end order, in one "
        "transaction. Running it twice gives the same rows."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--no-progress", action="store_true", help="No progress bar.")

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()

        def progress(games: Iterable[Any], total: int) -> Iterable[Any]:
            return tqdm(games, total=total, unit="match", desc="rebuild", file=self.stderr._out)

        done = projections.rebuild(progress=None if options["no_progress"] else progress)
        self.stdout.write(
            f"rebuilt the projections of {done} matches in {time.monotonic() - started:.1f}s"
        )
