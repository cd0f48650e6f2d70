"""The projector: the inbox, the pushes and the webhook messages, written from the append-only logs.

Why a projector and not a hook in the move path: a move is one statement (``games.store.write``)
and must stay so; what it causes for people who are not looking is decided here, off the request,
from the rows it committed. The same rows always give the same notifications (each has a cause
key, unique per user), so a restart, a second projector or ``manage.py notifications rebuild``
writes nothing twice, and a rebuild can be compared with the inbox.

Two logs are read, each by its ids from a cursor (``Cursor``):

- ``games_event``: each game's rows are folded through the rules core (a state per game is kept
  in memory, folded from zero once after a restart), one write at a time (the rows of one write
  share ``recorded_at``). A write that starts a new turn (``games.projection.turn_key``) of a
  person's seat on a table without turn limits, or with turns of at least
  ``TONGITS_YOUR_TURN_MIN_SECONDS``, is ``your_turn``; ``match_ended`` is ``match_over`` for each
  person, and the ``match.finished`` webhook; ``aborted`` is ``match_over`` (aborted) and
  ``match.aborted``.
- ``chips_entry``: a payout or a refund is ``chips_settled`` for each wallet it moved, and the
  ``chips.settled`` webhook.

Ids are taken from a sequence when a row is inserted, so a row with a smaller id may commit after
one with a larger id. The projector remembers the ids it has not seen below the highest it read
(gaps) and looks for them again on each run; a gap still empty after ``GAP_SECONDS`` is a rolled
back insert. The cursor is saved at the lowest gap, so a restart reads again what might have been
missed, and the cause keys make that harmless.

The rest of the kinds (``invited``, ``invitation_answered``, ``new_sign_in``, and the
``account.deleted`` webhook) have no append-only source: they are written in the transaction of
their cause (``notifications.receivers``).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
from django.conf import settings
from django.db import connection, transaction

from games import store
from games.projection import turn_key
from games.rules import GameState, evolve
from notifications import inbox, push, webhooks
from notifications.models import Cursor, Kind, WebhookMessage

logger = logging.getLogger(__name__)

#: How long an id below the highest read may stay unseen before it counts as a rolled-back insert.
GAP_SECONDS = 30.0
#: Rows read per log and run; the next run reads on.
BATCH = 2000
#: States of games kept in memory (a game not kept is folded from zero when it moves again).
KEPT_GAMES = 20000


@dataclass
class Found:
    """What one run wrote: notifications (for the pushes and the live streams), webhook messages;
    ``causes`` are the run's notifications still to be written (in one statement, at its end)."""

    notifications: list[Any] = field(default_factory=list)
    messages: int = 0
    pushes: int = 0
    causes: list[inbox.Cause] = field(default_factory=list)


class Log:
    """One append-only table read by its ids, with the gaps remembered (see the module's text)."""

    def __init__(self, name: str, table: str, columns: str) -> None:
        self.name, self.table, self.columns = name, table, columns
        self.high: int | None = None  # the highest id read
        self.gaps: dict[int, float] = {}  # unseen id -> when it was first missed (monotonic)
        self.saved: int | None = None
        self.saved_at: float | None = None
        self.read_at: float | None = None  # when this log was last read (monotonic)

    def start(self) -> None:
        cursor, _ = Cursor.objects.get_or_create(name=self.name)
        self.high = self.saved = cursor.position

    def position(self) -> int:
        """Every id up to here was read or given up on."""
        assert self.high is not None
        return min(self.gaps) - 1 if self.gaps else self.high

    def read(self, limit: int = BATCH) -> tuple[list[tuple], bool]:
        """New rows and late rows (gaps that filled), in id order; and whether more are waiting."""
        if self.high is None:
            self.start()
        assert self.high is not None
        self.read_at = time.monotonic()
        with connection.cursor() as cur:
            cur.execute(
                f"SELECT {self.columns} FROM {self.table} WHERE id > %s ORDER BY id LIMIT %s",
                [self.high, limit],
            )
            rows = cur.fetchall()
            late: list[tuple] = []
            if self.gaps:
                cur.execute(
                    f"SELECT {self.columns} FROM {self.table} WHERE id = ANY(%s) ORDER BY id",
                    [list(self.gaps)],
                )
                late = cur.fetchall()
        now = time.monotonic()
        for row in late:
            self.gaps.pop(row[0], None)
        expected = self.high + 1
        for row in rows:
            for missing in range(expected, row[0]):
                self.gaps[missing] = now
            expected = row[0] + 1
        if rows:
            self.high = rows[-1][0]
        for gap, since in list(self.gaps.items()):
            if now - since > GAP_SECONDS:
                del self.gaps[gap]
        return sorted(late + rows), len(rows) == limit

    def save(self, every: float = 0.0) -> None:
        """Store the position (in the run's transaction) when it moved, at most once every
        ``every`` seconds: a restart reads again what came after the saved one, and the cause
        keys make that harmless, so a busy loop need not write its cursor on every run."""
        position = self.position()
        now = time.monotonic()
        if position != self.saved and (self.saved_at is None or now - self.saved_at >= every):
            Cursor.objects.filter(name=self.name).update(position=position)
            self.saved, self.saved_at = position, now


def _your_turn_seconds(state: GameState) -> bool:
    seconds = state.rules.turn_seconds
    return not seconds or seconds >= settings.TONGITS_YOUR_TURN_MIN_SECONDS


def _people(state: GameState) -> list[tuple[int, int]]:
    """(seat, user id) of the seats people hold."""
    return [
        (i, s["user_id"])
        for i, s in enumerate(state.seats)
        if s.get("kind") == "user" and s.get("user_id") is not None
    ]


def _seats(state: GameState) -> list[dict[str, Any]]:
    out = []
    for i, s in enumerate(state.seats):
        if s.get("kind") == "bot":
            out.append({"seat": i, "kind": "bot", "level": s.get("level")})
        else:
            out.append({"seat": i, "kind": "user", "user_id": s.get("user_id")})
    return out


class Projector:
    """Reads both logs on each ``run`` and writes what their new rows cause, in one transaction.

    ``pace`` (the notifier's, 0 elsewhere): the chips' log, which only settlements write, is read
    and the cursors are saved at most once every ``pace`` seconds, while the games' log is read
    on every run; ``flush`` saves the cursors at once (a stop)."""

    def __init__(self, *, push: bool = True, pace: float = 0.0) -> None:
        self.push = push  # a repair of old causes records no pushes: they would come too late
        self.pace = pace
        self.events = Log("game_events", "games_event", "id, game_id, seq, type, data, recorded_at")
        self.entries = Log("chips_entries", "chips_entry", "id, cause, key, game_id, created_at")
        self.states: OrderedDict[str, GameState] = OrderedDict()

    # ------------------------------------------------------------ games

    def _state_before(self, game_id: str, seq: int) -> GameState | None:
        """The game's state before ``seq``: kept, or folded from zero up to it."""
        state = self.states.get(game_id)
        if state is not None and state.version == seq - 1:
            self.states.move_to_end(game_id)
            return state
        if seq == 1:
            return None
        return store.fold_from_zero(game_id, upto=seq - 1)  # after a restart or an eviction

    def _keep(self, game_id: str, state: GameState) -> None:
        self.states[game_id] = state
        self.states.move_to_end(game_id)
        while len(self.states) > KEPT_GAMES:
            self.states.popitem(last=False)

    def _writes(self, rows: Sequence[tuple]) -> Iterable[tuple[str, list[tuple]]]:
        """The rows per game and write (same ``recorded_at``), in order."""
        by_game: dict[str, list[tuple]] = {}
        for row in rows:
            by_game.setdefault(str(row[1]), []).append(row)
        for game_id, game_rows in by_game.items():
            game_rows.sort(key=lambda r: r[2])
            batch: list[tuple] = []
            for row in game_rows:
                if batch and row[5] != batch[-1][5]:
                    yield game_id, batch
                    batch = []
                batch.append(row)
            yield game_id, batch

    def _game_write(self, game_id: str, rows: list[tuple], out: Found) -> None:
        first = rows[0][2]
        kept = self.states.get(game_id)
        if kept is not None and kept.version >= rows[-1][2]:
            return  # read before (a late row of a write already folded)
        before = self._state_before(game_id, first)
        after = before
        decoded = [orjson.loads(r[4]) if isinstance(r[4], str | bytes) else r[4] for r in rows]
        for data in decoded:
            after = evolve(after, data)
        assert after is not None
        self._keep(game_id, after)
        at: datetime = rows[-1][5]
        version = rows[-1][2]
        types = {row[3] for row in rows}
        key = turn_key(after)
        if key is not None and key != turn_key(before) and _your_turn_seconds(after):
            user_id = dict(_people(after)).get(after.turn)
            if user_id is not None:
                out.causes.append(
                    inbox.Cause(
                        [user_id],
                        Kind.YOUR_TURN,
                        cause=f"your_turn:{game_id}:{version}",
                        game_id=game_id,
                        data={
                            "game_id": game_id,
                            "version": version,
                            "seat": after.turn,
                            "round": after.round,
                            "draw_answer": after.phase == "draw_call",
                            "turn_seconds": after.rules.turn_seconds,
                        },
                        at=at,
                    )
                )
        if "match_ended" in types or "aborted" in types:
            aborted = "aborted" in types
            for seat, user_id in _people(after):
                out.causes.append(
                    inbox.Cause(
                        [user_id],
                        Kind.MATCH_OVER,
                        cause=f"match_over:{game_id}",
                        game_id=game_id,
                        data={
                            "game_id": game_id,
                            "version": version,
                            "seat": seat,
                            "aborted": aborted,
                            "winner_seat": None if aborted else after.match_winner,
                            "won": (not aborted) and after.match_winner == seat,
                        },
                        at=at,
                    )
                )
            if aborted:
                reason = next((d.get("reason", "") for d in decoded if d["type"] == "aborted"), "")
                data = {"game_id": game_id, "reason": reason, "seats": _seats(after)}
                kind = WebhookMessage.Kind.MATCH_ABORTED
            else:
                data = {
                    "game_id": game_id,
                    "winner_seat": after.match_winner,
                    "rounds": after.round,
                    "round_wins": list(after.round_wins),
                    "chips": list(after.chips),
                    "rated": after.rated,
                    "buy_in": after.buy_in,
                    "seats": _seats(after),
                }
                kind = WebhookMessage.Kind.MATCH_FINISHED
            if webhooks.record(kind, f"{kind}:{game_id}", data, at) is not None:
                out.messages += 1

    # ------------------------------------------------------------ chips

    def _chips(self, rows: Sequence[tuple], out: Found) -> None:
        settled = [r for r in rows if r[1] in ("payout", "refund")]
        if not settled:
            return
        with connection.cursor() as cur:
            cur.execute(
                "SELECT p.entry_id, a.user_id, p.amount, p.balance_after FROM chips_posting p"
                " JOIN chips_account a ON a.id = p.account_id"
                " WHERE p.entry_id = ANY(%s) AND a.kind = 'wallet' ORDER BY p.id",
                [[r[0] for r in settled]],
            )
            postings: dict[int, list[tuple]] = {}
            for entry_id, user_id, amount, balance in cur.fetchall():
                postings.setdefault(entry_id, []).append((user_id, amount, balance))
        for entry_id, cause, key, game_id, created_at in settled:
            moved = postings.get(entry_id, [])
            game = str(game_id) if game_id else None
            for user_id, amount, balance in moved:
                out.causes.append(
                    inbox.Cause(
                        [user_id],
                        Kind.CHIPS_SETTLED,
                        cause=f"chips_settled:{key}",
                        game_id=game,
                        data={
                            "game_id": game,
                            "cause": cause,
                            "amount": amount,
                            "balance": balance,
                        },
                        at=created_at,
                    )
                )
            data = {
                "game_id": game,
                "cause": cause,
                "entry": entry_id,
                "wallets": [{"user_id": u, "amount": a} for u, a, _ in moved],
            }
            kind = WebhookMessage.Kind.CHIPS_SETTLED
            if webhooks.record(kind, f"{kind}:{key}", data, created_at) is not None:
                out.messages += 1

    # ------------------------------------------------------------ a run

    def run(self) -> tuple[Found, bool]:
        """Project what the logs hold beyond the cursors; whether more rows are waiting."""
        out = Found()
        with transaction.atomic():
            events, more_events = self.events.read()
            entries, more_entries = [], False
            last = self.entries.read_at
            if last is None or time.monotonic() - last >= self.pace:
                entries, more_entries = self.entries.read()
            for game_id, rows in self._writes(events):
                self._game_write(game_id, rows, out)
            self._chips(entries, out)
            out.notifications += inbox.add_many(out.causes)
            out.causes = []
            if self.push:
                out.pushes = push.record_many(out.notifications)
            self.events.save(self.pace)
            self.entries.save(self.pace)
            if out.notifications:
                inbox.announce(out.notifications)
        return out, more_events or more_entries

    def flush(self) -> None:
        """Save both cursors now (what the runs read is written already)."""
        with transaction.atomic():
            self.events.save()
            self.entries.save()

    def run_all(self) -> Found:
        """Run until the logs are read to their end (a catch-up, a test)."""
        total = Found()
        while True:
            found, more = self.run()
            total.notifications += found.notifications
            total.messages += found.messages
            total.pushes += found.pushes
            if not more:
                return total
