"""Reads of accounts data (HackSoft styleguide: selectors read, services write).

Match history, stats and the leaderboard read the projections of ``accounts.projections``; they
hold finished matches only, so a public profile never shows a match in play.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet
from django.db.models.functions import Lower
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy

from accounts.models import (
    PASSWORD_METHOD,
    Login,
    LoginClaim,
    MatchRecord,
    PlayerMatch,
    PlayerStats,
    Session,
    User,
)
from chips import selectors as chips_selectors
from core.errors import NotFound
from games import selectors as games_selectors
from games.players import GONE, present_seats, shown
from games.rules.rating import DEFAULT_RATING, ordinal

#: More sections of ``/me/export`` from the apps above accounts (the table chat), which fill
#: this in at start-up: ``name -> section(user)``, a JSON-ready value under that key.
EXPORT_SECTIONS: dict[str, Callable[[User], Any]] = {}


class PlayerNotFound(NotFound):
    detail = gettext_lazy("No such player.")


class MatchNotFound(NotFound):
    detail = gettext_lazy("No finished match with that id.")


def _by_username(username: str) -> QuerySet[User]:
    # lower(username) = ... uses the case-insensitive unique index (iexact would not).
    return User.objects.annotate(username_lower=Lower("username")).filter(
        username_lower=username.lower()
    )


def player_get(*, username: str) -> User:
    """An active account (a person or a bot level) by username, ignoring case."""
    user = _by_username(username).filter(is_active=True).first()
    if user is None:
        raise PlayerNotFound()  # the name asked for is not echoed: it may be a deleted one
    return user


def player_match_list(
    *,
    player: User,
    result: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    opponent: str | None = None,
    rules: str | None = None,
) -> QuerySet[PlayerMatch]:
    """The player's finished matches, newest first (``since`` <= ended_at < ``until``).

    Served by the (player, -ended_at, -id) index; the other filters narrow that scan.
    """
    qs = PlayerMatch.objects.filter(player=player)
    if result:
        qs = qs.filter(result=result)
    if since:
        qs = qs.filter(ended_at__gte=since)
    if until:
        qs = qs.filter(ended_at__lt=until)
    if rules:
        qs = qs.filter(rules_preset=rules)
    if opponent:
        other = _by_username(opponent).values_list("pk", flat=True).first()
        if other is None:
            return qs.none()
        qs = qs.filter(Q(opponent_1_id=other) | Q(opponent_2_id=other))
    return qs.select_related("opponent_1", "opponent_2").order_by("-ended_at", "-id")


def replay_url(game_id: uuid.UUID | str) -> str:
    return reverse("game-replay", kwargs={"game_id": game_id})


def match_url(game_id: uuid.UUID | str) -> str:
    return reverse("match-detail", kwargs={"game_id": game_id})


def rating_dict(mu: float, sigma: float) -> dict[str, float]:
    """The rating as the API shows it: conservative ``ordinal`` (mu - 3 sigma), mu, sigma."""
    return {"ordinal": ordinal(mu, sigma), "mu": mu, "sigma": sigma}


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def player_stats(*, player: User) -> dict[str, Any]:
    """A player's totals and rating (zeros and the starting rating before any match)."""
    stats = PlayerStats.objects.filter(player=player).first()
    if stats is None:
        stats = PlayerStats(player=player, mu=DEFAULT_RATING[0], sigma=DEFAULT_RATING[1])
    rounds = stats.rounds_played
    return {
        "username": player.username,
        "display_name": player.shown_name,
        "avatar": player.avatar_key,
        "is_bot": player.is_bot,
        "matches": stats.matches,
        "wins": stats.wins,
        "losses": stats.matches - stats.wins,
        "win_rate": _ratio(stats.wins, stats.matches),
        "rounds_played": rounds,
        "rounds_won": stats.rounds_won,
        "rounds_won_by": {
            "tongits": stats.tongits_wins,
            "draw": stats.draw_wins,
            "stock_out": stats.stock_out_wins,
        },
        "rounds_lost_to": {
            "tongits": stats.tongits_losses,
            "draw": stats.draw_losses,
            "stock_out": stats.stock_out_losses,
        },
        "rounds_without_winner": stats.rounds_without_winner,
        "times_burned": stats.times_burned,
        "draw_calls": stats.draw_calls,
        "draw_calls_won": stats.draw_calls_won,
        "draw_call_success": _ratio(stats.draw_calls_won, stats.draw_calls),
        "challenges": stats.challenges,
        "challenges_won": stats.challenges_won,
        "time_outs": stats.time_outs,
        "chips_net": stats.chips,
        "average_deadwood": _ratio(stats.deadwood_total, rounds),
        "rating": rating_dict(stats.mu, stats.sigma),
        "last_match_at": stats.last_match_at,
    }


def leaderboard(*, min_games: int = 1) -> QuerySet[PlayerStats]:
    """Players (bots included) by conservative rating, best first, with at least ``min_games``."""
    return (
        PlayerStats.objects.filter(matches__gte=min_games, player__is_active=True)
        .select_related("player")
        .order_by("-ordinal", "player_id")
    )


def match_detail(*, game_id: uuid.UUID | str) -> dict[str, Any]:
    """A finished match: rules, times, each seat's result and every round; links to replay."""
    try:
        record = MatchRecord.objects.get(pk=game_id)
    except (MatchRecord.DoesNotExist, ValueError, ValidationError):
        raise MatchNotFound() from None
    rows = {
        row.seat: row for row in PlayerMatch.objects.filter(match=record).select_related("player")
    }
    seats = []
    seen = present_seats(record.seats)  # names now, from the user ids (never stored ones)
    for index, spec in enumerate(record.seats):
        row = rows.get(index)
        face = shown(row.player).fields() if row else seen[index]
        entry: dict[str, Any] = {
            "seat": index,
            "kind": spec.get("kind", "user"),
            "username": face.get("username"),
            "display_name": face.get("display_name"),
            "avatar": face.get("avatar"),
            "level": spec.get("level"),
            "placement": record.placements[index],
            "rounds_won": record.round_wins[index],
            "chips": sum(r["payouts"][index] for r in record.rounds),
            "rating_before": rating_dict(row.mu_before, row.sigma_before) if row else None,
            "rating_after": rating_dict(row.mu, row.sigma) if row else None,
        }
        seats.append(entry)
    return {
        "game_id": record.pk,
        "rules_preset": record.rules_preset,
        "rules": record.rules,
        "rated": record.rated,
        "started_at": record.started_at,
        "ended_at": record.ended_at,
        "winner_seat": record.winner_seat,
        "seats": seats,
        "rounds": record.rounds,
        "replay": replay_url(record.pk),
        "audit": reverse("game-audit", kwargs={"game_id": record.pk}),
        "settlement": chips_selectors.settlement(game_id=record.pk),
    }


def history_item(row: PlayerMatch) -> dict[str, Any]:
    """One row of a player's history as the API shows it (opponents selected with the row)."""
    return {
        "match_id": row.match_id,
        "url": match_url(row.match_id),
        "replay": replay_url(row.match_id),
        "started_at": row.started_at,
        "ended_at": row.ended_at,
        "rules_preset": row.rules_preset,
        "seat": row.seat,
        "result": row.result,
        "placement": row.placement,
        "resigned": row.resigned,
        "rounds_played": row.rounds_played,
        "rounds_won": row.rounds_won,
        "rounds_won_by": {
            "tongits": row.tongits_wins,
            "draw": row.draw_wins,
            "stock_out": row.stock_out_wins,
        },
        "rounds_lost_to": {
            "tongits": row.tongits_losses,
            "draw": row.draw_losses,
            "stock_out": row.stock_out_losses,
        },
        "rounds_without_winner": row.rounds_without_winner,
        "times_burned": row.times_burned,
        "draw_calls": row.draw_calls,
        "draw_calls_won": row.draw_calls_won,
        "challenges": row.challenges,
        "challenges_won": row.challenges_won,
        "time_outs": row.time_outs,
        "chips": row.chips,
        "average_deadwood": _ratio(row.deadwood_total, row.rounds_played),
        "opponents": [
            {**(shown(other) if other else GONE).fields(), "is_bot": bool(other and other.is_bot)}
            for other in (row.opponent_1, row.opponent_2)
        ],
        "rating_before": rating_dict(row.mu_before, row.sigma_before),
        "rating_after": rating_dict(row.mu, row.sigma),
    }


def leaderboard_entry(
    stats: PlayerStats, rank: int, chips: dict[int, int] | None = None
) -> dict[str, Any]:
    """One place on the leaderboard; ``chips`` maps listed players to their chips."""
    return {
        "rank": rank,
        **shown(stats.player).fields(),
        "is_bot": stats.player.is_bot,
        "rating": rating_dict(stats.mu, stats.sigma),
        "matches": stats.matches,
        "wins": stats.wins,
        "win_rate": _ratio(stats.wins, stats.matches),
        "chips_net": stats.chips,
        "chips": (chips or {}).get(stats.player_id),
    }


def leaderboard_page(
    *, order: str = "rating", min_games: int = 1, limit: int = 50, offset: int = 0
) -> dict[str, Any]:
    """A page of the leaderboard: by rating (every player with ``min_games``), or by chips
    (players who chose to list their balance; private by default)."""
    if order == "chips":
        board = chips_selectors.leaderboard()
        rows = list(board[offset : offset + limit])
        chips = {row.account.user_id: row.total for row in rows}
        found = PlayerStats.objects.filter(player_id__in=chips).select_related("player")
        by_player = {s.player_id: s for s in found}
        entries = []
        for index, row in enumerate(rows):
            user = row.account.user
            stats = by_player.get(user.pk) or PlayerStats(
                player=user, mu=DEFAULT_RATING[0], sigma=DEFAULT_RATING[1]
            )
            entries.append(leaderboard_entry(stats, offset + index + 1, chips))
        return {"count": board.count(), "results": entries}
    board = leaderboard(min_games=min_games)
    page = list(board[offset : offset + limit])
    chips = chips_selectors.listed_chips([s.player_id for s in page])
    entries = [
        leaderboard_entry(stats, offset + index + 1, chips) for index, stats in enumerate(page)
    ]
    return {"count": board.count(), "results": entries}


def session_entry(session: Session, *, current: bool = False) -> dict[str, Any]:
    """One session as the API shows it (never its key or digest)."""
    return {
        "id": session.pk,
        "device": session.device,
        "created_at": session.created,
        "last_used_at": session.last_used_at or session.created,
        "expires_at": session.expiry,
        "expired": session.expiry is not None and session.expiry <= timezone.now(),
        "current": current,
    }


def session_list(*, user: User, current: Any = None) -> list[dict[str, Any]]:
    """The user's sessions, newest first (expired ones too, until purged, flagged as such)."""
    mine = getattr(current, "pk", None)
    return [
        session_entry(session, current=session.pk == mine)
        for session in Session.objects.filter(user=user).order_by("-created", "pk")
    ]


def login_list(*, user: User) -> list[dict[str, Any]]:
    """The ways into ``user``'s account, never a secret: ``method``, ``created_at``,
    ``last_used_at`` and, by method, the username, the device's name or the verified e-mail."""
    entries: list[dict[str, Any]] = []
    if user.has_usable_password():
        entries.append(
            {
                "method": PASSWORD_METHOD,
                "username": user.username,
                "created_at": None,
                "last_used_at": user.last_login,
            }
        )
    for login in Login.objects.filter(user=user):
        entry: dict[str, Any] = {
            "method": login.method,
            "created_at": login.created_at,
            "last_used_at": login.last_used_at,
        }
        if login.method == Login.Method.DEVICE:
            entry["device"] = login.label
        else:
            entry["email"] = login.email
        entries.append(entry)
    return entries


def ordinals(user_ids: Iterable[int]) -> dict[int, float]:
    """Each user's conservative rating (mu - 3 sigma), the starting one (0) without a match."""
    wanted = set(user_ids)
    found = dict(
        PlayerStats.objects.filter(player_id__in=wanted).values_list("player_id", "ordinal")
    )
    start = ordinal(*DEFAULT_RATING)
    return {uid: found.get(uid, start) for uid in wanted}


def linked_pairs(user_ids: Iterable[int]) -> set[frozenset[int]]:
    """The pairs of these accounts that ever held one identity (a device key, an Apple or
    Google sign-in) in turn: one person's accounts, as far as the server can tell."""
    wanted = set(user_ids)
    if len(wanted) < 2:
        return set()
    held: dict[tuple[str, str], set[int]] = {}
    rows = LoginClaim.objects.filter(user_id__in=wanted).values_list("method", "subject", "user_id")
    for method, subject, user_id in rows:
        held.setdefault((method, subject), set()).add(user_id)
    return {frozenset((a, b)) for users in held.values() for a in users for b in users if a < b}


def account_export(*, user: User, current: Any = None) -> dict[str, Any]:
    """Everything the server holds about the user, as one JSON-ready document: the account,
    sessions (never their keys), their wallet and every entry of it, history, totals, and each
    game they played as their own seat's feed (other seats' hidden cards stay hidden, even
    after the match); then the sections of the apps above (``EXPORT_SECTIONS``)."""
    games = []
    for game in games_selectors.games_of_user(user=user):
        entry: dict[str, Any] = {
            "game_id": str(game.pk),
            "status": game.status,
            "created_at": game.created_at,
            "rules": game.rules,
        }
        if game.version:
            feed = games_selectors.seat_feed(game_id=game.pk, user=user)
            entry.update(seat=feed["seat"], seats=feed["seats"], events=feed["events"])
        games.append(entry)
    return {
        "exported_at": timezone.now(),
        "chips": chips_selectors.export(user_id=user.pk),
        "account": {
            "id": user.pk,
            "username": user.username,
            "email": user.email,
            "date_joined": user.date_joined,
            "last_login": user.last_login,
            "display_name": user.display_name,
            "avatar": user.avatar,
            "country": user.country,
            "language": user.language,
        },
        "sessions": session_list(user=user, current=current),
        "logins": login_list(user=user),
        "history": [history_item(row) for row in player_match_list(player=user)],
        "stats": player_stats(player=user),
        "games": games,
        **{name: section(user) for name, section in EXPORT_SECTIONS.items()},
    }
