"""Finished matches' events packed into one compressed, hash-checked row (``games_eventarchive``).

A running game's events are rows of ``games_event``: one per event, appended by the write door
and never changed. Once a match is over and settled nothing is appended to it again, and its
rows are read rarely (a replay, an export, an audit, a rebuild), so ``compact`` moves them into
one ``EventArchive`` row: about a tenth of the bytes (docs/scaling.md "Storage").

How the append-only story survives the move, in one transaction with the game row locked:

1. the rows are read and their chain is checked as ``verify_events`` checks it (seqs from 1,
   every hash recomputed from the content, the last one the head's ``last_hash``); a game that
   fails is left as it is, its rows the evidence;
2. they are packed (below) and the packed bytes are unpacked again: the hashes recomputed from
   them must be the stored ones, to the last;
3. the archive row is inserted (a trigger makes it write-once: no UPDATE, DELETE or TRUNCATE);
4. the rows are deleted: the events' trigger allows a DELETE only of a seq that its game's
   archive holds, so no other path removes an event.

The packed form (``FORMAT`` 1) is zlib of one JSON document: ``id`` (each event's id as the
difference from the one before), ``actor``, ``at`` (``recorded_at`` as hashed, or 0 when the
same as the event before: one write's events share it), ``check`` (the first 4 bytes of each
event's hash, hex) and ``data`` (each event as stored, keys in PostgreSQL's jsonb order, so
answers render byte for byte as before). Hashes are not stored: ``unpack`` recomputes each one
from the content (``games.verify.event_hash``, the one definition) and checks it against its
``check`` (so a changed event is named by its seq) and the last against the row's
``last_hash`` (so every bit of the content counts).
"""

from __future__ import annotations

import logging
import uuid
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson
from django.db import connection, transaction
from django.utils import timezone

from games import verify
from games.models import EventArchive, Game

logger = logging.getLogger(__name__)

FORMAT = 1
CHECK_BYTES = 4
#: zlib's level: the archive is written once and read rarely.
LEVEL = 9


@dataclass(frozen=True)
class Row:
    """One event as stored (``games_event``'s columns; the hashes as hex)."""

    id: int
    seq: int
    type: str
    data: dict[str, Any]
    actor: str
    recorded_at: datetime
    prev_hash: str
    hash: str


class Broken(Exception):
    """An archive whose content does not hash to what it says: ``seq`` is the first bad one."""

    def __init__(self, seq: int, reason: str) -> None:
        super().__init__(f"seq {seq}: {reason}")
        self.seq = seq
        self.reason = reason


def data_text(data: dict[str, Any]) -> str:
    """An event's data as JSON text, its keys in the order given (the stored jsonb order)."""
    return orjson.dumps(data).decode()


def pack(rows: Sequence[Row]) -> bytes:
    """The compressed form of a whole stream (``rows``: seq 1 to the last, in order)."""
    ids, actors, times, checks, datas = [], [], [], [], []
    last_id, last_at = 0, None
    for row in rows:
        ids.append(row.id - last_id)
        actors.append(row.actor)
        at = row.recorded_at.isoformat()
        times.append(0 if at == last_at else at)
        checks.append(row.hash[: CHECK_BYTES * 2])
        datas.append(row.data)
        last_id, last_at = row.id, at
    document = {
        "format": FORMAT,
        "id": ids,
        "actor": actors,
        "at": times,
        "check": "".join(checks),
        "data": datas,
    }
    return zlib.compress(orjson.dumps(document), LEVEL)


def unpack(
    game_id: str, version: int, last_hash: bytes, packed: bytes, *, strict: bool = True
) -> list[Row]:
    """The rows of an archive, every hash recomputed; ``Broken`` names the first seq whose
    content does not give its recorded hash (or the last, against ``last_hash``).
    ``strict=False`` (the reads): the rows whatever their checks say, as a read of rows gives
    them whatever their chain; ``Broken`` only when the archive cannot be read at all."""
    try:
        document = orjson.loads(zlib.decompress(packed))
        if document.get("format") != FORMAT:
            raise Broken(1, f"unknown archive format {document.get('format')!r}")
        columns = [document[name] for name in ("id", "actor", "at", "data")]
        check = document["check"]
    except (zlib.error, orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        raise Broken(1, "the archive cannot be read") from None
    if any(len(column) != version for column in columns) or len(check) != version * 8:
        raise Broken(min(version, *map(len, columns)) + 1, "the archive misses events")
    rows: list[Row] = []
    prev, event_id, at = verify.GENESIS_HASH, 0, ""
    for seq, (delta, actor, recorded, data) in enumerate(zip(*columns, strict=True), start=1):
        event_id += delta
        at = recorded or at
        digest = verify.event_hash(
            prev, game_id=game_id, seq=seq, actor=actor, recorded_at=at, data=data
        )
        offset = (seq - 1) * CHECK_BYTES * 2
        if strict and digest[: CHECK_BYTES * 2] != check[offset : offset + CHECK_BYTES * 2]:
            raise Broken(seq, "the hash does not match the event")
        kind = data.get("type") if isinstance(data, dict) else None
        rows.append(Row(event_id, seq, kind, data, actor, datetime.fromisoformat(at), prev, digest))
        prev = digest
    if strict and version and prev != last_hash.hex():
        raise Broken(version, "the archived events do not hash to the chain head")
    return rows


def stored(game_id: uuid.UUID | str) -> EventArchive | None:
    """The game's archive row, if it was compacted."""
    return EventArchive.objects.filter(game_id=game_id).first()


def read(game_id: uuid.UUID | str, *, strict: bool = False) -> list[Row] | None:
    """The archived rows of a game (``None``: not archived); ``strict``: ``Broken`` when its
    content does not hash as recorded (``unpack``)."""
    found = stored(game_id)
    if found is None:
        return None
    return unpack(
        str(found.game_id),
        found.version,
        bytes(found.last_hash),
        bytes(found.events),
        strict=strict,
    )


# ---------------------------------------------------------------- compaction

_LIVE_ROWS = """
SELECT id, seq, type, data::text, actor, recorded_at, encode(hash, 'hex')
FROM games_event WHERE game_id = %s ORDER BY seq
"""


def _live_rows(game_id: uuid.UUID) -> list[Row]:
    rows: list[Row] = []
    prev = verify.GENESIS_HASH
    with connection.cursor() as cursor:
        cursor.execute(_LIVE_ROWS, [game_id])
        for event_id, seq, kind, data, actor, at, digest in cursor.fetchall():
            rows.append(Row(event_id, seq, kind, orjson.loads(data), actor, at, prev, digest))
            prev = digest
    return rows


def _sound(game_id: str, rows: Sequence[Row], version: int, last_hash: str) -> bool:
    """The live rows' chain as ``store.verify_chain`` checks it."""
    if len(rows) != version or not rows:
        return False
    prev = verify.GENESIS_HASH
    for seq, row in enumerate(rows, start=1):
        kind = row.data.get("type") if isinstance(row.data, dict) else None
        digest = verify.event_hash(
            prev,
            game_id=game_id,
            seq=seq,
            actor=row.actor,
            recorded_at=row.recorded_at.isoformat(),
            data=row.data,
        )
        if row.seq != seq or digest != row.hash or kind != row.type:
            return False
        prev = digest
    return prev == last_hash


def compact_game(game_id: uuid.UUID) -> str:
    """Pack one finished, settled game's events into its archive and delete its rows (the
    steps of the module's docstring, one transaction): ``archived``, ``not_final``,
    ``archived_before`` or ``broken`` (the rows stay, for ``verify_events`` to name)."""
    with transaction.atomic():
        game = Game.objects.select_for_update().filter(pk=game_id).first()
        if game is None or not _final(game):
            return "not_final"
        if EventArchive.objects.filter(game_id=game_id).exists():
            return "archived_before"
        last_hash = bytes(game.last_hash).hex()
        rows = _live_rows(game.pk)
        if not _sound(str(game.pk), rows, game.version, last_hash):
            return "broken"
        packed = pack(rows)
        again = unpack(str(game.pk), game.version, bytes(game.last_hash), packed)
        if [(r.id, r.hash, r.data, r.recorded_at) for r in again] != [
            (r.id, r.hash, r.data, r.recorded_at) for r in rows
        ]:
            raise RuntimeError(f"{game_id}: the archive does not give the rows back")
        ended = [r.id for r in rows if r.type == "match_ended"]
        EventArchive.objects.create(
            game=game,
            version=game.version,
            last_hash=bytes(game.last_hash),
            ended_id=ended[-1] if ended else None,
            events=packed,
            archived_at=timezone.now(),
        )
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM games_event WHERE game_id = %s", [game.pk])
            if cursor.rowcount != game.version:
                raise RuntimeError(f"{game_id}: {cursor.rowcount} rows deleted, not {game.version}")
    return "archived"


FINAL = (Game.Status.FINISHED, Game.Status.ABORTED)


def _final(game: Game) -> bool:
    """Nothing will ever be appended: over, and the server owes it nothing (settled)."""
    return game.status in FINAL and game.awaiting == Game.Awaiting.NONE and game.version > 0


def compact(min_age: timedelta, limit: int | None = None) -> dict[str, int]:
    """``compact_game`` for every game ``compactable`` gives: how many had each outcome (a
    broken game is logged, and left for ``verify_events`` to name)."""
    outcomes: dict[str, int] = {}
    for game_id in compactable(min_age, limit):
        outcome = compact_game(game_id)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if outcome == "broken":
            logger.error("compaction: the chain of game %s does not verify; not packed", game_id)
    return outcomes


def compactable(min_age: timedelta, limit: int | None = None) -> list[uuid.UUID]:
    """Games over and settled for at least ``min_age`` whose events are still rows, oldest
    first (``min_age`` leaves the notifier, which reads the rows as they are appended, its
    time)."""
    cutoff = timezone.now() - min_age
    qs = (
        Game.objects.filter(
            status__in=FINAL, awaiting=Game.Awaiting.NONE, version__gt=0, updated_at__lte=cutoff
        )
        .exclude(pk__in=EventArchive.objects.values("game_id"))
        .order_by("updated_at", "id")
        .values_list("pk", flat=True)
    )
    return list(qs[:limit] if limit is not None else qs)


def stored_version(game_id: uuid.UUID | str) -> int:
    """How many events the game's archive holds (0: none)."""
    found = EventArchive.objects.filter(game_id=game_id).values_list("version", flat=True)
    return found.first() or 0


def ended() -> list[tuple[int, uuid.UUID]]:
    """(the ``match_ended`` event's id, game id) of every archived finished match."""
    return list(
        EventArchive.objects.filter(ended_id__isnull=False).values_list("ended_id", "game_id")
    )
