"""What a finished match says about each of its seats: a pure function of its events.

``summarize_match(events)`` reads one game's event stream (rows of ``games_event``, or anything
with ``id``, ``seq``, ``data`` and ``recorded_at``) and returns the facts the projections store:
per match (rules, times, rounds) and per seat (placement, rounds won and lost by how, Draw calls,
burns, chips, deadwood). It does no I/O, so the incremental projection at settlement and
``rebuild_projections`` run exactly the same code, and a test can recompute every number.

The rating step that follows (openskill, Plackett-Luce, one free-for-all of three ranked by
placement) is ``games.rules.rating``, shared with the bot levels' ratings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from games.rules import RuleSet
from games.rules.scoring import placements

SEATS = 3
#: Round-end reasons as the history groups them: a turn-cap round is settled as a stock out.
WIN_KINDS = {
    "tongits": "tongits",
    "draw": "draw",
    "stock_out": "stock_out",
    "turn_cap": "stock_out",
}
#: Options that change the pace of a table, not the game: ignored when naming its preset.
PACE_OPTIONS = ("turn_seconds", "turn_cap")
CUSTOM = "custom"
_DEFAULT_RULES = RuleSet().to_dict()

#: The counters a seat's record carries and a player's aggregate sums (same names in both).
COUNTERS = (
    "rounds_played",
    "rounds_won",
    "tongits_wins",
    "draw_wins",
    "stock_out_wins",
    "tongits_losses",
    "draw_losses",
    "stock_out_losses",
    "rounds_without_winner",
    "times_burned",
    "draw_calls",
    "draw_calls_won",
    "challenges",
    "challenges_won",
    "time_outs",
    "chips",
    "deadwood_total",
)


class LoggedEvent(Protocol):
    """The part of a ``games_event`` row the summary reads."""

    id: int
    seq: int
    data: dict[str, Any]
    recorded_at: datetime


@dataclass
class SeatRecord:
    """One seat's share of a finished match (``COUNTERS`` plus its place)."""

    seat: int
    spec: dict[str, Any]  # the seat of game_started: {"kind": "user", "user_id", ...} or bot
    placement: int = 0
    won: bool = False
    rounds_played: int = 0
    rounds_won: int = 0
    tongits_wins: int = 0
    draw_wins: int = 0
    stock_out_wins: int = 0
    tongits_losses: int = 0
    draw_losses: int = 0
    stock_out_losses: int = 0
    rounds_without_winner: int = 0
    times_burned: int = 0
    draw_calls: int = 0
    draw_calls_won: int = 0
    challenges: int = 0
    challenges_won: int = 0
    time_outs: int = 0
    chips: int = 0
    deadwood_total: int = 0
    resigned: bool = False  # placed last whatever the chips (docs/rules.md "Time")

    def counters(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in COUNTERS}


@dataclass
class MatchSummary:
    """A finished match: its facts and one ``SeatRecord`` per seat (index = seat)."""

    rules: dict[str, Any]
    rules_preset: str
    started_at: datetime
    ended_at: datetime
    end_event_id: int  # the match_ended event's id: the order ratings are applied in
    winner: int
    round_wins: list[int]
    rounds: list[dict[str, Any]] = field(default_factory=list)
    seats: list[SeatRecord] = field(default_factory=list)
    rated: bool = True  # game_started's ``rated``: a casual match changes no rating


def rules_preset(rules: dict[str, Any]) -> str:
    """The preset a table's rules are, pace aside (``standard``, ``house``, ``h19``), else
    ``custom``. Options a stored dict predates count at their defaults (the old behaviour)."""
    rules = {**_DEFAULT_RULES, **rules}
    game = {k: v for k, v in rules.items() if k not in PACE_OPTIONS}
    for name in RuleSet.PRESETS:
        preset = RuleSet.preset(name).to_dict()
        if {k: v for k, v in preset.items() if k not in PACE_OPTIONS} == game:
            return name
    return CUSTOM


#: Names older ``game_started`` events stored beside the user id: never copied into a projection.
NAME_KEYS = ("username", "name")


def seat_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """A seat of ``game_started`` as projections keep it: kind, user id or bot level, no name."""
    return {key: value for key, value in dict(spec).items() if key not in NAME_KEYS}


def summarize_match(events: Iterable[LoggedEvent]) -> MatchSummary | None:
    """The summary of a game's whole stream, or None if the stream has no ``match_ended``."""
    started: LoggedEvent | None = None
    seats: list[SeatRecord] = []
    rounds: list[dict[str, Any]] = []
    caller: int | None = None
    challengers: list[int] = []
    for row in events:
        data = row.data
        kind = data.get("type")
        if kind == "game_started":
            started = row
            specs = list(data.get("seats") or [{"kind": "user"}] * SEATS)
            seats = [SeatRecord(seat=i, spec=seat_spec(specs[i])) for i in range(SEATS)]
        elif kind == "round_started":
            caller, challengers = None, []
        elif kind == "draw_called":
            caller = data["seat"]
            seats[caller].draw_calls += 1
        elif kind == "challenged":
            challengers.append(data["seat"])
            seats[data["seat"]].challenges += 1
        elif kind == "turn_timed_out":
            seats[data["seat"]].time_outs += 1
        elif kind == "resigned":
            seats[data["seat"]].resigned = True
        elif kind == "round_ended":
            rounds.append(_end_round(seats, data, caller, challengers))
            caller, challengers = None, []
        elif kind == "match_ended":
            if started is None:
                raise ValueError("match_ended before game_started")
            return _finish(started, row, seats, rounds)
    return None


def _end_round(
    seats: list[SeatRecord], data: dict[str, Any], caller: int | None, challengers: list[int]
) -> dict[str, Any]:
    """Count one ``round_ended`` for every seat; return the round as the match detail shows it."""
    how = WIN_KINDS.get(data["reason"], "stock_out")
    winner = data.get("winner")
    burned = set(data.get("burned") or ())
    for record in seats:
        s = record.seat
        record.rounds_played += 1
        record.deadwood_total += data["deadwood"][s]
        record.chips += data["payouts"][s]
        if s in burned:
            record.times_burned += 1
        if winner is None:
            record.rounds_without_winner += 1
        elif winner == s:
            record.rounds_won += 1
            setattr(record, f"{how}_wins", getattr(record, f"{how}_wins") + 1)
        else:
            setattr(record, f"{how}_losses", getattr(record, f"{how}_losses") + 1)
    if caller is not None and data["reason"] == "draw" and winner == caller:
        seats[caller].draw_calls_won += 1
    for seat in challengers:
        if data["reason"] == "draw" and winner == seat:
            seats[seat].challenges_won += 1
    return {
        "round": data["round"],
        "reason": data["reason"],
        "winner": winner,
        "draw_caller": caller,
        "challengers": list(challengers),
        "deadwood": list(data["deadwood"]),
        "burned": sorted(burned),
        "payouts": list(data["payouts"]),
    }


def _finish(
    started: LoggedEvent, ended: LoggedEvent, seats: list[SeatRecord], rounds: list[dict]
) -> MatchSummary:
    winner = ended.data["winner"]
    round_wins = [record.rounds_won for record in seats]
    places = last_if_resigned(
        placements(winner, round_wins, [record.chips for record in seats]),
        [record.resigned for record in seats],
    )
    for record, place in zip(seats, places, strict=True):
        record.placement = place
        record.won = record.seat == winner and not record.resigned
    rules = dict(started.data.get("rules") or {})
    return MatchSummary(
        rules=rules,
        rules_preset=rules_preset(rules),
        started_at=started.recorded_at,
        ended_at=ended.recorded_at,
        end_event_id=ended.id,
        winner=winner,
        round_wins=round_wins,
        rounds=rounds,
        seats=seats,
        rated=bool(started.data.get("rated", True)),
    )


def last_if_resigned(places: list[int], resigned: list[bool]) -> list[int]:
    """Places with every resigned seat behind every other, each group in its own order
    (equals still share a place)."""
    if not any(resigned):
        return places
    keys = list(zip(resigned, places, strict=True))
    return [1 + sum(other < key for other in keys) for key in keys]
