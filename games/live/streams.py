"""Server-Sent Events: a game's feed for one reader, and a player's own notices.

Frames (https://html.spec.whatwg.org/multipage/server-sent-events.html)::

    id: <seq>\\nevent: <type>\\ndata: <the JSON /events gives this reader for seq>\\n\\n
    event: view\\ndata: <game_payload + revealed (finished) + settled + server_time>\\n\\n
    : keep-alive\\n\\n                          (a comment, after 10 to 15 s of silence)
    event: end\\ndata: {"reason": <one of END_REASONS>}\\n\\n

Only event frames carry an ``id``, so a client's ``Last-Event-ID`` is always the last seq it
received: reconnecting with it (or ``?after=``) sends exactly the events after it, then live
ones. The generators never touch the ORM: reads go through ``games.live.db``.

A stream ends at once, in whichever process serves it, when its account is suspended
(``suspended``) or its session ends or the account is deactivated or deleted (``signed_out``):
the listener keeps each open stream under its holder (``listener.Holding``) and marks it ended
when the notice arrives; each wake tests that mark, so a frame costs no query for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from games import players, selectors
from games import presenters as present
from games.live import db, feed, listener
from metrics import instruments
from ops import gauges

RETRY_MILLISECONDS = 1000
#: Why a stream ended: the match over, the server stopping, the account suspended, or its
#: session ended (log-out) or the account deactivated or deleted.
END_REASONS = ("settled", "aborted", "shutdown", "suspended", "signed_out")


def to_json(value: Any) -> bytes:
    """The same bytes the API's renderer (orjson) gives ``/events``: compact, UTF-8."""
    return orjson.dumps(value)


def frame(event: str, data: bytes, event_id: int | None = None) -> bytes:
    head = b"" if event_id is None else b"id: %d\n" % event_id
    return head + b"event: " + event.encode() + b"\ndata: " + data + b"\n\n"


def with_server_time(payload_json: bytes) -> bytes:
    """``{...}`` -> ``{...,"server_time":"..."}`` (rendered views are cached, times are not)."""
    stamp = to_json(feed.server_time())
    return payload_json[:-1] + b',"server_time":' + stamp + b"}"


async def _quiet(
    live: listener.Listener,
    hub: listener.Hub,
    changed: asyncio.Event,
    gen: int,
    held: listener.Holding,
) -> bool:
    """Wait for news on ``hub`` after ``gen`` (True), or until a keep-alive is due (False): the
    hub's ticks (``Listener._tick``) wake its streams when nobody else has for a while. The
    stream's holder ended (``held.ended``) counts as news: the stream ends."""
    since = time.monotonic()
    while not live.closing and held.ended is None:
        await changed.wait()
        if hub.gen != gen or live.closing or held.ended is not None:
            return True
        changed = hub.changed  # a tick: nothing new
        if time.monotonic() - since >= listener.KEEP_ALIVE_SECONDS - listener.TICK_SECONDS:
            return False
    return True


@contextlib.asynccontextmanager
async def _following(hub: listener.GameHub, seat: int | None) -> AsyncIterator[None]:
    hub.followers[seat] += 1
    try:
        yield
    finally:
        hub.followers[seat] -= 1
        if hub.followers[seat] <= 0:
            del hub.followers[seat]


def _render(
    rows: dict[int, Any],
    missing: list[int],
    read: feed.GameRead,
    seat: int | None,
    reveal: bool,
    want_view: bool,
    views: dict[tuple, bytes],
) -> tuple[list[tuple[int, bytes]], bytes | None]:
    """The SSE frames of these events and, if wanted and not cached, the view (in the pool)."""
    frames = [(seq, _event_frame(rows[seq], seat, reveal)) for seq in missing]
    view = None
    if want_view and (seat, _view_key(read)) not in views:
        view = to_json(feed.view_payload(read, seat))
    return frames, view


def _event_frame(row: Any, seat: int | None, reveal: bool) -> bytes:
    """One event's SSE frame for this reader: exactly what ``/events`` gives it for that seq."""
    return frame(row.type, to_json(present.feed_item(row, seat, reveal)), row.seq)


def _seated_users(read: feed.GameRead) -> list[Any]:
    return [seat.get("user_id") for seat in read.state.seats if seat.get("kind", "user") == "user"]


async def _render_in_pool(
    hub: listener.GameHub, key: tuple, args: tuple
) -> tuple[list[tuple[int, bytes]], bytes | None]:
    """``_render(*args)`` in the pool, where showing the seats may look players' names up (a
    query). The streams woken together that want the same render (``key``) share it
    (shielded: one stream closing does not cancel it for the others)."""
    task = hub.rendering.get(key)
    if task is None:
        task = asyncio.ensure_future(db.run(_render, *args))
        hub.rendering[key] = task
        task.add_done_callback(lambda _done, key=key: hub.rendering.pop(key, None))
    return await asyncio.shield(task)


def _view_key(read: feed.GameRead) -> tuple:
    return (read.version, read.game.status, read.game.turn_deadline, read.done)


def _render_followed(read: feed.GameRead, seats: list) -> tuple[dict, dict]:
    """Every followed seat's frames of the rows just read, and its view (in the pool, in the
    read's trip). ``game_started`` names the players: rendered per stream, never kept."""
    reveal = read.finished
    view_key = _view_key(read)
    frames: dict[tuple, bytes] = {}
    views: dict[tuple, bytes] = {}
    for seat in seats:
        for row in read.rows:
            if row.type != "game_started":
                frames[(row.seq, seat, reveal)] = _event_frame(row, seat, reveal)
        views[(seat, view_key)] = to_json(feed.view_payload(read, seat))
    return frames, views


@contextlib.asynccontextmanager
async def _counted(opened: feed.OpenedStream) -> AsyncIterator[None]:
    """An open game stream counts in the metrics' open streams and, a spectator's, in its
    game's spectators."""
    with instruments.stream_open("game"):
        if not opened.spectator:
            yield
            return
        with gauges.held(selectors.spectators_gauge(opened.game_id)):
            yield


def _render_behind(read: feed.GameRead, version: int, kept: dict[int, Any]) -> bytes:
    """A delayed spectator's view of the running game at ``version`` (in the pool): folded on
    from the hub's kept rows (``selectors.past_state``), without the live turn's deadline."""
    state = selectors.past_state(read.game.game_id, version, kept)
    game = read.game
    return to_json(present.view_frame(game.game_id, game.status, None, None, state, None))


async def _view_behind(hub: listener.GameHub, read: feed.GameRead, version: int) -> bytes:
    """``_render_behind``, shared by the delayed spectators woken together (cached per read)."""
    key = (None, ("behind", version, read.game.status))
    cached = hub.view_cache.get(key)
    if cached is not None:
        return cached
    task = hub.rendering.get(key)
    if task is None:
        task = asyncio.ensure_future(db.run(_render_behind, read, version, dict(hub.rows)))
        hub.rendering[key] = task
        task.add_done_callback(lambda _done, key=key: hub.rendering.pop(key, None))
    view = await asyncio.shield(task)
    if hub.view_cache.get(key) is None and hub._read is read:
        hub.view_cache[key] = view
    return view


def _observe_fanout(hub: listener.GameHub, seqs: range) -> None:
    """Each event just handed to a live follower: now minus its append (``recorded_at``)."""
    now = time.time()
    for seq in seqs:
        row = hub.rows.get(seq)
        if row is not None:
            instruments.fanout_lag.observe(max(0.0, now - row.recorded_at.timestamp()))


@dataclass(frozen=True)
class GameSource:
    """More frames for a game's stream from an app above ``games`` (the table chat), which
    registers it in ``GAME_SOURCES``: ``start(opened)`` when a stream opens gives a position,
    ``more(opened, position)`` after each ``WAKE_GAME`` notice for that game gives ``(frames,
    position)``. Both are synchronous reads, run in the streams' database pool."""

    start: Callable[[feed.OpenedStream], Any]
    more: Callable[[feed.OpenedStream, Any], tuple[list[bytes], Any]]


#: The extra sources of the games' streams, registered by apps at start-up.
GAME_SOURCES: list[GameSource] = []


def _ended(held: listener.Holding) -> bytes:
    return frame("end", to_json({"reason": held.ended}))


async def game_stream(
    opened: feed.OpenedStream, holder: feed.Holder | None = None
) -> AsyncIterator[bytes]:
    """Events after ``opened.after`` for the reader's seat, then live ones, until settled (or
    until ``holder``, the reader's account and session, may no longer stream).

    A spectator of a delayed table (``opened.delay``) is sent the running game that many
    events behind: its events and view up to ``selectors.spectator_version`` only, the rest
    held back until as many more are appended, or the match is over."""
    live = listener.get()
    seat = opened.seat
    last = opened.after
    last_view: tuple | None = None
    yield b"retry: %d\n\n" % RETRY_MILLISECONDS
    async with (
        live.holding(holder) as held,
        live.game(opened.game_id) as hub,
        _following(hub, seat),
        _counted(opened),
    ):
        held.hub = hub
        news, sources = hub.news, list(GAME_SOURCES)
        positions = [await db.run(source.start, opened) for source in sources]
        following = False
        while True:
            if held.ended is not None:
                yield _ended(held)
                return
            # Taken before reading: a notice during the read wakes us.
            changed, gen = hub.changed, hub.gen
            read = await hub.read(last, _render_followed)
            reveal = read.finished
            upto = selectors.spectator_version(read.version, read.game.status, opened.delay)
            behind = upto < read.version
            seqs = range(last + 1, upto + 1)
            view_key = ("behind", upto, read.game.status) if behind else _view_key(read)
            want_view = bool(seqs) or view_key != last_view
            # Taken now: the hub may drop old frames while this stream waits for its render.
            fresh = {
                seq: hub.rendered[(seq, seat, reveal)]
                for seq in seqs
                if (seq, seat, reveal) in hub.rendered
            }
            missing = [seq for seq in seqs if seq not in fresh]
            view_missing = not behind and want_view and (seat, view_key) not in hub.view_cache
            if missing or view_missing:
                rows = {seq: hub.rows[seq] for seq in missing}
                args = (rows, missing, read, seat, reveal, view_missing, hub.view_cache)
                if players.remembered(_seated_users(read)):
                    # Nothing to look up: rendered here, with no trip to the pool.
                    frames, view = _render(*args)
                else:
                    key = (tuple(missing), seat, reveal, view_missing, view_key)
                    frames, view = await _render_in_pool(hub, key, args)
                fresh.update(frames)
                for seq, data in frames:
                    if seq not in hub.rows or hub.rows[seq].type != "game_started":
                        hub.rendered[(seq, seat, reveal)] = data
                if view is not None:
                    hub.view_cache[(seat, view_key)] = view
            # game_started names the players: rendered for each stream, never kept, so a
            # deleted player's name does not outlive the account in this process.
            out = [fresh[seq] for seq in seqs]
            last = upto
            if want_view:
                view = (
                    await _view_behind(hub, read, upto)
                    if behind
                    else hub.view_cache[(seat, view_key)]
                )
                out.append(frame("view", with_server_time(view)))
                last_view = view_key
            if hub.news != news:
                news = hub.news
                for i, source in enumerate(sources):
                    more, positions[i] = await db.run(source.more, opened, positions[i])
                    out.extend(more)
            if read.done:
                reason = "aborted" if read.game.status == "aborted" else "settled"
                out.append(frame("end", to_json({"reason": reason})))
            if out:
                yield b"".join(out)
                if following and seqs and not behind:
                    _observe_fanout(hub, seqs)
            following = True  # past the catch-up: what comes next was appended while open
            if read.done:
                return
            while not await _quiet(live, hub, changed, gen, held):
                yield b": keep-alive\n\n"
                changed = hub.changed
            if live.closing:
                yield frame("end", to_json({"reason": "shutdown"}))
                return


# ---------------------------------------------------------------- a player's own notices


def notices(
    before: dict[str, feed.MyTable], now: dict[str, feed.MyTable]
) -> list[tuple[str, dict[str, Any]]]:
    """What changed for the player between two looks at their tables, as (event, data)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for game_id, table in now.items():
        old = before.get(game_id)
        base = {"game_id": game_id, "version": table.version, "seat": table.seat}
        if old is None:
            out.append(("seated", {**base, "status": table.status}))
        elif table.status == old.status == "waiting" and table.updated_at != old.updated_at:
            # Someone took or left a seat, or answered an invitation: the table may be ready.
            out.append(("table_changed", base))
        if table.status in ("active", "finished") and (old is None or old.status == "waiting"):
            out.append(("match_started", base))
        new_turn = old is None or not old.is_my_turn or old.turn_key != table.turn_key
        if table.is_my_turn and new_turn:
            out.append(
                (
                    "your_turn",
                    {
                        **base,
                        "draw_answer": table.phase == "draw_call",
                        "turn_deadline": table.turn_deadline,
                    },
                )
            )
        if table.status == "finished" and (old is None or old.status != "finished"):
            out.append(("match_ended", base))
        if table.settled and (old is None or not old.settled):
            out.append(("settled", base))
        if table.status in ("abandoned", "aborted") and (old is None or old.status != table.status):
            out.append(("table_closed", base))
    for game_id, old in before.items():
        if game_id not in now:
            out.append(("unseated", {"game_id": game_id, "version": old.version}))
    return out


#: Tables that will never change again without a settlement: closed before or during play.
CLOSED = ("abandoned", "aborted")


@dataclass(frozen=True)
class MeSource:
    """More frames for ``/me/stream`` from an app above ``games`` (the notifications), which
    registers it in ``ME_SOURCES``: ``start(user_id)`` when a stream opens gives a position,
    ``more(user_id, position)`` after each ``WAKE_USER`` notice for that user gives
    ``(frames, position)``. Both are synchronous reads, run in the streams' database pool."""

    start: Callable[[int], Any]
    more: Callable[[int, Any], tuple[list[bytes], Any]]


#: The extra sources of ``/me/stream``, registered by apps at start-up.
ME_SOURCES: list[MeSource] = []


def _followed(tables: dict[str, feed.MyTable]) -> tuple[str, ...]:
    """Games to keep reading although they left the waiting/active list (until settled)."""
    return tuple(g for g, t in tables.items() if not t.settled and t.status not in CLOSED)


async def me_stream(user_id: int, holder: feed.Holder | None = None) -> AsyncIterator[bytes]:
    """``games`` (the /me/games list) first; then notices and a fresh ``games`` per change,
    until ``holder`` (the account and session) may no longer stream."""
    live = listener.get()
    yield b"retry: %d\n\n" % RETRY_MILLISECONDS
    with instruments.stream_open("me"):
        async for chunk in _me_stream(live, user_id, holder):
            yield chunk


async def _me_stream(
    live: listener.Listener, user_id: int, holder: feed.Holder | None
) -> AsyncIterator[bytes]:
    async with live.holding(holder) as held, live.user(user_id) as hub:
        held.hub = hub
        tables: dict[str, feed.MyTable] | None = None
        news, sources = hub.news, list(ME_SOURCES)
        positions = [await db.run(source.start, user_id) for source in sources]
        while True:
            if held.ended is not None:
                yield _ended(held)
                return
            changed, gen = hub.changed, hub.gen
            found = await db.run(feed.my_tables, user_id, _followed(tables or {}))
            now = {t.game_id: t for t in found}
            out = []
            if tables is not None:
                for event, data in notices(tables, now):
                    out.append(frame(event, to_json({**data, "server_time": feed.server_time()})))
            if tables is None or out:
                listed = [t.as_dict() for t in found if t.status in ("waiting", "active")]
                body = {"games": listed, "server_time": feed.server_time()}
                out.append(frame("games", to_json(body)))
            if hub.news != news:
                news = hub.news
                for i, source in enumerate(sources):
                    frames, positions[i] = await db.run(source.more, user_id, positions[i])
                    out.extend(frames)
            # Settled, closed and left tables are not followed any more.
            tables = {g: t for g, t in now.items() if not t.settled and t.status not in CLOSED}
            if out:
                yield b"".join(out)
            while not await _quiet(live, hub, changed, gen, held):
                yield b": keep-alive\n\n"
                changed = hub.changed
            if live.closing:
                yield frame("end", to_json({"reason": "shutdown"}))
                return
