"""How games look on the wire: the shapes the REST API and the live streams both send.

Selectors decide what is read and who may read it; this module only turns what was read into
JSON-ready dicts, so a command's answer, ``GET /games/{id}``, a long-poll answer and a stream's
``view`` frame are the same object for the same game and seat. No database access here beyond
related rows already prefetched on a ``Game``; what a seat may see is the rules core's call
(``player_view``, ``redact_event``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from games import players
from games.models import Game, Rematch, Seat
from games.players import display_name, upcast_event
from games.rules import GameState, legal_commands, player_view, redact_event


def iso(value: datetime | None) -> str | None:
    """Datetimes as they appear in stored bodies (strings, so a replayed body is identical)."""
    return value.isoformat().replace("+00:00", "Z") if value else None


# ---------------------------------------------------------------- tables


def seat_entries(game: Game) -> list[dict[str, Any]]:
    """Who sits where, as the API shows it (user seats with id, username, display name and
    avatar; a lapsed
    invitation is an open seat, as the next write on the table makes it)."""
    out = []
    lapsed = timezone.now() - timedelta(seconds=settings.TONGITS_INVITATION_SECONDS)
    for seat in game.seats.all():
        if seat.invitation == Seat.Invitation.PENDING and seat.invited_at < lapsed:
            out.append({"seat": seat.index, "kind": "open"})
            continue
        entry: dict[str, Any] = {"seat": seat.index, "kind": seat.kind}
        if seat.user_id:
            entry["user_id"] = seat.user_id
            entry.update(players.shown(seat.user).fields())
            if seat.invitation:  # "pending" until the invited user accepts, then "accepted"
                entry["invitation"] = seat.invitation
        if seat.bot_level:
            entry["level"] = seat.bot_level
        out.append(entry)
    return out


def table_dict(game: Game, spectators: int = 0) -> dict[str, Any]:
    """A table as the API lists it: public facts only (never the snapshot); ``spectators``:
    how many spectator streams are open on it (``games.live``'s count, read by the caller)."""
    return {
        "id": game.pk,
        "status": game.status,
        "rules": game.rules,
        "seats": seat_entries(game),
        "created_by": display_name(game.created_by) if game.created_by else None,
        "rated": game.rated,
        "buy_in": game.buy_in,
        "created_at": game.created_at,
        "started_at": game.started_at,
        "finished_at": game.finished_at,
        "version": game.version,
        "phase": game.phase,
        "round": game.round,
        "current_seat": game.current_seat,
        "turn_deadline": game.turn_deadline,
        "winner_seat": game.winner_seat,
        "visibility": game.visibility,
        "spectator_delay": game.spectator_delay,
        "spectator_chat": game.spectator_chat,
        "spectators": spectators,
        # A rematch links both matches: this one's proposal (and the next game once it
        # started), and the match this one is the rematch of (prefetched by the selectors).
        "rematch": _rematch_of_table(game),
        "rematch_of": _rematch_source(game),
    }


# ---------------------------------------------------------------- rematches


def rematch_status(rematch: Rematch, now: datetime | None = None) -> str:
    """open, started, declined or lapsed (an open one past ``expires_at`` has lapsed, whether
    or not a write has marked it yet)."""
    if rematch.status == Rematch.Status.OPEN and rematch.expires_at <= (now or timezone.now()):
        return Rematch.Status.LAPSED
    return rematch.status


def rematch_dict(rematch: Rematch, seats: list[Seat]) -> dict[str, Any]:
    """A rematch as the API and ``/me/stream``'s ``rematch`` frame show it: the finished match,
    its status, each person's answer (``accepted``, ``declined`` or ``pending``; bots need no
    asking) and, once it started, the next game. ``seats``: the finished match's, with users."""
    answers = rematch.answers or {}
    people = [s for s in seats if s.user_id]
    proposer = next((s for s in people if s.user_id == rematch.proposed_by_id), None)
    return {
        "game_id": str(rematch.game_id),
        "status": rematch_status(rematch),
        "proposed_by": display_name(proposer.user) if proposer else None,
        "answers": [
            {
                "seat": s.index,
                "user_id": s.user_id,
                "username": display_name(s.user),
                "answer": {True: "accepted", False: "declined"}.get(
                    answers.get(str(s.user_id)), "pending"
                ),
            }
            for s in people
        ],
        "created_at": iso(rematch.created_at),
        "expires_at": iso(rematch.expires_at),
        "next_game_id": str(rematch.new_game_id) if rematch.new_game_id else None,
    }


def _rematch_of_table(game: Game) -> dict[str, Any] | None:
    rematch = getattr(game, "rematch", None)  # the reverse one-to-one, or None
    return rematch_dict(rematch, list(game.seats.all())) if rematch is not None else None


def _rematch_source(game: Game) -> str | None:
    source = getattr(game, "rematch_source", None)
    return str(source.game_id) if source is not None else None


def public_seats(state: GameState) -> list[dict[str, Any]]:
    """Who sits where, from ``game_started``, each person under their current name (a list
    that is shared: not to be changed)."""
    return players.public_seats(state.seats)


# ---------------------------------------------------------------- a game as one seat sees it


def settled(status: str, settled_at: datetime | None, state: GameState) -> bool:
    """Nothing is left to book for this match: its result (ratings, stats, chips) is written,
    or it was called off with no chips at stake, so there is nothing to write."""
    if settled_at is not None:
        return True
    return status == Game.Status.ABORTED and state.buy_in == 0


def revealed_view(state: GameState) -> dict[str, Any]:
    """Everything at this step: every hand, the stock in order, secret sets face up."""
    return player_view(state, None, reveal=True)


def game_payload(
    game_id: Any,
    status: str,
    turn_deadline: datetime | None,
    state: GameState,
    seat: int | None,
    *,
    is_settled: bool,
) -> dict[str, Any]:
    """The caller's whole picture of a game: view, version, deadline and legal commands."""
    return {
        "id": str(game_id),
        "status": status,
        "settled": is_settled,
        "version": state.version,
        "seat": seat,
        "turn_deadline": iso(turn_deadline),
        "seats": public_seats(state),
        "view": player_view(state, seat),
        "legal_commands": legal_commands(state, seat) if seat is not None else [],
    }


def view_frame(
    game_id: Any,
    status: str,
    turn_deadline: datetime | None,
    settled_at: datetime | None,
    state: GameState,
    seat: int | None,
) -> dict[str, Any]:
    """``GET /games/{id}``, a long-poll's ``game`` and a stream's ``view`` frame: the game
    payload, and once the match is over everything face up (``revealed``)."""
    payload = game_payload(
        game_id,
        status,
        turn_deadline,
        state,
        seat,
        is_settled=settled(status, settled_at, state),
    )
    if status == Game.Status.FINISHED:
        payload["revealed"] = revealed_view(state)
    return payload


def command_answer(written: Any) -> dict[str, Any]:
    """What a command answers (the presenter the API hands to the write door): the new events
    as the writer's seat may see them, and its new view under ``game``."""
    columns, seat, state = written.columns, written.seat, written.state
    status = columns["status"]
    reveal = status == Game.Status.FINISHED
    return {
        "version": written.version,
        "events": [feed_item(row, seat, reveal) for row in written.events],
        "game": {
            # A command never follows a settlement, so only a called-off table without chips
            # can be settled in its answer.
            **game_payload(
                written.game_id,
                status,
                columns["turn_deadline"],
                state,
                seat,
                is_settled=settled(status, None, state),
            ),
            # The server's clock at the answer, for the client's countdown (a replayed answer
            # keeps the first one's).
            "server_time": iso(written.events[-1].recorded_at if written.events else None),
        },
    }


# ---------------------------------------------------------------- events


def feed_item(row: Any, seat: int | None, reveal: bool) -> dict[str, Any]:
    """One event as a seat may see it: seq and type always, hidden fields removed, and its
    receipt: ``hash`` and ``prev_hash`` of the chain (a hidden event's nonce keeps the hash from
    telling its content), which a player can keep and hold against a later export."""
    return {
        "seq": row.seq,
        "type": row.type,
        "actor": row.actor,
        "recorded_at": iso(row.recorded_at),
        "prev_hash": row.prev_hash,
        "hash": row.hash,
        "data": upcast_event(redact_event(row.data, seat, reveal=reveal)),
    }
