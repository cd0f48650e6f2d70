"""Weekly leaderboards: each room's rated results over a week, archived and rewarded once.

A week is ``TONGITS_SEASON_DAYS`` days from ``TONGITS_SEASON_START`` (a local time in
``TONGITS_SEASON_TIMEZONE``; by default Monday 00:00 in Asia/Manila), repeated. A room's board
counts the rated matches people finished in the week at the room's tables (its buy-in and
stake): 3 points a match won and 1 a round won, ties broken by net chips, then by who is older.
Once a week is over, ``close`` archives each room's final standings (``Week``,
``WeekStanding``) and pays the top places ``TONGITS_SEASON_REWARDS`` chips from the house, all
in one transaction: the week's row is unique, and each reward's ledger key names the room, the
week and the person, so a close run twice, late, or killed pays each reward exactly once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy

from chips import services as chips
from core.errors import Invalid, NotFound
from games import players
from matchmaking.services import room_of, rooms
from tournaments.models import Week, WeekStanding

logger = logging.getLogger(__name__)

POINTS_A_WIN = 3
POINTS_A_ROUND = 1


class InvalidWeek(Invalid):
    code = "invalid_week"
    detail = gettext_lazy('A week is named by the date it starts on, as "YYYY-MM-DD".')


class WeekNotFound(NotFound):
    detail = gettext_lazy("No archived week of this room starts on that date.")


@dataclass(frozen=True)
class Period:
    starts_at: datetime
    ends_at: datetime

    @property
    def id(self) -> str:
        """The week's name: the local date it starts on."""
        zone = ZoneInfo(settings.TONGITS_SEASON_TIMEZONE)
        return self.starts_at.astimezone(zone).date().isoformat()


def _origin() -> datetime:
    zone = ZoneInfo(settings.TONGITS_SEASON_TIMEZONE)
    return datetime.fromisoformat(settings.TONGITS_SEASON_START).replace(tzinfo=zone)


def week_of(moment: datetime) -> Period:
    """The week ``moment`` falls in (its start included, its end not)."""
    length = timedelta(days=settings.TONGITS_SEASON_DAYS)
    origin = _origin()
    count = (moment - origin) // length
    start = origin + count * length
    return Period(start, start + length)


def week_named(name: str) -> Period:
    """The week that starts on the local date ``name``; ``InvalidWeek`` otherwise."""
    zone = ZoneInfo(settings.TONGITS_SEASON_TIMEZONE)
    try:
        day = datetime.fromisoformat(name).date()
    except (TypeError, ValueError):
        raise InvalidWeek() from None
    origin = _origin()
    moment = datetime.combine(day, origin.timetz().replace(tzinfo=None)).replace(tzinfo=zone)
    period = week_of(moment)
    if period.id != day.isoformat():
        raise InvalidWeek()
    return period


_BOARD = """
SELECT pm.player_id, count(*) AS matches,
       count(*) FILTER (WHERE pm.result = 'win') AS wins,
       coalesce(sum(pm.rounds_won), 0) AS rounds_won,
       coalesce(sum(pm.chips), 0) AS chips
FROM accounts_playermatch pm
JOIN accounts_matchrecord mr ON mr.game_id = pm.match_id
JOIN games_game g ON g.id = pm.match_id
JOIN accounts_user u ON u.id = pm.player_id
WHERE pm.ended_at >= %(start)s AND pm.ended_at < %(end)s AND mr.rated AND NOT u.is_bot
  AND g.buy_in = %(buy_in)s AND coalesce((mr.rules ->> 'stake')::int, 1) = %(stake)s
GROUP BY pm.player_id
"""


def board(room: str, period: Period) -> list[dict[str, Any]]:
    """A room's standings over ``period`` from the match records, best first."""
    found = room_of(room)
    with connection.cursor() as cursor:
        cursor.execute(
            _BOARD,
            {
                "start": period.starts_at,
                "end": period.ends_at,
                "buy_in": found.buy_in,
                "stake": found.stake,
            },
        )
        rows = cursor.fetchall()
    entries = [
        {
            "user_id": user_id,
            "points": POINTS_A_WIN * wins + POINTS_A_ROUND * rounds,
            "matches": matches,
            "wins": wins,
            "rounds_won": rounds,
            "chips": chips_won,
        }
        for user_id, matches, wins, rounds, chips_won in rows
    ]
    entries.sort(key=lambda e: (-e["points"], -e["chips"], e["user_id"]))
    for rank, entry in enumerate(entries, start=1):
        entry["rank"] = rank
    return entries


def rewards() -> list[int]:
    return list(settings.TONGITS_SEASON_REWARDS)


def _named(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    names = players.names([e["user_id"] for e in entries])
    return [{**e, "username": names.get(e["user_id"])} for e in entries]


def weekly(
    *, room: str | None = None, week: str | None = None, now: datetime | None = None
) -> dict[str, Any]:
    """GET /leaderboards/weekly: a room's current week (live standings and the rewards it
    will pay), or a past week by its name (its archived final standings and rewards)."""
    key = room or next(iter(rooms()))
    room_of(key)
    now = now or timezone.now()
    current = week_of(now)
    period = current if week is None else week_named(week)
    archived = Week.objects.filter(room=key, starts_at=period.starts_at).first()
    if archived is not None:
        entries = list(
            WeekStanding.objects.filter(week=archived).values(
                "rank", "user_id", "points", "matches", "wins", "rounds_won", "chips", "reward"
            )
        )
    elif period != current:
        raise WeekNotFound()
    else:
        table = rewards()
        entries = [
            {**e, "reward": table[e["rank"] - 1] if e["rank"] <= len(table) else 0}
            for e in board(key, period)
        ]
    past = Week.objects.filter(room=key).order_by("-starts_at")[:12]
    return {
        "room": key,
        "week": period.id,
        "starts_at": period.starts_at,
        "ends_at": period.ends_at,
        "current": period == current,
        "archived": archived is not None,
        "rewards": rewards(),
        "standings": _named(entries),
        "past_weeks": [Period(w.starts_at, w.ends_at).id for w in past],
    }


def close(*, now: datetime | None = None) -> int:
    """Archive every room's last finished week (once) and pay its rewards; how many weeks
    were archived now. A room's week with no result is archived empty."""
    now = now or timezone.now()
    ended = week_of(week_of(now).starts_at - timedelta(microseconds=1))
    closed = 0
    for key in rooms():
        if Week.objects.filter(room=key, starts_at=ended.starts_at).exists():
            continue
        try:
            with transaction.atomic():
                closed += _archive(key, ended, now)
        except IntegrityError:  # archived at the same moment by another run
            continue
    return closed


def _archive(room: str, period: Period, now: datetime) -> int:
    week = Week.objects.create(
        room=room, starts_at=period.starts_at, ends_at=period.ends_at, archived_at=now
    )
    table = rewards()
    for entry in board(room, period):
        reward = table[entry["rank"] - 1] if entry["rank"] <= len(table) else 0
        WeekStanding.objects.create(
            week=week,
            rank=entry["rank"],
            user_id=entry["user_id"],
            points=entry["points"],
            matches=entry["matches"],
            wins=entry["wins"],
            rounds_won=entry["rounds_won"],
            chips=entry["chips"],
            reward=reward,
        )
        if reward > 0:
            chips.season_reward(
                season_key=f"{room}:{period.id}",
                user_id=entry["user_id"],
                amount=reward,
                place=entry["rank"],
            )
    logger.info("archived the week of %s in room %s", period.id, room)
    return 1
