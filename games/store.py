"""The event store: events, versions and hashes. It knows no rule of Tongits.

Every game is an append-only stream of ``games_event`` rows beside one ``games_game`` row that
holds the stream's head: ``version``, ``last_hash`` and a snapshot of the state at that version
(plus projection columns the application computes). A write is two round trips:

1. ``read(game_id)``: one SELECT of the head (and of a stored idempotent reply, when asked);
2. ``write(head, ...)``: one statement that updates the head *where its version is still the one
   read* and inserts the events, the idempotency record and a ``pg_notify('game_events',
   '<game>:<version>:<rows>')`` only if that update matched (``notice``). In autocommit it is
   its own transaction; a NOTIFY fires only on commit.

Two writers from the same version cannot both succeed: PostgreSQL re-checks the ``version = %s``
condition after waiting for the other writer's row lock, so the second matches no row and gets
``StaleVersion`` with nothing appended. The unique ``(game, seq)`` constraint backs that up.

Each event's ``hash`` is ``sha256(prev_hash + canonical JSON)`` of the envelope ``{"game", "seq",
"actor", "recorded_at", "data"}`` (keys sorted, compact separators), with ``prev_hash`` of the
first event ``"0" * 64``; ``last_hash`` on the head saves a read of the previous event. Hashes are
hex text everywhere in Python and in answers, and 32 bytes in the tables; ``prev_hash`` is not
stored: a read derives it from the event before (``load_events``).

A finished, settled match's rows may be packed into one archive row (``games.archive``); every
read here (``load_events``, ``event_data``, ``records``, ``verify_chain``) reads the archive
when the rows are gone, and gives the same answers.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection

from core import notices, prepared
from games import archive, verify
from games.errors import GameNotFound, StaleVersion
from games.models import Event, Game
from games.rules import GameState, fold, state_from_dict

GENESIS_HASH = verify.GENESIS_HASH
NOTIFY_CHANNEL = notices.CHANNEL

#: The projection columns of ``games_game`` that a write sets, besides version and last_hash.
COLUMNS = (
    "status",
    "phase",
    "round",
    "current_seat",
    "turn_deadline",
    "winner_seat",
    "awaiting",
    "due_at",
    "started_at",
    "finished_at",
)


# ---------------------------------------------------------------- hashing


def canonical_json(value: Any) -> str:
    """The one text form that is hashed: sorted keys, no spaces, ASCII only."""
    return verify.canonical_json(value)


def event_hash(
    prev_hash: str,
    *,
    game_id: uuid.UUID | str,
    seq: int,
    actor: str,
    recorded_at: datetime,
    data: dict[str, Any],
) -> str:
    """The chain link of one event (``games.verify.event_hash``, the one definition)."""
    return verify.event_hash(
        prev_hash,
        game_id=str(game_id),
        seq=seq,
        actor=actor,
        recorded_at=recorded_at.isoformat(),
        data=data,
    )


# ---------------------------------------------------------------- the head


@dataclass(frozen=True)
class StoredReply:
    """The first answer to an idempotent request (``games_idempotencyrecord``)."""

    game_id: str
    fingerprint: str
    status: int
    body: str


@dataclass(frozen=True)
class Head:
    """A game row as one read saw it: the stream's version and hash, the snapshot at that
    version, and the projection columns the application needs to compute the next ones."""

    game_id: uuid.UUID
    version: int
    last_hash: str
    snapshot: dict[str, Any] | None
    rules: dict[str, Any]
    created_by_id: int | None
    status: str
    settled_at: datetime | None
    turn_deadline: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    reply: StoredReply | None = None
    decoded: GameState | None = field(default=None, compare=False, repr=False)
    # Who may watch, and how far behind (fixed when the table is created).
    visibility: str = "private"
    spectator_delay: int = 0
    # Other processes' appends heard since ``base`` (``advance``), folded on when first needed.
    base: Head | None = field(default=None, compare=False, repr=False)
    unfolded: tuple[Any, ...] = field(default=(), compare=False, repr=False)

    def moved(self, **changes: Any) -> Head:
        """A copy with ``changes``: ``dataclasses.replace`` without its field checks, which cost
        a visible share of a move (a head moves on at every append, in every process)."""
        assert changes.keys() <= _HEAD_FIELDS, changes.keys() - _HEAD_FIELDS
        new = object.__new__(Head)
        new.__dict__.update(self.__dict__, **changes)
        return new

    def state(self) -> GameState | None:
        """The rules state at ``version`` (``None`` before the first event)."""
        if self.decoded is not None:
            return self.decoded
        # Another thread may fold this head meanwhile; it sets ``decoded`` first, then clears
        # ``base``, then ``unfolded``: read in the opposite order, the pair is never mixed.
        unfolded = self.unfolded
        base = self.base
        if base is not None:
            state = fold(unfolded, base.state())
            object.__setattr__(self, "decoded", state)  # the same for every caller: kept
            # Kept, the heads before this one would chain every earlier head of the game (each
            # with its state) into memory.
            object.__setattr__(self, "base", None)
            object.__setattr__(self, "unfolded", ())
            return state
        if self.decoded is not None:  # folded by another thread since the first look
            return self.decoded
        return state_at(self.game_id, self.version, self.snapshot)


_HEAD_FIELDS = frozenset(Head.__dataclass_fields__)


class HeadCache:
    """The heads this process last read or wrote, per game (least recently used out first).

    A state at a version never changes, so a cached head is never wrong about its version: it
    can only be behind the game. A write from a cached head is conditional like any other, so
    a game that moved on meanwhile gives ``StaleVersion`` and nothing is written; the cache only
    spares the read when this process saw the game last. Only committed heads are kept (reads
    and writes outside a transaction), so a rolled-back write can never be cached.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._heads: OrderedDict[uuid.UUID, Head] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, game_id: uuid.UUID, version: int) -> Head | None:
        """The cached head of ``game_id`` if it is at ``version``."""
        with self._lock:
            head = self._heads.get(game_id)
            if head is None or head.version != version:
                return None
            self._heads.move_to_end(game_id)
            return head

    def put(self, head: Head, *, committed: bool = False) -> None:
        """Keep ``head`` (``committed``: known to be committed, as a notice's is)."""
        if self.size <= 0 or (not committed and connection.in_atomic_block):
            return
        with self._lock:
            old = self._heads.get(head.game_id)
            if old is not None and old.version > head.version:
                return  # a slower reader must not replace a newer head
            self._heads[head.game_id] = head
            self._heads.move_to_end(head.game_id)
            while len(self._heads) > self.size:
                self._heads.popitem(last=False)

    def holds(self, game_id: uuid.UUID) -> bool:
        """Whether a head of ``game_id`` is kept (at whatever version)."""
        return game_id in self._heads

    def forget(self, game_id: uuid.UUID) -> None:
        with self._lock:
            self._heads.pop(game_id, None)

    def clear(self) -> None:
        with self._lock:
            self._heads.clear()


heads = HeadCache(settings.TONGITS_HEAD_CACHE_SIZE)


_READ = """
SELECT g.version, encode(g.last_hash, 'hex'), g.snapshot::text, g.rules::text, g.created_by_id,
       g.status, g.settled_at, g.turn_deadline, g.started_at, g.finished_at, g.visibility,
       g.spectator_delay{reply_columns}
FROM games_game g{reply_join}
WHERE g.id = %(id)s
"""
_READ_PLAIN = _READ.format(reply_columns="", reply_join="")
_READ_REPLY = _READ.format(
    reply_columns=", r.game_id, r.fingerprint, r.response_status, r.response_body",
    reply_join=" LEFT JOIN games_idempotencyrecord r ON r.user_id = %(user)s AND r.key = %(key)s",
)


def _execute(sql: str, params: dict[str, Any]) -> tuple[Any, ...] | None:
    """Run one statement prepared on Django's connection (``core.prepared``), so a
    move's read and write are executed, not parsed and planned again; its first row."""
    return prepared.fetch_one(sql, params)


def parse_id(game_id: uuid.UUID | str) -> uuid.UUID:
    """The game id as a UUID; ``GameNotFound`` for anything that is not one."""
    if isinstance(game_id, uuid.UUID):
        return game_id
    try:
        return uuid.UUID(str(game_id))
    except ValueError:
        raise GameNotFound() from None


def read(game_id: uuid.UUID | str, *, reply_for: tuple[int, str] | None = None) -> Head:
    """The game's head in one query; ``reply_for=(user_id, key)`` also fetches a stored reply."""
    gid = parse_id(game_id)
    if reply_for is None:
        row = _execute(_READ_PLAIN, {"id": gid})
    else:
        row = _execute(_READ_REPLY, {"id": gid, "user": reply_for[0], "key": reply_for[1]})
    if row is None:
        raise GameNotFound()
    reply = None
    if reply_for is not None and row[12] is not None:
        reply = StoredReply(str(row[12]), row[13], row[14], row[15])
    head = Head(
        game_id=gid,
        version=row[0],
        last_hash=row[1] or GENESIS_HASH,
        snapshot=orjson.loads(row[2]) if row[2] else None,
        rules=orjson.loads(row[3]) if row[3] else {},
        created_by_id=row[4],
        status=row[5],
        settled_at=row[6],
        turn_deadline=row[7],
        started_at=row[8],
        finished_at=row[9],
        reply=reply,
        visibility=row[10],
        spectator_delay=row[11],
    )
    if reply is None:
        heads.put(head)
    return head


def current_version(game_id: uuid.UUID | str) -> int:
    version = Game.objects.filter(pk=parse_id(game_id)).values_list("version", flat=True).first()
    if version is None:
        raise GameNotFound()
    return version


# ---------------------------------------------------------------- write


@dataclass(frozen=True)
class StoredEvent:
    """One appended event, as the feed shows it (the same fields as a ``games_event`` row)."""

    game_id: uuid.UUID
    seq: int
    type: str
    data: dict[str, Any]
    actor: str
    recorded_at: datetime
    prev_hash: str
    hash: str
    id: int | None = None  # the row's id (None for rows not read from the table)


@dataclass(frozen=True)
class Reply:
    """An idempotent request's answer, written with the events it reports."""

    user_id: int
    key: str
    fingerprint: str
    status: int
    body: str


_WRITE = """
WITH g AS (
    UPDATE games_game SET version = %(version)s, last_hash = decode(%(last_hash)s, 'hex'),
        snapshot = %(snapshot)s::jsonb, status = %(status)s, phase = %(phase)s,
        round = %(round)s, current_seat = %(current_seat)s, turn_deadline = %(turn_deadline)s,
        winner_seat = %(winner_seat)s, awaiting = %(awaiting)s, due_at = %(due_at)s,
        started_at = %(started_at)s, finished_at = %(finished_at)s, updated_at = %(now)s
    WHERE id = %(id)s AND version = %(expected)s
    RETURNING id
), e AS (
    INSERT INTO games_event (game_id, seq, type, data, actor, recorded_at, hash)
    SELECT g.id, x.seq, x.type, x.data, x.actor, x.recorded_at, decode(x.hash, 'hex')
    FROM g CROSS JOIN jsonb_to_recordset(%(events)s::jsonb) AS x(
        seq integer, type text, data jsonb, actor text, recorded_at timestamptz, hash text)
    RETURNING 1
){reply_cte}, n AS (
    SELECT pg_notify('{channel}', %(notify)s) FROM g
)
SELECT (SELECT count(*) FROM g), (SELECT count(*) FROM e), (SELECT count(*) FROM n)
"""
_REPLY_CTE = """, r AS (
    INSERT INTO games_idempotencyrecord
        (user_id, key, game_id, fingerprint, response_status, response_body, created_at)
    SELECT %(r_user)s, %(r_key)s, g.id, %(r_fingerprint)s, %(r_status)s, %(r_body)s, %(now)s
    FROM g
    RETURNING 1
)"""
_WRITE_PLAIN = _WRITE.format(reply_cte="", channel=NOTIFY_CHANNEL)
_WRITE_REPLY = _WRITE.format(reply_cte=_REPLY_CTE, channel=NOTIFY_CHANNEL)


def chain(
    head: Head, batches: Sequence[tuple[str, Sequence[dict[str, Any]]]], now: datetime
) -> list[StoredEvent]:
    """The rows that would follow ``head``: ``(actor, [event dicts])`` batches, hash-chained."""
    prev, seq, rows = head.last_hash, head.version, []
    for actor, events in batches:
        for data in events:
            seq += 1
            digest = event_hash(
                prev, game_id=head.game_id, seq=seq, actor=actor, recorded_at=now, data=data
            )
            rows.append(
                StoredEvent(head.game_id, seq, data["type"], data, actor, now, prev, digest)
            )
            prev = digest
    return rows


#: PostgreSQL refuses a NOTIFY payload of 8000 bytes or more.
NOTICE_LIMIT = 7999


def notice(game_id: uuid.UUID, version: int, columns: dict[str, Any], events: str) -> str:
    """An append's NOTIFY payload: ``<game>:<version>``, and when it fits, ``:`` and a JSON body
    with the appended rows (``events``, as inserted) and the head columns a reader shows, so a
    process that follows the game folds it on without a query (``games.live.feed``)."""
    plain = f"{game_id}:{version}"
    head = orjson.dumps(
        {
            "status": columns["status"],
            "turn_deadline": _iso(columns["turn_deadline"]),
            "awaiting": columns["awaiting"],
            "started_at": _iso(columns["started_at"]),
            "finished_at": _iso(columns["finished_at"]),
        }
    )
    text = f'{plain}:{head[:-1].decode()},"rows":{events}}}'
    return text if len(text.encode()) <= NOTICE_LIMIT else plain


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def time_from_iso(value: str | None) -> datetime | None:
    """A notice's time (``notice``) back as a datetime."""
    return datetime.fromisoformat(value) if value else None


#: Appends a head may hold unfolded (``advance``); a game that far behind is read again instead.
MAX_UNFOLDED = 200


def advance(game_id: uuid.UUID, note: dict[str, Any], state: GameState | None = None) -> None:
    """Another process's committed append, from its notice (``notice``): a head this process
    holds at the version before it moves on to it, so this process's next move on the game
    needs no read. ``state``: the state after it, when the caller has folded it already;
    otherwise the rows are folded only when this process next needs the state (most heads
    are passed again by the next notice before that)."""
    rows = note["rows"]
    old = heads.get(game_id, rows[0]["seq"] - 1)
    if old is None:
        return
    base: Head | None = None
    unfolded: tuple[Any, ...] = ()
    if state is None:
        # In the order that ``Head.state`` needs, should another thread fold ``old`` meanwhile.
        old_unfolded, old_base = old.unfolded, old.base
        pending = old_base is not None and old.decoded is None
        base = old_base if pending else old
        unfolded = (*(old_unfolded if pending else ()), *(row["data"] for row in rows))
        if len(unfolded) > MAX_UNFOLDED:
            heads.forget(game_id)
            return
    heads.put(
        old.moved(
            version=rows[-1]["seq"],
            last_hash=rows[-1]["hash"],
            snapshot=None,
            status=note["status"],
            turn_deadline=time_from_iso(note["turn_deadline"]),
            started_at=time_from_iso(note["started_at"]),
            finished_at=time_from_iso(note["finished_at"]),
            reply=None,
            decoded=state,
            base=base,
            unfolded=unfolded,
        ),
        committed=True,
    )


def write(
    head: Head,
    rows: Sequence[StoredEvent],
    *,
    snapshot: dict[str, Any],
    columns: dict[str, Any],
    now: datetime,
    reply: Reply | None = None,
    state: GameState | None = None,
) -> Head | None:
    """Append ``rows`` (from ``chain(head, ...)``) and set the head, if the game is still at
    ``head.version``; else ``StaleVersion`` and nothing is written. One statement.

    Returns the new head (``state``, the decoded snapshot, rides along for the next move)."""
    if not rows:
        return None
    last = rows[-1]
    events = orjson.dumps(
        [
            {
                "seq": r.seq,
                "type": r.type,
                "data": r.data,
                "actor": r.actor,
                "recorded_at": r.recorded_at.isoformat(),
                "prev_hash": r.prev_hash,
                "hash": r.hash,
            }
            for r in rows
        ]
    ).decode()
    params: dict[str, Any] = {
        "id": head.game_id,
        "expected": head.version,
        "version": last.seq,
        "last_hash": last.hash,
        "snapshot": orjson.dumps(snapshot).decode(),
        "now": now,
        "notify": notice(head.game_id, last.seq, columns, events),
        "events": events,
    }
    for name in COLUMNS:
        params[name] = columns[name]
    sql = _WRITE_PLAIN
    if reply is not None:
        sql = _WRITE_REPLY
        params.update(
            r_user=reply.user_id,
            r_key=reply.key,
            r_fingerprint=reply.fingerprint,
            r_status=reply.status,
            r_body=reply.body,
        )
    try:
        updated, inserted, _ = _execute(sql, params)  # type: ignore[misc]
    except Exception:
        heads.forget(head.game_id)
        raise
    if not updated:
        heads.forget(head.game_id)
        raise StaleVersion(head.version, current_version(head.game_id))
    if inserted != len(rows):  # cannot happen while the version check holds; never hide it
        raise RuntimeError(f"{head.game_id}: {inserted} of {len(rows)} events inserted")
    new = head.moved(
        version=last.seq,
        last_hash=last.hash,
        snapshot=snapshot,
        status=columns["status"],
        turn_deadline=columns["turn_deadline"],
        started_at=columns["started_at"],
        finished_at=columns["finished_at"],
        reply=None,
        decoded=state,
        base=None,  # the new head is folded or has its snapshot: nothing before it is needed
        unfolded=(),
    )
    heads.put(new)
    return new


# ---------------------------------------------------------------- reads of the stream


def get_game(game_id: uuid.UUID | str, *, lock: bool = False) -> Game:
    """The game row as a model (``lock``: ``SELECT ... FOR UPDATE``, inside a transaction)."""
    qs = Game.objects.select_for_update() if lock else Game.objects.all()
    try:
        return qs.get(pk=game_id)
    except (Game.DoesNotExist, ValueError, ValidationError):  # no such game, or not a UUID
        raise GameNotFound() from None


def state_of(game: Game) -> GameState | None:
    """The rules state at ``game.version``: the snapshot, or a fold when it is missing or stale."""
    return state_at(game.pk, game.version, game.snapshot)


def state_at(game_id: uuid.UUID | str, version: int, snapshot: Any) -> GameState | None:
    """The state at ``version`` from its snapshot, or folded from the stream when the snapshot
    is missing or of another version (an old row); ``None`` before the first event."""
    if version == 0:
        return None
    if isinstance(snapshot, dict) and snapshot.get("version") == version:
        return state_from_dict(snapshot)
    return fold_from_zero(game_id, upto=version)


def load(game_id: uuid.UUID | str) -> GameState | None:
    """The current state of a game from its head's snapshot (no re-fold of the stream)."""
    return read(game_id).state()


_LIVE = """
SELECT id, seq, type, data::text, actor, recorded_at, encode(hash, 'hex'),
       encode(lag(hash) OVER (ORDER BY seq), 'hex')
FROM games_event WHERE game_id = %s AND seq >= %s AND seq <= %s ORDER BY seq
"""
_LIVE_DATA = """
SELECT data::text FROM games_event WHERE game_id = %s AND seq > %s AND seq <= %s{types}
ORDER BY seq
"""
_NO_END = 2**31 - 1


def _archived(game_id: uuid.UUID | str) -> list[StoredEvent]:
    """The game's events from its archive (none when it has none, or one that cannot be read:
    ``verify_chain`` reports that)."""
    try:
        rows = archive.read(game_id)
    except archive.Broken:
        return []
    gid = parse_id(game_id)
    return [
        StoredEvent(gid, r.seq, r.type, r.data, r.actor, r.recorded_at, r.prev_hash, r.hash, r.id)
        for r in rows or ()
    ]


def load_events(
    game_id: uuid.UUID | str,
    *,
    after: int = 0,
    upto: int | None = None,
    limit: int | None = None,
    types: Sequence[str] | None = None,
) -> list[StoredEvent]:
    """The events with ``after < seq <= upto`` (at most ``limit``; only ``types``), in order,
    as stored: from the rows, or from the game's archive once it is compacted. Each has its
    ``prev_hash``, the hash of the event before it (the rows do not store it)."""
    gid = parse_id(game_id)
    end = _NO_END if upto is None else upto
    if after >= end:
        return []
    found: list[StoredEvent] = []
    with connection.cursor() as cursor:
        # From ``after`` itself: the first row gives the next one its ``prev_hash``.
        cursor.execute(_LIVE, [gid, max(after, 1), end])
        prev = GENESIS_HASH
        for event_id, seq, kind, data, actor, at, digest, before in cursor:
            if seq > after and (types is None or kind in types):
                found.append(
                    StoredEvent(
                        gid,
                        seq,
                        kind,
                        orjson.loads(data),
                        actor,
                        at,
                        before or prev,
                        digest,
                        event_id,
                    )
                )
                if limit is not None and len(found) >= limit:
                    break
            prev = digest
        else:
            if cursor.rowcount == 0:
                found = [
                    e
                    for e in _archived(gid)
                    if after < e.seq <= end and (types is None or e.type in types)
                ][:limit]
    return found


def event_data(
    game_id: uuid.UUID | str,
    *,
    after: int = 0,
    upto: int | None = None,
    types: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """The data of the events with ``after < seq <= upto`` (only ``types``), in order: what a
    fold reads (from the rows, or from the archive)."""
    gid = parse_id(game_id)
    end = _NO_END if upto is None else upto
    if after >= end:
        return []
    sql = _LIVE_DATA.format(types=" AND type = ANY(%s)" if types is not None else "")
    params: list[Any] = [gid, after, end]
    if types is not None:
        params.append(list(types))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        found = [orjson.loads(data) for (data,) in cursor.fetchall()]
    if not found and _may_be_archived(gid, after):
        found = [
            e.data
            for e in _archived(gid)
            if after < e.seq <= end and (types is None or e.type in types)
        ]
    return found


def _may_be_archived(game_id: uuid.UUID, after: int) -> bool:
    """Whether no row after ``after`` may mean the rows moved to an archive."""
    return archive.stored_version(game_id) > after


def finished_matches() -> list[uuid.UUID]:
    """Ids of every game whose stream has ``match_ended``, in match-end (that event's id)
    order, compacted games (``EventArchive.ended_id``) among the others."""
    ended = list(Event.objects.filter(type="match_ended").values_list("id", "game_id"))
    ended += archive.ended()
    return [game_id for _, game_id in sorted(ended)]


def fold_from_zero(game_id: uuid.UUID | str, *, upto: int | None = None) -> GameState:
    """The state after the first ``upto`` events (all by default), folded from the stream.

    The truth the snapshot must agree with; replay uses it for earlier steps.
    """
    return fold(event_data(game_id, upto=upto))


# ---------------------------------------------------------------- verification

_CHAIN = """
SELECT seq, type, data::text, actor, recorded_at, encode(hash, 'hex')
FROM games_event WHERE game_id = %s ORDER BY seq
"""


def verify_chain(game_id: uuid.UUID | str) -> int | None:
    """The first seq whose link is broken (edited, missing or out of place), or None if sound.

    Also checks the stream against the head read first: its length against ``version`` (a
    deleted tail shows) and the hash at ``version`` against ``last_hash``. Events appended
    after that read are chain-checked too. A compacted game's archive is checked the same way
    (``games.archive.unpack``: every hash recomputed, the last one the archive's head) and its
    head against the game's.
    """
    gid = parse_id(game_id)
    head = Game.objects.filter(pk=gid).values_list("version", "last_hash").first()
    version, last_hash = (head[0], bytes(head[1]).hex()) if head else (0, "")
    with connection.cursor() as cursor:
        cursor.execute(_CHAIN, [gid])
        rows = cursor.fetchall()
    if not rows:
        return _verify_archive(gid, version, last_hash)
    expected_seq = 1
    prev = GENESIS_HASH
    for seq, kind, text, actor, recorded_at, stored in rows:
        if seq != expected_seq:
            return expected_seq if seq > expected_seq else seq
        data = orjson.loads(text)
        digest = event_hash(
            prev, game_id=gid, seq=seq, actor=actor, recorded_at=recorded_at, data=data
        )
        data_type = data.get("type") if isinstance(data, dict) else None
        if digest != stored or kind != data_type:
            return seq
        if seq == version and last_hash and last_hash != stored:
            return seq
        prev = stored
        expected_seq += 1
    if expected_seq <= version:
        return expected_seq
    return None


def _verify_archive(game_id: uuid.UUID, version: int, last_hash: str) -> int | None:
    """``verify_chain`` of a game without rows: its archive, if it has one."""
    found = archive.stored(game_id)
    if found is None:
        return 1 if version else None
    try:
        archive.unpack(str(game_id), found.version, bytes(found.last_hash), bytes(found.events))
    except archive.Broken as broken:
        return broken.seq
    if found.version < version:
        return found.version + 1
    if found.version > version or bytes(found.last_hash).hex() != last_hash:
        return found.version
    return None


def records(game_id: uuid.UUID | str, *, upto: int | None = None) -> list[verify.Record]:
    """The stream as the checks of ``games.verify`` read it (``recorded_at`` as hashed)."""
    return [
        verify.Record(
            e.seq, e.type, e.actor, e.recorded_at.isoformat(), e.prev_hash, e.hash, e.data
        )
        for e in load_events(game_id, upto=upto)
    ]
