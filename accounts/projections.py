"""Writes of the match projections: history rows, per-player totals and ratings.

Two doors, one computation (``accounts.match_records``):

- ``project_match(game_id)``: called once a match is settled, inside the settlement's
  transaction. Idempotent: a match already projected is left as it is, so a redelivered
  settlement task changes nothing.
- ``rebuild()`` (``manage.py rebuild_projections``): empties every projection and replays every
  finished match from the event log alone, in match-end order.

Ratings are applied in match-end order (the ``match_ended`` event's id). If a match is settled
after one that ended later (two tasks racing), the later matches are re-rated after it, so the
result is the one a rebuild gives. Every write takes one PostgreSQL advisory lock, so settlements
and rebuilds never interleave their rating updates.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from accounts.match_records import COUNTERS, MatchSummary, summarize_match
from accounts.models import MatchRecord, PlayerMatch, PlayerStats, User, bot_username
from games import store
from games.rules.rating import DEFAULT_RATING, ordinal, rate_match

#: pg_advisory_xact_lock key of the projections (any constant unique within this database).
LOCK_KEY = 0x746F6E6769747301
BATCH = 2000

Rating = tuple[float, float]


def _lock() -> None:
    """Serialize projection writers until the transaction ends (ratings depend on order)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [LOCK_KEY])


# ---------------------------------------------------------------- who played


class PlayerResolver:
    """Maps seats of ``game_started`` to accounts: users by id, bots by level's account."""

    def __init__(self) -> None:
        self._bots: dict[str, int] = {}
        self._users: dict[int, bool] = {}

    def bot(self, level: str) -> int:
        """The account of a bot level (created on first use: a rebuild may run on an empty db)."""
        if level not in self._bots:
            user, created = User.objects.get_or_create(
                username=bot_username(level), defaults={"is_bot": True}
            )
            if created:
                user.set_unusable_password()
                user.save(update_fields=["password"])
            self._bots[level] = user.pk
        return self._bots[level]

    def players(self, seats: list[dict[str, Any]]) -> list[int | None]:
        """Account id per seat; None for a user whose account was deleted (or never existed)."""
        wanted = [s.get("user_id") for s in seats if s.get("kind") != "bot"]
        missing = [uid for uid in wanted if uid is not None and uid not in self._users]
        if missing:
            alive = User.objects.filter(pk__in=missing, deleted_at__isnull=True)
            found = set(alive.values_list("pk", flat=True))
            self._users.update({uid: uid in found for uid in missing})
        out: list[int | None] = []
        for spec in seats:
            if spec.get("kind") == "bot":
                out.append(self.bot(spec.get("level") or "normal"))
            else:
                uid = spec.get("user_id")
                out.append(uid if uid is not None and self._users.get(uid) else None)
        return out


def counted(players: list[int | None]) -> list[bool]:
    """Seats that get a record: known accounts seated once (a bot level playing itself does not
    learn anything about its strength from that match)."""
    times = Counter(p for p in players if p is not None)
    return [p is not None and times[p] == 1 for p in players]


# ---------------------------------------------------------------- one match


@dataclass
class RatedSeat:
    before: Rating
    after: Rating


def apply_ratings(
    ratings: dict[int, Rating], players: list[int | None], places: list[int], rated: bool = True
) -> list[RatedSeat]:
    """Rate one match from ``ratings`` (player -> current rating) and update it in place; a
    casual match (``rated`` False) leaves every rating as it was."""
    before = [ratings.get(p, DEFAULT_RATING) if p is not None else DEFAULT_RATING for p in players]
    if not rated:
        return [RatedSeat(b, b) for b in before]
    after = rate_match(before, places)
    for player, keep, new in zip(players, counted(players), after, strict=True):
        if keep:
            ratings[player] = new  # type: ignore[index]
    return [RatedSeat(b, a) for b, a in zip(before, after, strict=True)]


def match_record(game_id: uuid.UUID | str, summary: MatchSummary) -> MatchRecord:
    return MatchRecord(
        game_id=game_id,
        rules=summary.rules,
        rules_preset=summary.rules_preset,
        started_at=summary.started_at,
        ended_at=summary.ended_at,
        end_event_id=summary.end_event_id,
        winner_seat=summary.winner,
        round_wins=summary.round_wins,
        placements=[s.placement for s in summary.seats],
        rounds=summary.rounds,
        seats=[s.spec for s in summary.seats],
        rated=summary.rated,
    )


def player_rows(
    record: MatchRecord,
    summary: MatchSummary,
    players: list[int | None],
    rated: list[RatedSeat],
) -> list[PlayerMatch]:
    """The history rows of a match, one per counted seat."""
    rows = []
    for seat, keep in enumerate(counted(players)):
        if not keep:
            continue
        facts = summary.seats[seat]
        (mu0, sigma0), (mu, sigma) = rated[seat].before, rated[seat].after
        rows.append(
            PlayerMatch(
                player_id=players[seat],
                match=record,
                seat=seat,
                opponent_1_id=players[(seat + 1) % 3],
                opponent_2_id=players[(seat + 2) % 3],
                started_at=summary.started_at,
                ended_at=summary.ended_at,
                rules_preset=summary.rules_preset,
                end_event_id=summary.end_event_id,
                result=PlayerMatch.Result.WIN if facts.won else PlayerMatch.Result.LOSS,
                placement=facts.placement,
                mu_before=mu0,
                sigma_before=sigma0,
                mu=mu,
                sigma=sigma,
                ordinal=ordinal(mu, sigma),
                resigned=facts.resigned,
                **facts.counters(),
            )
        )
    return rows


def accumulate(stats: PlayerStats, row: PlayerMatch) -> None:
    """Add one history row to a player's totals (the rating is set by the caller)."""
    stats.matches += 1
    stats.wins += row.result == PlayerMatch.Result.WIN
    for name in COUNTERS:
        setattr(stats, name, getattr(stats, name) + getattr(row, name))
    if stats.last_match_at is None or row.ended_at > stats.last_match_at:
        stats.last_match_at = row.ended_at


def new_stats(player_id: int) -> PlayerStats:
    mu, sigma = DEFAULT_RATING
    return PlayerStats(player_id=player_id, mu=mu, sigma=sigma, ordinal=ordinal(mu, sigma))


def set_rating(stats: PlayerStats, rating: Rating) -> None:
    stats.mu, stats.sigma = rating
    stats.ordinal = ordinal(*rating)


# ---------------------------------------------------------------- incremental


@transaction.atomic
def project_match(game_id: uuid.UUID | str) -> bool:
    """Project one finished match (history rows, totals, ratings); False if there was nothing to
    do (already projected, or the match has not ended). Safe to call any number of times."""
    _lock()
    if MatchRecord.objects.filter(game_id=game_id).exists():
        return False
    summary = summarize_match(store.load_events(game_id))
    if summary is None:
        return False
    resolver = PlayerResolver()
    players = resolver.players([s.spec for s in summary.seats])
    places = [s.placement for s in summary.seats]

    # Matches that ended after this one but were projected before it are re-rated after it.
    later = list(
        MatchRecord.objects.filter(end_event_id__gt=summary.end_event_id).order_by("end_event_id")
    )
    later_rows = list(
        PlayerMatch.objects.filter(end_event_id__gt=summary.end_event_id).order_by(
            "end_event_id", "seat"
        )
    )
    touched = {p for p in players if p is not None} | {r.player_id for r in later_rows}
    for other in later:  # a bot level seated twice has no row there but still rates the others
        touched.update(p for p in resolver.players(other.seats) if p is not None)
    stats = {s.player_id: s for s in PlayerStats.objects.filter(player_id__in=touched)}
    ratings: dict[int, Rating] = {pid: (s.mu, s.sigma) for pid, s in stats.items()}
    for row in reversed(later_rows):  # the earliest later row tells the rating before it
        ratings[row.player_id] = (row.mu_before, row.sigma_before)

    record = match_record(game_id, summary)
    record.save()
    rated = apply_ratings(ratings, players, places, summary.rated)
    rows = player_rows(record, summary, players, rated)
    PlayerMatch.objects.bulk_create(rows)
    if later:
        _rerate(later, later_rows, ratings, resolver)

    for row in rows:
        if row.player_id not in stats:
            stats[row.player_id] = new_stats(row.player_id)
        accumulate(stats[row.player_id], row)
    for pid, entry in stats.items():
        if pid in ratings:
            set_rating(entry, ratings[pid])
    PlayerStats.objects.bulk_create(
        stats.values(),
        update_conflicts=True,
        unique_fields=["player"],
        update_fields=[f.name for f in PlayerStats._meta.concrete_fields if not f.primary_key],
    )
    return True


def _rerate(
    records: list[MatchRecord],
    rows: list[PlayerMatch],
    ratings: dict[int, Rating],
    resolver: PlayerResolver,
) -> None:
    """Apply the ratings of already projected matches again, in order, from ``ratings``."""
    by_match: dict[Any, dict[int, PlayerMatch]] = {}
    for row in rows:
        by_match.setdefault(row.match_id, {})[row.seat] = row
    for record in records:
        players = resolver.players(record.seats)
        rated = apply_ratings(ratings, players, record.placements, record.rated)
        for seat, row in by_match.get(record.pk, {}).items():
            (row.mu_before, row.sigma_before), (row.mu, row.sigma) = (
                rated[seat].before,
                rated[seat].after,
            )
            row.ordinal = ordinal(row.mu, row.sigma)
    PlayerMatch.objects.bulk_update(rows, ["mu_before", "sigma_before", "mu", "sigma", "ordinal"])


# ---------------------------------------------------------------- a player leaves


@transaction.atomic
def forget_player(user_id: int) -> None:
    """Remove a deleted account from the projections, as a rebuild would leave them.

    Call it after the account is marked deleted (``deleted_at``): its history rows and totals
    go; opponents keep their rows of those matches, with that seat as nobody (as a rebuild
    writes it); and every match from its first one on is re-rated with that seat at the starting
    rating, which is what a rebuild computes for a seat with no account.
    """
    _lock()
    mine = PlayerMatch.objects.filter(player_id=user_id)
    first = mine.order_by("end_event_id").values_list("end_event_id", flat=True).first()
    mine.delete()
    PlayerStats.objects.filter(player_id=user_id).delete()
    PlayerMatch.objects.filter(opponent_1_id=user_id).update(opponent_1=None)
    PlayerMatch.objects.filter(opponent_2_id=user_id).update(opponent_2=None)
    if first is None:
        return
    resolver = PlayerResolver()
    later = list(MatchRecord.objects.filter(end_event_id__gte=first).order_by("end_event_id"))
    rows = list(
        PlayerMatch.objects.filter(end_event_id__gte=first).order_by("end_event_id", "seat")
    )
    touched = {row.player_id for row in rows}
    for record in later:
        touched.update(p for p in resolver.players(record.seats) if p is not None)
    stats = {s.player_id: s for s in PlayerStats.objects.filter(player_id__in=touched)}
    ratings: dict[int, Rating] = {pid: (s.mu, s.sigma) for pid, s in stats.items()}
    for row in reversed(rows):  # the earliest row from there on tells the rating before it
        ratings[row.player_id] = (row.mu_before, row.sigma_before)
    _rerate(later, rows, ratings, resolver)
    for pid, entry in stats.items():
        if pid in ratings:
            set_rating(entry, ratings[pid])
    PlayerStats.objects.bulk_update(stats.values(), ["mu", "sigma", "ordinal"])


# ---------------------------------------------------------------- rebuild


def finished_games() -> list[Any]:
    """Ids of every game whose log has ``match_ended``, in match-end (event id) order."""
    return store.finished_matches()


@transaction.atomic
def rebuild(*, progress: Callable[[Iterable[Any], int], Iterable[Any]] | None = None) -> int:
    """Empty every projection and rebuild it from the event log; returns the matches projected.

    One transaction: readers see the old projections until the new ones are complete.
    ``progress(iterable, total)`` may wrap the loop (a progress bar).
    """
    _lock()
    PlayerStats.objects.all().delete()
    PlayerMatch.objects.all().delete()
    MatchRecord.objects.all().delete()
    games = finished_games()
    resolver = PlayerResolver()
    ratings: dict[int, Rating] = {}
    stats: dict[int, PlayerStats] = {}
    records: list[MatchRecord] = []
    rows: list[PlayerMatch] = []
    done = 0
    for game_id in progress(games, len(games)) if progress else games:
        summary = summarize_match(store.load_events(game_id))
        if summary is None:  # match_ended is in the log, so this cannot happen; skip if it does
            continue
        players = resolver.players([s.spec for s in summary.seats])
        places = [s.placement for s in summary.seats]
        record = match_record(game_id, summary)
        rated = apply_ratings(ratings, players, places, summary.rated)
        new_rows = player_rows(record, summary, players, rated)
        for row in new_rows:
            if row.player_id not in stats:
                stats[row.player_id] = new_stats(row.player_id)
            accumulate(stats[row.player_id], row)
        records.append(record)
        rows.extend(new_rows)
        done += 1
        if len(rows) >= BATCH:
            _flush(records, rows)
    _flush(records, rows)
    for pid, entry in stats.items():
        set_rating(entry, ratings.get(pid, DEFAULT_RATING))
    PlayerStats.objects.bulk_create(stats.values(), batch_size=BATCH)
    return done


def _flush(records: list[MatchRecord], rows: list[PlayerMatch]) -> None:
    MatchRecord.objects.bulk_create(records, batch_size=BATCH)
    PlayerMatch.objects.bulk_create(rows, batch_size=BATCH)
    records.clear()
    rows.clear()
