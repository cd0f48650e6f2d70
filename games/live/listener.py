"""The per-process LISTEN connection, and the wake-ups it hands to streams and long-polls.

Every append (``games.store.write``) runs ``SELECT pg_notify('game_events',
'<game_id>:<version>[:<rows>]')`` inside its transaction, so PostgreSQL delivers the notice on
commit, never for a rolled-back move. Each web process keeps ONE async psycopg connection that
LISTENs on that channel (``Listener``, started by the first stream or long-poll of the process's
event loop). A notice is only a wake-up call: the hub of that game wakes the streams that follow it,
and each takes the rows after its own last seq. An append's notice carries its rows and the head
columns (``games.store.notice``): the hub folds them onto the state it holds, so a move costs its
followers no query. A notice that does not follow on from the hub's state (one missed while the
connection was down, or too large to carry its rows) makes the hub read ``games_event`` instead,
so a lost or doubled notice can delay a stream but never corrupt it.

- ``GameHub``: one per followed game; an ``asyncio.Event`` replaced at every wake (a waiter that
  took the event before reading cannot miss a notice that arrives while it reads) and one shared,
  coalesced read of the game per wake, so thirty streams of one table cost one query.
- ``UserHub``: one per player with an open ``/me/stream``; woken for notices of games they sit
  at (the listener looks the seated users up, cached once the match has started).
- Idle streams cost nothing: they sleep on their event; one timer per process ticks the hubs
  nobody woke for a while, and their streams then send a keep-alive comment.
- Connection lost: the listener reconnects (backing off up to 5 s), LISTENs again and then wakes
  every hub, so each stream re-reads from its last seq whatever was committed meanwhile.
- ``Holding``: each open stream of an account, by account and by session. A suspension, a
  deactivation or a log-out sends ``forget-user:<id>`` / ``forget-session:<id>`` on commit
  (``core.notices``); every process hears it here and checks that account's or session's open
  streams (``feed.refused``: any change of a user sends it), ending those refused at once.
  A stream is checked once more as it opens (after it is registered, so no notice slips
  between), and every stream after the connection comes back (notices may have been lost);
  its frames cost nothing more than one attribute test.
- SIGTERM/SIGINT/SIGQUIT (the server stopping): every stream ends at once, and the clients
  reconnect with ``Last-Event-ID`` to another process, instead of holding up the shutdown.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
import psycopg

from core import listening
from core import notices as core_notices
from games import store
from games.live import db, feed
from games.live.signals import CHANNEL

logger = logging.getLogger(__name__)

CONNECT_WAIT_SECONDS = 5.0
MAX_BACKOFF_SECONDS = 5.0
SEAT_CACHE_SIZE = 10_000
#: Rows (and their rendered frames) a hub keeps behind the game's version: its streams read each
#: wake, so few are ever behind by more; each kept row costs every process that follows the game.
KEEP_ROWS = 16
APPLICATION_NAME = "tongits-live-listener"


#: The notice that wakes one user's ``/me/stream`` for an app's news: ``wake-user:<user id>``.
WAKE_USER = "wake-user:"
#: The notice that wakes one game's streams for an app's news: ``wake-game:<game id>``.
WAKE_GAME = "wake-game:"


#: The notices that may end open streams (``Listener._forget``).
FORGETS = (core_notices.FORGET_SESSION, core_notices.FORGET_USER)


def _discard(held: dict[Any, set[Holding]], key: Any, one: Holding) -> None:
    found = held.get(key)
    if found is not None:
        found.discard(one)
        if not found:
            del held[key]


#: A stream sends a comment (so proxies keep the connection) once it has been silent for
#: ``KEEP_ALIVE_SECONDS - TICK_SECONDS`` at a tick: after 10 to 15 s of silence.
KEEP_ALIVE_SECONDS = 15.0
#: How often the listener ticks the hubs nobody woke for that long.
TICK_SECONDS = 5.0


class Hub:
    """Wake-ups for one key: ``changed`` is set, and replaced, at every ``wake()`` (news: ``gen``
    moves on) and every ``tick()`` (the listener's keep-alive clock for a quiet hub: nothing
    new), so a waiting stream needs no timer of its own."""

    def __init__(self, key: Any) -> None:
        self.key = key
        self.refs = 0
        self.gen = 0
        self.news = 0  # how many WAKE_USER (a user's hub) or WAKE_GAME notices it heard
        self.touched = time.monotonic()  # the last wake or tick
        self._changed = asyncio.Event()

    @property
    def changed(self) -> asyncio.Event:
        return self._changed

    def wake(self) -> None:
        self.gen += 1
        self.tick()

    def tick(self) -> None:
        self.touched = time.monotonic()
        event, self._changed = self._changed, asyncio.Event()
        event.set()


#: ``render(read, seats) -> (frames by (seq, seat, reveal), views by (seat, view key))``.
Render = Callable[[feed.GameRead, list], tuple[dict, dict]]


def _read_and_render(
    game_id: str, after: int, seats: list, render: Render | None
) -> tuple[feed.GameRead, tuple[dict, dict]]:
    read = feed.read_game(game_id, after)
    return read, (render(read, seats) if render is not None else ({}, {}))


class GameHub(Hub):
    """A followed game: wake-ups plus one shared read per wake and per-seat rendered bytes."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.rows: dict[int, Any] = {}  # seq -> Event row (events never change)
        self.rendered: dict[tuple, bytes] = {}  # (seq, seat, reveal) -> SSE frame
        self._read: feed.GameRead | None = None
        self._read_gen = -1
        self._lock = asyncio.Lock()
        self.view_cache: dict[tuple, bytes] = {}
        # Renders under way, by what they render: the streams of one seat that wake together
        # share one render in the pool instead of each doing the same work.
        self.rendering: dict[tuple, asyncio.Future] = {}
        # Seats with a stream open here (None: a reader without a seat), and how many.
        self.followers: collections.Counter = collections.Counter()

    def offer(self, note: dict[str, Any]) -> feed.GameRead | None:
        """An append's notice with its rows (``store.notice``), before the wake it brings: when
        it follows on from the read the hub holds, it becomes the next read, with no query."""
        current = self._read
        if current is None or self._read_gen != self.gen:
            return None  # nothing read, or a read is due anyway: the wake's read queries
        new = feed.read_from_notice(current, note)
        if new is None:
            return None
        for row in new.rows:
            self.rows[row.seq] = row
        self.view_cache.clear()
        self._read, self._read_gen = new, self.gen + 1  # current as of the wake that follows
        self._prune(new.version - KEEP_ROWS)
        return new

    def _prune(self, oldest: int) -> None:
        """Keep the recent rows and frames only (none at or before ``oldest``): a stream that
        far behind reads its rows again."""
        if len(self.rows) <= 2 * KEEP_ROWS:
            return
        for seq in [seq for seq in self.rows if seq <= oldest]:
            del self.rows[seq]
        for key in [key for key in self.rendered if key[0] <= oldest]:
            del self.rendered[key]

    async def read(self, after: int, render: Render | None = None) -> feed.GameRead:
        """The game as of the latest wake, with every row after ``after`` in ``self.rows``.

        ``render(read, seats)``, run in the same trip to the pool as the read, renders the new
        rows and the view for every seat that has a stream here (``followers``): the streams
        then find their frames ready instead of each seat making a second trip."""
        async with self._lock:
            current = self._read
            stale = current is None or self._read_gen != self.gen
            if not stale and any(s not in self.rows for s in range(after + 1, current.version + 1)):
                stale = True
            if stale:
                gen = self.gen
                start = after
                while start + 1 in self.rows:
                    start += 1
                seats = list(self.followers)
                current, (frames, views) = await db.run(
                    _read_and_render, self.key, start, seats, render
                )
                for row in current.rows:
                    self.rows[row.seq] = row
                if current is not self._read:
                    self.view_cache.clear()
                self.rendered.update(frames)
                self.view_cache.update(views)
                self._read, self._read_gen = current, gen
                self._prune(min(after, current.version - KEEP_ROWS))
            return current


class Holding:
    """One open stream's holder (``feed.Holder``); ``ended`` names why it must end now, and
    ``hub`` (the one its stream waits on) is ticked to wake it."""

    __slots__ = ("ended", "holder", "hub")

    def __init__(self, holder: feed.Holder) -> None:
        self.holder = holder
        self.ended: str | None = None
        self.hub: Hub | None = None

    def end(self, reason: str) -> None:
        if self.ended is None:
            self.ended = reason
            if self.hub is not None:
                self.hub.tick()  # no news: only this stream, which sees ``ended``, stops


class Listener:
    """One per event loop (that is, per web process)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.games: dict[str, GameHub] = {}
        self.users: dict[int, Hub] = {}
        self.held_by_user: dict[int, set[Holding]] = collections.defaultdict(set)
        self.held_by_session: dict[str, set[Holding]] = collections.defaultdict(set)
        self.connected = asyncio.Event()
        self.closing = False
        self.reconnects = 0
        self.notices = 0
        self._seats: dict[str, tuple[int, ...]] = {}
        self._looking_up: set[str] = set()
        self._task = loop.create_task(self._run(), name="live-listener")
        self._ticker = loop.call_later(TICK_SECONDS, self._tick)

    def _tick(self) -> None:
        """Every ``TICK_SECONDS``: tick the hubs nobody woke for a while, so their streams send
        their keep-alives (one timer per process, instead of one per waiting stream)."""
        quiet = time.monotonic() - (KEEP_ALIVE_SECONDS - TICK_SECONDS)
        for hub in [*self.games.values(), *self.users.values()]:
            if hub.touched <= quiet:
                hub.tick()
        if not self.loop.is_closed():
            self._ticker = self.loop.call_later(TICK_SECONDS, self._tick)

    # ------------------------------------------------------------ subscriptions

    @contextlib.asynccontextmanager
    async def game(self, game_id: str) -> AsyncIterator[GameHub]:
        """Follow a game; LISTEN is in place (or will wake the hub when it is) on entry."""
        async with self._follow(self.games, game_id, GameHub) as hub:
            yield hub

    @contextlib.asynccontextmanager
    async def user(self, user_id: int) -> AsyncIterator[Hub]:
        async with self._follow(self.users, user_id, Hub) as hub:
            yield hub

    @contextlib.asynccontextmanager
    async def _follow(self, hubs: dict, key: Any, make: Any) -> AsyncIterator[Any]:
        """The hub of ``key`` in ``hubs`` (made on first use, dropped with its last follower)."""
        hub = hubs.get(key)
        if hub is None:
            hub = hubs[key] = make(key)
        hub.refs += 1
        try:
            await self.wait_connected()
            yield hub
        finally:
            hub.refs -= 1
            if hub.refs == 0 and hubs.get(key) is hub:
                del hubs[key]

    @contextlib.asynccontextmanager
    async def holding(self, holder: feed.Holder | None) -> AsyncIterator[Holding]:
        """Keep an open stream under its holder's account and session while it runs; checked
        once here, after it is kept, so a refusal committed before is seen and one after heard."""
        held = Holding(holder or (0, None))
        if holder is None:  # nobody's (a test's stream without an account): nothing can end it
            yield held
            return
        user_id, session_id = holder
        self.held_by_user[user_id].add(held)
        if session_id is not None:
            self.held_by_session[session_id].add(held)
        try:
            await self._check([held])
            yield held
        finally:
            _discard(self.held_by_user, user_id, held)
            if session_id is not None:
                _discard(self.held_by_session, session_id, held)

    async def _check(self, held: list[Holding]) -> None:
        """End those of ``held`` whose holder may no longer stream (one read in the pool)."""
        if not held:
            return
        try:
            refused = await db.run(feed.refused, list({h.holder for h in held}))
        except Exception as exc:  # the database away: the next notice or reconnection checks
            logger.warning("live: could not check the holders of %d streams (%s)", len(held), exc)
            return
        for one in held:
            reason = refused.get(one.holder)
            if reason is not None:
                one.end(reason)

    def _forget(self, payload: str) -> None:
        """A session ended or a user changed: its open streams are checked (one read in the
        pool, none when it has none here), which ends them if need be, with the reason."""
        if payload.startswith(core_notices.FORGET_SESSION):
            held = self.held_by_session.get(payload[len(core_notices.FORGET_SESSION) :], ())
        else:
            value = payload[len(core_notices.FORGET_USER) :]
            held = self.held_by_user.get(int(value), ()) if value.isdigit() else ()
        if held:
            self.loop.create_task(self._check(list(held)))

    def check_all_held(self) -> None:
        """Notices may have been lost (the connection was down): check every open stream."""
        every = [h for helds in self.held_by_user.values() for h in helds]
        if every:
            self.loop.create_task(self._check(every))

    async def wait_connected(self) -> None:
        # If the database is away, go on: the hub is woken as soon as LISTEN is back.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.connected.wait(), CONNECT_WAIT_SECONDS)

    # ------------------------------------------------------------ wake-ups

    def wake_all(self) -> None:
        for hub in [*self.games.values(), *self.users.values()]:
            hub.wake()

    def close_streams(self) -> None:
        """The server is stopping: every stream and long-poll ends now."""
        self.closing = True
        self.wake_all()

    def dispatch(self, payload: str) -> None:
        self.notices += 1
        if payload.startswith(WAKE_USER):  # news for one user's /me/stream (streams.ME_SOURCES)
            user_hub = self.users.get(int(payload[len(WAKE_USER) :] or 0))
            if user_hub is not None:
                user_hub.news += 1
                user_hub.wake()
            return
        if payload.startswith(WAKE_GAME):  # news for one game's streams (streams.GAME_SOURCES)
            game_hub = self.games.get(payload[len(WAKE_GAME) :])
            if game_hub is not None:
                game_hub.news += 1
                game_hub.wake()
            return
        if payload.startswith(FORGETS):  # end a session's or an account's streams, then forget
            self._forget(payload)
        if core_notices.dispatch(payload):  # a memory to forget, not a game (core.notices)
            return
        game_id, _, rest = payload.partition(":")
        version, _, body = rest.partition(":")
        hub = self.games.get(game_id)
        if body:
            self._fold(game_id, hub, body)
        if hub is not None:
            hub.wake()
        if self.users:
            started = version.isdigit() and int(version) > 0
            seated = self._seats.get(game_id) if started else None
            if seated is not None:
                self._wake_users(seated)
            elif game_id not in self._looking_up:
                self._looking_up.add(game_id)
                self.loop.create_task(self._look_up_seats(game_id, started))

    def _fold(self, game_id: str, hub: GameHub | None, body: str) -> None:
        """An append's rows: onto the hub's read, and onto this process's cached head of the
        game (``store.advance``), so neither its streams nor its next move need a query. Every
        process hears every move: one that neither follows the game nor holds its head skips
        it."""
        try:
            key = store.parse_id(game_id)
            if hub is None and not store.heads.holds(key):
                return  # nothing here to move on: the body is not even parsed
            note = orjson.loads(body)
            read = hub.offer(note) if hub is not None else None
            store.advance(key, note, read.state if read else None)
        except Exception:  # a notice is only a wake-up call: never let one break the listener
            logger.exception("live: could not fold the notice of %s", game_id)

    def _wake_users(self, user_ids: tuple[int, ...]) -> None:
        for user_id in user_ids:
            hub = self.users.get(user_id)
            if hub is not None:
                hub.wake()

    async def _look_up_seats(self, game_id: str, cache: bool) -> None:
        try:
            seated = await db.run(feed.seated_users, game_id)
        except Exception:
            logger.exception("live: could not look up the seats of %s", game_id)
            seated = tuple(self.users)  # wake everyone: each re-reads its own tables
        finally:
            self._looking_up.discard(game_id)
        if cache:  # seats never change once the match has started
            if len(self._seats) >= SEAT_CACHE_SIZE:
                self._seats.clear()
            self._seats[game_id] = seated
        self._wake_users(seated)

    # ------------------------------------------------------------ the connection

    async def _run(self) -> None:
        backoff = 0.1
        while not self.closing:
            try:
                conn = await psycopg.AsyncConnection.connect(**connection_params(), autocommit=True)
            except (psycopg.Error, OSError) as exc:
                logger.warning("live: cannot connect to PostgreSQL (%s); retrying", exc)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
                continue
            try:
                async with conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    self.connected.set()
                    core_notices.set_hearing(True)
                    backoff = 0.1
                    # Whatever was committed while nobody listened: every stream re-reads, and
                    # every holder is checked again.
                    self.wake_all()
                    self.check_all_held()
                    await self._hear(conn.pgconn)
            except (psycopg.Error, OSError) as exc:
                if not self.closing:
                    logger.warning("live: lost the LISTEN connection (%s); reconnecting", exc)
            finally:
                self.connected.clear()
                core_notices.set_hearing(False)
            self.reconnects += 1
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)

    async def _hear(self, pgconn: Any) -> None:
        """Dispatch each notice as its bytes arrive, until the connection fails: libpq's own
        reading in one loop callback per arrival (psycopg's ``notifies()`` generator costs a
        coroutine round trip per notice, and every process hears every move)."""
        lost: asyncio.Future[None] = self.loop.create_future()

        def readable() -> None:
            try:
                pgconn.consume_input()
                while (note := pgconn.notifies()) is not None:
                    self.dispatch(note.extra.decode())
            except psycopg.Error as exc:
                if not lost.done():
                    lost.set_exception(exc)

        fd = pgconn.socket
        self.loop.add_reader(fd, readable)
        try:
            await lost
        finally:
            self.loop.remove_reader(fd)


def connection_params() -> dict[str, Any]:
    """psycopg keywords of the listener's own session (``core.listening.session_params``: past
    a transaction-mode pooler when ``DATABASE_LISTEN_URL`` says so), with TCP keepalives so a
    dead peer shows in ~30 s."""
    params = listening.session_params()
    for key in ("cursor_factory", "client_encoding"):
        params.pop(key, None)
    params.update(
        application_name=APPLICATION_NAME,
        connect_timeout=5,
        keepalives=1,
        keepalives_idle=10,
        keepalives_interval=5,
        keepalives_count=3,
    )
    return {key: value for key, value in params.items() if value not in (None, "")}


_listeners: dict[asyncio.AbstractEventLoop, Listener] = {}
_lock = threading.Lock()


def get() -> Listener:
    """The listener of the running event loop (started on first use)."""
    loop = asyncio.get_running_loop()
    with _lock:
        listener = _listeners.get(loop)
        if listener is None:
            for old in [old for old in _listeners if old.is_closed()]:
                del _listeners[old]
            listener = _listeners[loop] = Listener(loop)
            _chain_stop_signals(listener)
    return listener


def _chain_stop_signals(listener: Listener) -> None:
    """Before the server's own handler (uvicorn's) runs, end every stream of this process."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT):
        previous = signal.getsignal(sig)
        if not callable(previous):
            continue

        def handler(signum: int, frame: Any, previous: Any = previous) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                listener.loop.call_soon_threadsafe(listener.close_streams)
            previous(signum, frame)

        signal.signal(sig, handler)
