"""Settlement: a finished match is settled once, after its last event.

``settle`` marks the game settled under its row lock and reports whether the match is over; the
``settle_match`` task (``accounts.tasks``) calls it and, in the same transaction, projects the
match into the players' history, stats and ratings. ``games`` never imports ``accounts``: the
one place that joins the two is that task.
"""

from __future__ import annotations

import uuid
from functools import partial

from django.db import transaction
from django.utils import timezone

from games import seal, store
from games.models import Game


def settle(*, game_id: uuid.UUID | str) -> bool:
    """Mark a finished match settled (``settled_at``; nothing awaited any more). Idempotent.

    True when the match is over (settled now or before), False when it has not ended. Runs in
    the caller's transaction when there is one, so the projection commits with it.
    """
    with transaction.atomic():
        game = store.get_game(game_id, lock=True)
        if game.phase != "match_over" or game.status != Game.Status.FINISHED:
            return False
        if game.settled_at is None or game.awaiting or game.due_at is not None:
            game.settled_at = game.settled_at or timezone.now()
            game.awaiting = Game.Awaiting.NONE
            game.due_at = None
            game.save(update_fields=["settled_at", "awaiting", "due_at", "updated_at"])
    # The write that ended the match seals it; this mends a miss, once the settlement has
    # committed. Sealing inside it, under the game row's lock, deadlocked with that write's own
    # seal: its insert's foreign-key check waits for the row lock while our insert of the same
    # seal waits for its transaction (seen in CI at the end of a browser match).
    transaction.on_commit(partial(seal.ensure_sealed, game.pk))
    return True
