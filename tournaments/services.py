"""Writes of tournaments (services write, selectors read): create, register, unregister, cancel,
and ``advance``, the one step the scheduler's task takes a tournament through its life.

Each write runs under the tournament's row lock, so a registration and the start never
interleave: a registration that waited on the start finds the event running and is refused
(``RegistrationClosed``), and its buy-in is never taken. Chips move only through the ledger's
keys (``chips.services``): an entry per registration, a refund per registration, a prize per
place, so a task that runs twice, late, or dies half-way moves each exactly once.

``advance`` does whatever is due and nothing else: start (full sit-and-go; scheduled event at
``starts_at``: cancelled below its minimum, else bots fill empty seats when allowed), remind
(before a scheduled start), record the winners of tables whose matches ended, seat the next
stage once a stage is over, and after the final: standings, one ledger entry per prize (each
committed on its own), the tournament seal, finished.
"""

from __future__ import annotations

import logging
import secrets
import time
import uuid
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from chips import services as chips
from core import notices
from games import lobby, seal, store
from games.live.listener import WAKE_USER
from games.models import Game
from games.verify import tournaments as bracket
from games.verify.core import sha256_hex
from tournaments import signals
from tournaments.errors import (
    AlreadyRegistered,
    InvalidTournament,
    NotRegistered,
    RegistrationClosed,
    TournamentFull,
    TournamentNotFound,
    TournamentOver,
)
from tournaments.models import Registration, Series, Table, Tournament, TournamentEvent

logger = logging.getLogger(__name__)

#: The channel the tournaments' loop LISTENs on: a sit-and-go filled, a tournament was created.
CHANNEL = "tournaments"
MAX_NAME = 80
MAX_SEED = 64


# ---------------------------------------------------------------- telling people


def tell(tournament: Tournament, kind: str, user_ids: list[int], **data: Any) -> None:
    """A ``tournament`` frame for each person on ``/me/stream`` (woken on commit)."""
    ids = sorted(set(user_ids))
    if not ids:
        return
    TournamentEvent.objects.bulk_create(
        TournamentEvent(
            user_id=uid,
            tournament=tournament,
            data={
                "kind": kind,
                "tournament_id": str(tournament.pk),
                "name": tournament.name,
                "status": tournament.status,
                **data,
            },
        )
        for uid in ids
    )
    notices.send_many(WAKE_USER, [str(uid) for uid in ids])


def _wake() -> None:
    notices.notify_channel(CHANNEL)


def registered_ids(tournament: Tournament) -> list[int]:
    return list(
        Registration.objects.filter(tournament=tournament, active=True)
        .order_by("id")
        .values_list("user_id", flat=True)
    )


# ---------------------------------------------------------------- create


def _whole(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidTournament(
            _("%(name)s must be a whole number from %(low)s to %(high)s.")
            % {"name": name, "low": low, "high": high}
        )
    return value


def checked_prizes(prizes: Any, size: int) -> list[int]:
    """One to three whole percentages (at most one a table's place: the final has three),
    from the first place down, summing to 100."""
    if (
        not isinstance(prizes, list)
        or not 1 <= len(prizes) <= 3
        or any(isinstance(p, bool) or not isinstance(p, int) or p <= 0 for p in prizes)
        or sum(prizes) != 100
        or prizes != sorted(prizes, reverse=True)
    ):
        raise InvalidTournament(
            _(
                "prizes: one to three whole percentages of the pool, from the first place down, "
                "summing to 100 (e.g. [50, 30, 20])."
            )
        )
    return list(prizes)


@transaction.atomic
def tournament_create(
    *,
    user: Any,
    name: str,
    rules: Any = "standard",
    wins_to_match: int = 1,
    entrants: int = 9,
    buy_in: int = 0,
    fee: int = 0,
    prizes: Any = None,
    bots: bool = False,
    bot_level: str = "normal",
    starts_at: datetime | None = None,
    minimum: int | None = None,
    series: Series | None = None,
) -> Tournament:
    """A tournament open for registration (staff). ``starts_at`` None: a sit-and-go, which
    starts once ``entrants`` people registered; else it starts then, with bots in the empty
    seats when ``bots``, or is cancelled (every buy-in refunded) when fewer than ``minimum``
    people registered (``minimum`` is the whole field without bots)."""
    name = (name or "").strip() if isinstance(name, str) else ""
    if not name or len(name) > MAX_NAME:
        raise InvalidTournament(_("A tournament needs a name of at most 80 characters."))
    if entrants not in bracket.SIZES:
        raise InvalidTournament(_("entrants must be 3, 9 or 27."))
    wins = _whole(wins_to_match, "wins_to_match", 1, lobby.RULE_LIMITS["wins_to_match"])
    spec: dict[str, Any] = {"preset": rules} if isinstance(rules, str) else dict(rules or {})
    spec["wins_to_match"] = wins
    ruleset = lobby.rules_from(spec)
    if not ruleset.turn_seconds:
        raise InvalidTournament(
            _("A tournament's tables need turn_seconds above 0: a player who leaves is timed out.")
        )
    limit = settings.TONGITS_MAX_BUY_IN
    buy_in = _whole(buy_in, "buy_in", 0, limit)
    fee = _whole(fee, "fee", 0, limit)
    shares = checked_prizes([50, 30, 20] if prizes is None else prizes, entrants)
    if bot_level not in lobby.BOT_LEVELS:
        raise InvalidTournament(
            _("Bot level must be one of %(levels)s.") % {"levels": ", ".join(lobby.BOT_LEVELS)}
        )
    if starts_at is not None and starts_at <= timezone.now():
        raise InvalidTournament(_("starts_at must be in the future."))
    if starts_at is None or not bots:
        floor = entrants
    else:
        floor = _whole(3 if minimum is None else minimum, "minimum", 1, entrants)
    seed = secrets.token_hex(32)
    tournament = Tournament.objects.create(
        name=name,
        rules=ruleset.to_dict(),
        wins_to_match=wins,
        size=entrants,
        minimum=floor,
        buy_in=buy_in,
        fee=fee,
        prizes=shares,
        bots=bool(bots),
        bot_level=bot_level,
        starts_at=starts_at,
        seed=seed,
        seed_commitment=bracket.seed_commitment(seed),
        created_by=user,
        series=series,
    )
    _wake()
    return tournament


def replenish() -> int:
    """A new tournament for each active series with none registering; how many were made. A
    series whose settings are refused is logged and left (staff correct it in the admin)."""
    made = 0
    open_ones = Tournament.objects.filter(status=Tournament.Status.REGISTERING)
    for series in Series.objects.filter(active=True).exclude(
        pk__in=open_ones.filter(series__isnull=False).values("series_id")
    ):
        try:
            with transaction.atomic():
                locked = Series.objects.select_for_update().get(pk=series.pk)
                if open_ones.filter(series=locked).exists():
                    continue
                series_tournament(locked)
                made += 1
        except InvalidTournament:
            logger.exception("series %s: its settings are not a tournament's", series.pk)
        except Exception as exc:  # an invalid rules value, a missing creator
            logger.warning("series %s: %s", series.pk, exc)
    return made


def series_tournament(series: Series, *, trial: bool = False) -> Tournament:
    """The next tournament of a series (a sit-and-go), with the series' settings; ``trial``
    (the admin's check of new settings, rolled back) links it to no series."""
    return tournament_create(
        user=None if trial else series.created_by,
        name=series.name,
        rules=series.rules,
        wins_to_match=series.wins_to_match,
        entrants=series.size,
        buy_in=series.buy_in,
        fee=series.fee,
        prizes=series.prizes or None,
        series=None if trial else series,
    )


# ---------------------------------------------------------------- registration


def _locked(tournament_id: uuid.UUID | str) -> Tournament:
    try:
        return Tournament.objects.select_for_update().get(pk=tournament_id)
    except (Tournament.DoesNotExist, ValueError, TypeError):
        raise TournamentNotFound() from None


def _open(tournament: Tournament, now: datetime) -> None:
    if tournament.status != Tournament.Status.REGISTERING or (
        tournament.starts_at is not None and tournament.starts_at <= now
    ):
        raise RegistrationClosed()


@transaction.atomic
def register(*, user: Any, tournament_id: uuid.UUID | str, seed: str | None = None) -> Registration:
    """Take a place: the buy-in goes to the tournament's escrow and the fee to the house, in
    the registration's transaction (``InsufficientChips``: nothing taken, no place). ``seed``
    is the entrant's own contribution to the draw (a random one when absent)."""
    tournament = _locked(tournament_id)
    _open(tournament, timezone.now())
    taken = registered_ids(tournament)
    if user.pk in taken:
        raise AlreadyRegistered()
    if len(taken) >= tournament.size:
        raise TournamentFull()
    entry = Registration.objects.create(
        tournament=tournament, user=user, seed=(seed or secrets.token_hex(16))[:MAX_SEED]
    )
    chips.tournament_enter(
        tournament_id=tournament.pk,
        registration_id=entry.pk,
        user_id=user.pk,
        buy_in=tournament.buy_in,
        fee=tournament.fee,
    )
    tournament.save(update_fields=["updated_at"])
    tell(tournament, "registered", [user.pk], registered=len(taken) + 1)
    if tournament.sit_and_go and len(taken) + 1 == tournament.size:
        _wake()
    return entry


def _refund(tournament: Tournament, entry: Registration) -> None:
    chips.tournament_refund(
        tournament_id=tournament.pk,
        registration_id=entry.pk,
        user_id=entry.user_id,
        buy_in=tournament.buy_in,
        fee=tournament.fee,
    )
    if not entry.refunded:
        entry.refunded = True
        entry.save(update_fields=["refunded"])


@transaction.atomic
def unregister(*, user: Any, tournament_id: uuid.UUID | str) -> None:
    """Give the place back before the start: the buy-in and the fee return to the wallet."""
    tournament = _locked(tournament_id)
    entry = Registration.objects.filter(tournament=tournament, user=user, active=True).first()
    _open(tournament, timezone.now())
    if entry is None:
        raise NotRegistered()
    _withdrawn(tournament, entry, timezone.now())


def _withdrawn(tournament: Tournament, entry: Registration, at: datetime) -> None:
    entry.active, entry.withdrawn_at = False, at
    entry.save(update_fields=["active", "withdrawn_at"])
    _refund(tournament, entry)
    tournament.save(update_fields=["updated_at"])
    tell(tournament, "unregistered", [entry.user_id])


@transaction.atomic
def withdraw(*, user_id: int, tournament_id: uuid.UUID | str, at: datetime) -> None:
    """A deleted account's place in a tournament not started yet, given back (nothing when it
    has started meanwhile: its seat is played by the time-out rule, as at any table)."""
    tournament = _locked(tournament_id)
    entry = Registration.objects.filter(tournament=tournament, user_id=user_id, active=True)
    found = entry.first()
    if found is not None and tournament.status == Tournament.Status.REGISTERING:
        _withdrawn(tournament, found, at)


def _cancel(tournament: Tournament, reason: str) -> None:
    """Call the tournament off (locked by the caller): every place's buy-in and fee back."""
    entries = list(Registration.objects.filter(tournament=tournament, active=True).order_by("id"))
    for entry in entries:
        _refund(tournament, entry)
    tournament.status, tournament.reason = Tournament.Status.CANCELLED, reason
    tournament.finished_at = timezone.now()
    tournament.save(update_fields=["status", "reason", "finished_at", "updated_at"])
    tell(tournament, "cancelled", [e.user_id for e in entries], reason=reason)
    signals.cancelled.send(
        Tournament, tournament_id=tournament.pk, user_ids=[e.user_id for e in entries]
    )


@transaction.atomic
def cancel(*, tournament_id: uuid.UUID | str, reason: str = "cancelled") -> Tournament:
    """Staff call a tournament off before its prizes are paid: every buy-in and fee back,
    once (a second cancel changes nothing). Tables still playing finish for nothing."""
    tournament = _locked(tournament_id)
    if tournament.status == Tournament.Status.CANCELLED:
        return tournament
    if tournament.status == Tournament.Status.FINISHED or tournament.standings is not None:
        raise TournamentOver()
    _cancel(tournament, reason)
    return tournament


# ---------------------------------------------------------------- the life of a tournament


def advance(
    tournament_id: uuid.UUID | str, *, now: datetime | None = None, pay: bool = True
) -> str:
    """Take the tournament one step on, whatever is due (idempotent: ``nothing_to_do`` when
    nothing is). Returns what it did: ``started``, ``cancelled``, ``reminded``, ``seated``,
    ``recorded``, ``finished``, ``busy`` (another run holds it) or ``nothing_to_do``.
    ``pay`` False stops once the standings are fixed (``final_over``), the prizes unpaid."""
    now = now or timezone.now()
    with transaction.atomic():
        tournament = (
            Tournament.objects.select_for_update(skip_locked=True).filter(pk=tournament_id).first()
        )
        if tournament is None:
            return "busy" if Tournament.objects.filter(pk=tournament_id).exists() else "no_game"
        if tournament.status == Tournament.Status.REGISTERING:
            return _registering(tournament, now)
        if tournament.status != Tournament.Status.RUNNING:
            return "nothing_to_do"
        if tournament.standings is None:
            done = _record_tables(tournament, now)
            if done != "final_over" or not pay:
                return done
        elif not pay:
            return "nothing_to_do"
    return pay_and_seal(tournament_id)


def _registering(tournament: Tournament, now: datetime) -> str:
    people = list(
        Registration.objects.filter(tournament=tournament, active=True)
        .select_related("user")
        .order_by("id")
    )
    if tournament.sit_and_go:
        if len(people) < tournament.size:
            return "nothing_to_do"
        _start(tournament, people, now)
        return "started"
    assert tournament.starts_at is not None
    if tournament.starts_at > now:
        ahead = timedelta(seconds=settings.TONGITS_TOURNAMENT_REMIND_SECONDS)
        if tournament.reminded_at is None and tournament.starts_at - now <= ahead:
            tournament.reminded_at = now
            tournament.save(update_fields=["reminded_at", "updated_at"])
            ids = [e.user_id for e in people]
            tell(tournament, "starting", ids, starts_at=tournament.starts_at.isoformat())
            signals.starting.send(
                Tournament,
                tournament_id=tournament.pk,
                user_ids=ids,
                starts_at=tournament.starts_at,
            )
            return "reminded"
        return "nothing_to_do"
    if len(people) < tournament.minimum or not people:
        _cancel(tournament, "below_minimum")
        return "cancelled"
    _start(tournament, people, now)
    return "started"


def _start(tournament: Tournament, people: list[Registration], now: datetime) -> None:
    """Fix the manifest (the people with their seeds, then bots in the empty places), and seat
    the first stage."""
    entrants: list[dict[str, Any]] = [
        {"entrant": n, "kind": "user", "user_id": e.user_id, "seed": e.seed}
        for n, e in enumerate(people)
    ]
    for n in range(len(people), tournament.size):
        entrants.append({"entrant": n, "kind": "bot", "level": tournament.bot_level, "seed": ""})
    tournament.manifest = {
        "name": tournament.name,
        "size": tournament.size,
        "rules": tournament.rules,
        "wins_to_match": tournament.wins_to_match,
        "buy_in": tournament.buy_in,
        "fee": tournament.fee,
        "prizes": tournament.prizes,
        "bots": tournament.bots,
        "starts_at": tournament.starts_at.isoformat() if tournament.starts_at else None,
        "seed_commitment": tournament.seed_commitment,
        "entrants": entrants,
        "pool": tournament.buy_in * len(people),
    }
    tournament.status, tournament.started_at = Tournament.Status.RUNNING, now
    tournament.save(update_fields=["manifest", "status", "started_at", "updated_at"])
    tell(tournament, "started", [e.user_id for e in people])
    _seat_stage(tournament, 1, list(range(tournament.size)))


def _seat_stage(tournament: Tournament, stage: int, playing: list[int]) -> None:
    """Draw ``stage`` from the seed and start its tables (one game each)."""
    manifest = tournament.manifest or {}
    entrants = manifest["entrants"]
    tables = bracket.draw(str(tournament.pk), stage, tournament.seed, entrants, playing)
    users = get_user_model().objects.in_bulk(
        [entrants[e]["user_id"] for t in tables for e in t if entrants[e]["kind"] == "user"]
    )
    for index, drawn in enumerate(tables):
        seats = [
            users[entrants[e]["user_id"]] if entrants[e]["kind"] == "user" else entrants[e]["level"]
            for e in drawn
        ]
        game = lobby.table_arranged(
            seats=seats, rules=tournament.rules, created_by=tournament.created_by
        )
        Table.objects.create(
            tournament=tournament, stage=stage, index=index, entrants=drawn, game_id=game.pk
        )
        people = [entrants[e]["user_id"] for e in drawn if entrants[e]["kind"] == "user"]
        tell(tournament, "table_ready", people, stage=stage, table=index, game_id=str(game.pk))
        signals.table_ready.send(
            Tournament, tournament_id=tournament.pk, user_ids=people, game_id=game.pk, stage=stage
        )
    tournament.stage = stage
    tournament.save(update_fields=["stage", "updated_at"])


def _record_tables(tournament: Tournament, now: datetime) -> str:
    """The winners of the current stage's tables whose matches ended; the next stage seated
    once all have; ``final_over`` once the final's has (standings and prizes fixed)."""
    stages = bracket.stages_of(tournament.size)
    tables = list(Table.objects.filter(tournament=tournament, stage=tournament.stage))
    games = {g.pk: g for g in Game.objects.filter(pk__in=[t.game_id for t in tables])}
    recorded = False
    entrants = (tournament.manifest or {})["entrants"]
    for table in tables:
        game = games.get(table.game_id)
        if table.winner is not None or game is None or game.status != Game.Status.FINISHED:
            continue
        result = bracket.match_result(
            [{"type": r.type, "data": r.data} for r in store.records(game.pk)]
        )
        if result is None:
            continue
        order = [table.entrants[seat] for seat in result[1]]
        table.winner, table.finished_at = order[0], now
        table.ranking = order if tournament.stage == stages else None
        table.save(update_fields=["winner", "ranking", "finished_at"])
        recorded = True
        out = [entrants[e]["user_id"] for e in order[1:] if entrants[e]["kind"] == "user"]
        if tournament.stage < stages:
            tell(tournament, "eliminated", out, stage=tournament.stage)
    if any(t.winner is None for t in tables):
        if recorded:
            tournament.save(update_fields=["updated_at"])
        return "recorded" if recorded else "nothing_to_do"
    if tournament.stage < stages:
        _seat_stage(tournament, tournament.stage + 1, [t.winner for t in tables])
        return "seated"
    every = list(Table.objects.filter(tournament=tournament).values("stage", "entrants", "winner"))
    final = tables[0].ranking or []
    tournament.standings = bracket.standings(tournament.size, every, final)
    manifest = tournament.manifest or {}
    amounts = bracket.prize_amounts(manifest["pool"], manifest["prizes"])
    tournament.prize_entries = [
        {
            "place": place,
            "entrant": final[place - 1],
            "user_id": entrants[final[place - 1]].get("user_id"),
            "amount": amount,
            "key": f"tournament_prize:{tournament.pk}:{place}",
        }
        for place, amount in enumerate(amounts, start=1)
        if amount > 0
    ]
    tournament.save(update_fields=["standings", "prize_entries", "updated_at"])
    return "final_over"


def pay_and_seal(tournament_id: uuid.UUID | str) -> str:
    """After the final: each prize one ledger entry, committed on its own (a run that dies
    half-way leaves the others to the next run, which the keys keep from paying twice); then
    the tournament seal and ``finished``, in one transaction."""
    tournament = Tournament.objects.get(pk=tournament_id)
    if tournament.status != Tournament.Status.RUNNING or tournament.prize_entries is None:
        return "nothing_to_do"
    pause = settings.TONGITS_TOURNAMENT_PRIZE_PAUSE_SECONDS
    for prize in tournament.prize_entries:
        chips.tournament_prize(
            tournament_id=tournament.pk,
            place=prize["place"],
            user_id=prize["user_id"],
            amount=prize["amount"],
        )
        if pause:  # fault drills: a worker killed between two prizes
            time.sleep(pause)
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
        if tournament.status != Tournament.Status.RUNNING:
            return "nothing_to_do"
        tournament.seal = _seal(tournament)
        tournament.status, tournament.finished_at = Tournament.Status.FINISHED, timezone.now()
        tournament.save(update_fields=["seal", "status", "finished_at", "updated_at"])
        ids = registered_ids(tournament)
        tell(tournament, "finished", ids, prizes=tournament.prize_entries)
        signals.finished.send(Tournament, tournament_id=tournament.pk, user_ids=ids)
    return "finished"


def sealed_document(tournament: Tournament, *, mend: bool = False) -> dict[str, Any]:
    """What the tournament seal covers (``bracket.seal_payload`` reads these keys); ``mend``
    (the sealing only) seals a finished match the door missed."""
    tables = []
    for table in Table.objects.filter(tournament=tournament).order_by("stage", "index"):
        found = seal.ensure_sealed(table.game_id) if mend else seal.seal_of(table.game_id)
        match_seal = seal.seal_dict(found)
        tables.append(
            {
                "stage": table.stage,
                "index": table.index,
                "entrants": table.entrants,
                "game": str(table.game_id),
                "winner": table.winner,
                "ranking": table.ranking,
                "match_seal": match_seal,
            }
        )
    return {
        "format": bracket.TOURNAMENT_FORMAT,
        "tournament": str(tournament.pk),
        "manifest": tournament.manifest,
        "seed": tournament.seed,
        "tables": tables,
        "standings": tournament.standings,
        "prizes": [
            {k: p[k] for k in ("place", "entrant", "user_id", "amount")}
            for p in tournament.prize_entries or []
        ],
    }


def _seal(tournament: Tournament) -> dict[str, Any]:
    key = seal.signing_key()
    message = bracket.seal_payload(sealed_document(tournament, mend=True))
    return {
        "key_id": key.key_id,
        "algorithm": "ed25519",
        "signature": key.private.sign(message.encode("ascii")).hex(),
        "signed_at": timezone.now().isoformat().replace("+00:00", "Z"),
        "digest": sha256_hex(message),
    }


# ---------------------------------------------------------------- what is due


_DUE = """
SELECT t.id FROM tournaments_tournament t
WHERE t.status = 'registering' AND (
    t.starts_at <= %(now)s
    OR (t.starts_at <= %(remind)s AND t.reminded_at IS NULL)
    OR (t.starts_at IS NULL AND (
        SELECT count(*) FROM tournaments_registration r
        WHERE r.tournament_id = t.id AND r.active) >= t.size)
)
UNION
SELECT tb.tournament_id FROM tournaments_table tb
JOIN tournaments_tournament t ON t.id = tb.tournament_id
JOIN games_game g ON g.id = tb.game_id
WHERE t.status = 'running' AND tb.winner IS NULL AND g.status = 'finished'
UNION
SELECT t.id FROM tournaments_tournament t
WHERE t.status = 'running' AND (t.standings IS NOT NULL OR t.updated_at < %(stalled)s)
"""


def due(*, now: datetime | None = None, stalled_after: float | None = None) -> list[uuid.UUID]:
    """The tournaments ``advance`` has work for: registering ones full or due (or due a
    reminder), running ones with a table whose match ended unrecorded, or whose prizes are
    unpaid; with ``stalled_after`` (the sweeper), also running ones untouched that long."""
    now = now or timezone.now()
    remind = now + timedelta(seconds=settings.TONGITS_TOURNAMENT_REMIND_SECONDS)
    if stalled_after is None:
        stalled = datetime.min.replace(tzinfo=now.tzinfo)
    else:
        stalled = now - timedelta(seconds=stalled_after)
    with connection.cursor() as cursor:
        cursor.execute(_DUE, {"now": now, "remind": remind, "stalled": stalled})
        return [row[0] for row in cursor.fetchall()]
