"""manage.py verify_events: check every game as ``/audit`` does and name the first bad seq.

The hash chain, then a re-fold from the first event that checks each event is what the rules
give (deals and their commitments, the 52 cards), then a finished match's seal
(``games.selectors.soundness``, the checks of the offline verifier). Exit status 0 when every
game is sound, 1 when any is not, so cron or CI can alert on it.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from games import seal, selectors
from games.models import Game


class Command(BaseCommand):
    help = (
        "Verify every game's hash chain, the legality of its events and its seal; report the "
        "first bad seq per game."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("game_ids", nargs="*", help="Only these games (default: all).")
        parser.add_argument(
            "--seal-missing",
            action="store_true",
            help="First seal the finished matches that have no seal (those that ended before "
            "seals existed), as they are now.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        games = Game.objects.order_by("created_at", "id")
        if options["game_ids"]:
            try:
                ids = [uuid.UUID(value) for value in options["game_ids"]]
            except ValueError as exc:
                raise CommandError(f"not a game id: {exc}") from None
            games = games.filter(pk__in=ids)
        checked = broken = 0
        for game_id, status in games.values_list("pk", "status").iterator():
            checked += 1
            if options["seal_missing"] and status == Game.Status.FINISHED:
                seal.ensure_sealed(game_id)
            checks = selectors.soundness(game_id, finished=status == Game.Status.FINISHED)
            failure = checks["failure"]
            if failure is not None:
                broken += 1
                self.stdout.write(
                    f"BROKEN game {game_id}: first bad seq {failure['seq']} "
                    f"({failure['check']}: {failure['reason']})"
                )
            elif options["verbosity"] >= 2:
                self.stdout.write(f"ok game {game_id}")
        if broken:
            raise CommandError(f"{broken} of {checked} games are not sound")
        self.stdout.write(self.style.SUCCESS(f"{checked} games verified: every game is sound"))
