"""Reads of tournaments: the list, one tournament with its stages and tables, its export.

Names are resolved when read (``games.players``), never stored in the manifest, which names
people by user id only. The seating seed shows only once the tournament has finished (its
commitment always shows).
"""

from __future__ import annotations

import uuid
from typing import Any

from chips import services as chips
from games import players, seal
from games import selectors as game_selectors
from games.models import Game
from games.verify import tournaments as bracket
from tournaments.errors import TournamentNotFinished, TournamentNotFound
from tournaments.models import Registration, Table, Tournament
from tournaments.services import sealed_document


def tournament_get(tournament_id: uuid.UUID | str) -> Tournament:
    try:
        return Tournament.objects.get(pk=tournament_id)
    except (Tournament.DoesNotExist, ValueError, TypeError):
        raise TournamentNotFound() from None


def tournament_list(*, status: str | None = None, limit: int = 100) -> list[Tournament]:
    """Tournaments by status (all when None): registering ones by start (sit-and-gos first),
    the others newest first."""
    qs = Tournament.objects.all()
    if status:
        qs = qs.filter(status=status)
    if status == Tournament.Status.REGISTERING:
        qs = qs.order_by("starts_at", "created_at")
    return list(qs[:limit])


def _counts(ids: list[Any]) -> dict[Any, int]:
    from django.db.models import Count

    rows = (
        Registration.objects.filter(tournament_id__in=ids, active=True)
        .values("tournament_id")
        .annotate(n=Count("id"))
    )
    return {row["tournament_id"]: row["n"] for row in rows}


def summary(tournament: Tournament, registered: int, user: Any = None) -> dict[str, Any]:
    """What a list shows of one tournament."""
    return {
        "id": tournament.pk,
        "name": tournament.name,
        "status": tournament.status,
        "reason": tournament.reason or None,
        "format": "sit_and_go" if tournament.sit_and_go else "scheduled",
        "rules": tournament.rules,
        "wins_to_match": tournament.wins_to_match,
        "entrants": tournament.size,
        "minimum": tournament.minimum,
        "registered": registered,
        "buy_in": tournament.buy_in,
        "fee": tournament.fee,
        "prizes": tournament.prizes,
        "pool": tournament.buy_in * registered
        if tournament.manifest is None
        else tournament.manifest["pool"],
        "bots": tournament.bots,
        "starts_at": tournament.starts_at,
        "started_at": tournament.started_at,
        "finished_at": tournament.finished_at,
        "stage": tournament.stage,
        "stages": bracket.stages_of(tournament.size),
        "seed_commitment": tournament.seed_commitment,
        "registered_me": _registered_me(tournament, user),
    }


def _registered_me(tournament: Tournament, user: Any) -> bool:
    if user is None or not getattr(user, "pk", None):
        return False
    return Registration.objects.filter(tournament=tournament, user_id=user.pk, active=True).exists()


def summaries(tournaments: list[Tournament], user: Any = None) -> list[dict[str, Any]]:
    counts = _counts([t.pk for t in tournaments])
    return [summary(t, counts.get(t.pk, 0), user) for t in tournaments]


def _entrant(entry: dict[str, Any], names: dict[int, str]) -> dict[str, Any]:
    if entry["kind"] == "user":
        return {
            "entrant": entry["entrant"],
            "kind": "user",
            "user_id": entry["user_id"],
            "username": names.get(entry["user_id"]),
            "level": None,
        }
    return {
        "entrant": entry["entrant"],
        "kind": "bot",
        "user_id": None,
        "username": None,
        "level": entry.get("level"),
    }


def tournament_detail(*, tournament_id: uuid.UUID | str, user: Any = None) -> dict[str, Any]:
    """One tournament: its entrants (the manifest's once started, else who registered), its
    stages with their tables (game ids, live status, winners), standings and prizes."""
    tournament = tournament_get(tournament_id)
    people = list(
        Registration.objects.filter(tournament=tournament, active=True)
        .order_by("id")
        .values_list("user_id", flat=True)
    )
    out = summary(tournament, len(people), user)
    manifest = tournament.manifest
    if manifest is None:
        listed = [{"entrant": n, "kind": "user", "user_id": u} for n, u in enumerate(people)]
    else:
        listed = manifest["entrants"]
    names = players.names([e["user_id"] for e in listed if e["kind"] == "user"])
    entrants = [_entrant(e, names) for e in listed]
    tables = list(Table.objects.filter(tournament=tournament).order_by("stage", "index"))
    games = dict(
        Game.objects.filter(pk__in=[t.game_id for t in tables]).values_list("pk", "status")
    )
    stages: dict[int, list[dict[str, Any]]] = {}
    for table in tables:
        stages.setdefault(table.stage, []).append(
            {
                "index": table.index,
                "entrants": table.entrants,
                "game_id": table.game_id,
                "game_status": games.get(table.game_id),
                "winner": table.winner,
                "ranking": table.ranking,
            }
        )
    finished = tournament.status == Tournament.Status.FINISHED
    out.update(
        {
            "entrants_list": entrants,
            "stages_list": [{"stage": s, "tables": t} for s, t in sorted(stages.items())],
            "standings": tournament.standings if finished else None,
            "prize_entries": [
                {k: p[k] for k in ("place", "entrant", "user_id", "amount")}
                for p in tournament.prize_entries or []
            ]
            if finished
            else None,
            "seed": tournament.seed if finished else None,
            "manifest_fixed": manifest is not None,
            "escrow": chips.escrow_balance(tournament.pk),
        }
    )
    return out


def export(*, tournament_id: uuid.UUID | str, user: Any) -> dict[str, Any]:
    """GET /tournaments/{id}/export: the sealed document with every table's match export (for
    ``python -m games.verify``); 409 ``tournament_not_finished`` before the end."""
    tournament = tournament_get(tournament_id)
    if tournament.status != Tournament.Status.FINISHED or not tournament.seal:
        raise TournamentNotFinished()
    doc = sealed_document(tournament)
    for table in doc["tables"]:
        table["export"] = game_selectors.export(game_id=table["game"], user=user)
    doc["seal"] = tournament.seal
    doc["keys"] = [
        {
            **k,
            "valid_from": k["valid_from"].isoformat().replace("+00:00", "Z"),
            "valid_to": k["valid_to"].isoformat().replace("+00:00", "Z") if k["valid_to"] else None,
        }
        for k in seal.public_keys()
    ]
    return doc
