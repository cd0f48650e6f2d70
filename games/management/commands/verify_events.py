"""manage.py verify_events: walk every game's hash chain and name the first broken link.

Exit status 0 when every chain is sound, 1 when any is broken, so cron or CI can alert on it.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from games import store
from games.models import Game


class Command(BaseCommand):
    help = "Verify the hash chain of every game's events; report the first broken seq per game."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("game_ids", nargs="*", help="Only these games (default: all).")

    def handle(self, *args: Any, **options: Any) -> None:
        games = Game.objects.order_by("created_at", "id")
        if options["game_ids"]:
            try:
                ids = [uuid.UUID(value) for value in options["game_ids"]]
            except ValueError as exc:
                raise CommandError(f"not a game id: {exc}") from None
            games = games.filter(pk__in=ids)
        checked = broken = 0
        for game_id in games.values_list("pk", flat=True).iterator():
            checked += 1
            seq = store.verify_chain(game_id)
            if seq is not None:
                broken += 1
                self.stdout.write(f"BROKEN game {game_id}: first broken seq {seq}")
            elif options["verbosity"] >= 2:
                self.stdout.write(f"ok game {game_id}")
        if broken:
            raise CommandError(f"{broken} of {checked} games have a broken event chain")
        self.stdout.write(self.style.SUCCESS(f"{checked} games verified: every chain is sound"))
