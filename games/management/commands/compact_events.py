"""manage.py compact_events: pack finished, settled matches' events into their archive rows.

Each game in a transaction of its own (``games.archive.compact_game``): the rows' chain checked,
packed, unpacked and checked again, the archive written once, the rows deleted (the events'
trigger lets only archived rows go). A game whose chain does not verify is left as it is and
named, and the exit status is then 1, as ``verify_events``'s. Beat runs the same work every ten
minutes (``games.tasks.compact_events``); ``--min-age`` (by default
``TONGITS_COMPACT_AFTER_SECONDS``, an hour) leaves recently settled matches to the readers that
follow the rows as they are appended (the notifier, open streams).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from games import archive


class Command(BaseCommand):
    help = "Pack the events of finished, settled matches into one compressed archive row each."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--min-age",
            type=float,
            default=None,
            help="Seconds a match must have been settled (default TONGITS_COMPACT_AFTER_SECONDS).",
        )
        parser.add_argument("--limit", type=int, default=None, help="At most this many games.")

    def handle(self, *args: Any, **options: Any) -> None:
        min_age = options["min_age"]
        if min_age is None:
            min_age = settings.TONGITS_COMPACT_AFTER_SECONDS
        games = archive.compactable(timedelta(seconds=min_age), options["limit"])
        outcomes: dict[str, int] = {}
        broken = []
        for game_id in games:
            outcome = archive.compact_game(game_id)
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            if outcome == "broken":
                broken.append(game_id)
                self.stdout.write(f"BROKEN game {game_id}: its chain does not verify; not packed")
        summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items()))
        if broken:
            raise CommandError(f"{len(broken)} of {len(games)} games not packed: {summary}")
        if options["verbosity"] >= 1:
            self.stdout.write(f"{len(games)} games: {summary or 'nothing to pack'}")
