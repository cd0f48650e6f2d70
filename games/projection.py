"""What a game's head shows after a write, and when the server owes the table work: the policy of
the write door, pure (no Django, no database; the door hands in the timing from settings).

After every write the head's projection columns (``games.store.COLUMNS``) say the table's
status and phase, whose turn it is and until when (the deadline restarts when a new turn or a
new Draw answer starts), what the table awaits (a person, a bot, the next deal, the settlement),
and ``due_at``: when the scheduler should act, the server's own work or the turn deadline,
whichever comes first (null while only a person can move it on).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from games.rules import GameState

# What a table awaits (``Game.Awaiting``): the server owes the work for bot, deal and settle.
AWAITING_NONE = ""
AWAITING_USER = "user"
AWAITING_BOT = "bot"
AWAITING_DEAL = "deal"
AWAITING_SETTLE = "settle"
#: What the server owes a table, by ``awaiting`` (a person's turn is not in it).
SERVER_WORK = (AWAITING_BOT, AWAITING_DEAL, AWAITING_SETTLE)

# A table's status (``Game.Status``).
STATUS_WAITING = "waiting"
STATUS_ACTIVE = "active"
STATUS_FINISHED = "finished"
STATUS_ABANDONED = "abandoned"
STATUS_ABORTED = "aborted"


@dataclass(frozen=True)
class Timing:
    """The server's pace (settings): a bot's pause before each command, the rest between a
    round's end and the next deal, the window for round 1's client seeds (0: the first deal
    is made with ``game_started``), and whether the next round is dealt inside the write that
    ends a round (no task, no pause: a stack without a worker)."""

    bot_delay: float = 0.8
    next_round_delay: float = 3.0
    seed_window: float = 0.0
    deal_inline: bool = False


@dataclass(frozen=True)
class Before:
    """What the head said before the write, as far as the projection depends on it."""

    settled_at: datetime | None = None
    turn_deadline: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None


def turn_key(state: GameState | None) -> tuple | None:
    """Changes exactly when a new turn (or a new Draw answer) starts: the deadline restarts."""
    if state is None or not state.in_round:
        return None
    return (state.round, state.turns, state.turn, state.phase == "draw_call", len(state.answers))


def awaiting(state: GameState, settled: bool) -> str:
    """What the table waits for next."""
    if state.in_round:
        seat = state.seats[state.turn] if 0 <= state.turn < len(state.seats) else {}
        return AWAITING_BOT if seat.get("kind") == "bot" else AWAITING_USER
    if state.phase in ("dealing", "round_over"):
        return AWAITING_DEAL
    if state.phase == "match_over" and not settled:
        return AWAITING_SETTLE
    return AWAITING_NONE


def deals_now(state: GameState, timing: Timing) -> bool:
    """Whether the write that reached this state also deals the next round: after
    ``game_started`` without a seed window, after a round's end when deals are inline."""
    if state.phase == "dealing":
        return timing.seed_window <= 0
    return state.phase == "round_over" and timing.deal_inline


def server_delay(kind: str, timing: Timing, phase: str | None = None) -> float:
    """How long the server waits before doing the ``kind`` of work a table awaits (the first
    deal, in phase ``dealing``, waits for the seed window)."""
    if kind == AWAITING_BOT:
        return max(0.0, timing.bot_delay)
    if kind == AWAITING_DEAL:
        return max(0.0, timing.seed_window if phase == "dealing" else timing.next_round_delay)
    return 0.0


def server_work_due(
    kind: str, turn_deadline: datetime | None, now: datetime, timing: Timing, phase: str | None
) -> datetime | None:
    """When the scheduler should act on the table: its bot move, deal or settlement, or the
    turn deadline, whichever comes first; None when only a person can move it on."""
    due = [turn_deadline] if turn_deadline is not None else []
    if kind in SERVER_WORK:
        due.append(now + timedelta(seconds=server_delay(kind, timing, phase)))
    return min(due) if due else None


def project(
    head: Before, before: GameState | None, after: GameState, now: datetime, timing: Timing
) -> dict[str, Any]:
    """The head's projection columns after an append (``games.store.COLUMNS``)."""
    if after.phase == "aborted":  # called off: no result; buy-ins at stake are refunded
        refund = after.buy_in > 0 and head.settled_at is None
        return {
            "status": STATUS_ABORTED,
            "phase": after.phase,
            "round": after.round,
            "current_seat": None,
            "turn_deadline": None,
            "winner_seat": None,
            "awaiting": AWAITING_SETTLE if refund else AWAITING_NONE,
            "due_at": now if refund else None,
            "started_at": head.started_at or now,
            "finished_at": head.finished_at or now,
        }
    finished = after.phase == "match_over"
    kind = awaiting(after, head.settled_at is not None)
    key = turn_key(after)
    seconds = after.rules.turn_seconds
    if key is None or not seconds:
        deadline = None
    elif key != turn_key(before) or head.turn_deadline is None:
        deadline = now + timedelta(seconds=seconds)
    else:
        deadline = head.turn_deadline
    return {
        "status": STATUS_FINISHED if finished else STATUS_ACTIVE,
        "phase": after.phase,
        "round": after.round,
        "current_seat": after.turn if after.turn >= 0 else None,
        "turn_deadline": deadline,
        "winner_seat": after.match_winner if finished else None,
        "awaiting": kind,
        "due_at": server_work_due(kind, deadline, now, timing, after.phase),
        "started_at": head.started_at or now,
        "finished_at": (head.finished_at or now) if finished else None,
    }
