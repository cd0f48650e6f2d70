"""Settlement: a match that ended (or was called off) is settled once, after its last event.

``settle`` marks the game settled under its row lock and, at a table played for chips, empties
the table's escrow in the same transaction: a finished match pays each seat its buy-in plus its
result under the table-stakes rule (``games.rules.table_stakes``: nobody loses more than the
buy-in), an aborted one refunds every buy-in. The ledger posts each table's settlement once
(its key is ``payout:<game>`` / ``refund:<game>``), so a settlement run twice, late, or after a
worker died half-way posts it exactly once. The ``settle_match`` task (``accounts.tasks``) calls
``settle`` and, for a finished match, projects it into the players' history, stats and ratings
in the same transaction. ``games`` never imports ``accounts``: that task joins the two.

``games.stakes`` recomputes a table's chips from its events alone, for ``manage.py
verify_ledger`` and the audit.
"""

from __future__ import annotations

import uuid
from enum import StrEnum
from functools import partial

from django.db import transaction
from django.utils import timezone

from chips import services as chips
from games import seal, store
from games.models import Game
from games.rules import GameState, table_stakes
from games.stakes import seat_owners


class Settled(StrEnum):
    """What ``settle`` found: a finished match, or a match called off (its buy-ins refunded)."""

    MATCH = "match"
    ABORTED = "aborted"


def settle(*, game_id: uuid.UUID | str) -> Settled | None:
    """Mark a finished or aborted match settled (``settled_at``; nothing awaited any more) and
    settle its table stakes. Idempotent.

    ``Settled.MATCH`` / ``Settled.ABORTED`` when there is a result to record (settled now or
    before); None when the match is still running or was called off with nothing at stake.
    Runs in the caller's transaction when there is one, so the projection commits with it.
    """
    with transaction.atomic():
        game = store.get_game(game_id, lock=True)
        finished = game.phase == "match_over" and game.status == Game.Status.FINISHED
        aborted = game.status == Game.Status.ABORTED
        if not finished and not (aborted and game.buy_in):
            return None
        state = store.state_of(game)
        if game.buy_in and state is not None:
            pay_stakes(game.pk, state, aborted=aborted)
        if game.settled_at is None or game.awaiting or game.due_at is not None:
            game.settled_at = game.settled_at or timezone.now()
            game.awaiting = Game.Awaiting.NONE
            game.due_at = None
            game.save(update_fields=["settled_at", "awaiting", "due_at", "updated_at"])
    if aborted:
        return Settled.ABORTED
    # The write that ended the match seals it; this mends a miss, once the settlement has
    # committed. Sealing inside it, under the game row's lock, deadlocked with that write's own
    # seal: its insert's foreign-key check waits for the row lock while our insert of the same
    # seal waits for its transaction (seen in CI at the end of a browser match).
    transaction.on_commit(partial(seal.ensure_sealed, game.pk))
    return Settled.MATCH


def pay_stakes(game_id: uuid.UUID, state: GameState, *, aborted: bool) -> None:
    """Empty the table's escrow: the table-stakes result of a finished match (less the room's
    service fee on each winner's winnings, ``game_started``'s ``fee_percent``), or refunds."""
    buy_in = state.buy_in
    owed = list(state.chips)
    paid = None if aborted else table_stakes(owed, [buy_in] * len(owed))
    chips.settle_stakes(
        game_id=game_id,
        seats=seat_owners(state.seats),
        buy_in=buy_in,
        paid=paid,
        data={} if aborted else {"owed": owed, "capped": paid != owed},
        fee_percent=state.fee_percent,
    )
