"""`make chaos`: faults, one after another, against a cluster of its own while people and bots
play; then proof that nothing a player was told had happened was lost or done twice.

    .venv/bin/python scripts/chaos.py            (`make chaos`; stops by itself in under 10 min)

It starts `make cluster` (``python -m cluster``) in a temporary var dir on free ports, then:

- tables of three simulated people (``PEOPLE_TABLES``) and tables of one person against two bots
  (``BOT_TABLES``: a hard and a normal bot, or an easy and a normal one), over HAProxy. Each
  person is a client as a phone is: it follows its game's stream (Server-Sent Events, resumed
  with ``Last-Event-ID`` after a drop), thinks a moment when a ``view`` frame gives it legal
  commands, sends one with an ``Idempotency-Key``, and on a refused or dropped connection, a
  time-out or a 5xx sends the very same request again (backing off 0.25 s to 2 s), until it has
  an answer; it keeps a journal of every answer. A finished match is followed by a new one;
- while they play, the faults of docs/operations.md in turn, each once the previous one has
  recovered and the tables have played on for ``STEADY_SECONDS``: ``kill -9`` of a web node,
  ``kill -9`` of a web node's gunicorn arbiter alone (its workers must exit on their own),
  ``kill -9`` of the worker node that has a bot's turn in hand (its log says it received the
  task and has not finished it), ``kill -9`` of a scheduler, a rolling restart of every
  application process as an upgrade runs it (``python -m cluster rolling-restart``: each web
  node drained in HAProxy, stopped gracefully, started, ready again, then each worker node,
  scheduler, the notifier and beat; no client may get a 5xx meanwhile), a restart of pgbouncer,
  a restart of Redis, a fast restart of the primary, and a hard stop (``kill -9``) of the
  primary followed by ``python -m cluster failover`` (then ``python -m cluster rejoin``: the old
  primary must come back as the new one's synchronous standby, read-only). For each fault it
  prints how long recovery took: the part back (running again, or the standby promoted), a write
  through HAProxy answered again (a probe client marks its inbox read every 0.2 s), and every
  bot table that was waiting on the server moved on. After each, within ``ORPHAN_SECONDS``, only
  the current arbiter's workers may listen on each web node's port (no worker of a dead
  arbiter);
- then no new match starts, the matches in play run on for up to ``DRAIN_SECONDS``, and:
  every game's hash chain, legality and seal verify (``manage.py verify_events``); every command
  answered 200 has its events in the log, at the seqs and with the hashes it was told, exactly
  once (no event of a person's is in the log without a 200 for it); no game is stuck (each has
  finished and been settled, or had an event in the last 20 s); the history, stats and ratings
  equal a rebuild from the log (``rebuild_projections``), the inbox its rebuild
  (``notifications rebuild --check``), the chips ledger its check (``verify_ledger``);
- Ctrl-C to the cluster, and no process of it left.

The last line: faults injected, survived, acknowledged moves lost, duplicated, games verified.
Exit status 0 only when every fault was survived and every check passed. A command, not a
test: it takes minutes and a machine's attention.
"""

from __future__ import annotations

import collections
import http.client
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cluster import harness, topology  # noqa: E402
from games.rules.bots import GreedyBot  # noqa: E402 (the pure rules core: no Django)
from ops import orphans  # noqa: E402

RUN_LIMIT_SECONDS = 570.0  # everything, the cluster's start and stop included
PEOPLE_TABLES = 4
BOT_TABLES = 4
THINK_SECONDS = (0.15, 0.6)
STEADY_SECONDS = 8.0
RECOVERY_LIMIT_SECONDS = 90.0
# After a fault, a worker of a dead gunicorn arbiter may listen on a node's port this long at most.
ORPHAN_SECONDS = 5.0
DRAIN_SECONDS = 100.0
ON_TIME_SECONDS = 20.0
PASSWORD = "a-long-chaos-passphrase"
FAULTS = 9  # Faults.all()
RULES = {"preset": "standard", "turn_seconds": 0, "wins_to_match": 2}
BOT_LEVELS = [("hard", "normal"), ("easy", "normal")]
CLUSTER_ENV = {
    "TONGITS_BOT_DELAY_SECONDS": "0.3",
    "TONGITS_NEXT_ROUND_DELAY_SECONDS": "1",
    "LOG_LEVEL": "INFO",
}


def log(message: str) -> None:
    print(f"chaos: {message}", flush=True)


class TransportError(Exception):
    """No HTTP answer: refused, dropped, timed out."""


class Http:
    """One keep-alive connection to HAProxy, with a token."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 15.0) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.token = token
        self.timeout = timeout
        self.conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.conn = None

    def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        if self.token:
            all_headers["Authorization"] = f"Token {self.token}"
        data = json.dumps(body) if body is not None else None
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self.conn.request(method, path, data, all_headers)
            answer = self.conn.getresponse()
            raw = answer.read()
            if answer.getheader("Connection", "").lower() == "close":
                self.close()
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            raise TransportError(f"{type(exc).__name__}: {exc}") from None
        try:
            return answer.status, json.loads(raw) if raw else None
        except ValueError:
            return answer.status, {"raw": raw[:200].decode(errors="replace")}


@dataclass
class Journal:
    """Every command and the answers it got; client-side errors by kind."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    commands: list[dict[str, Any]] = field(default_factory=list)
    errors: collections.Counter = field(default_factory=collections.Counter)
    reconnects: int = 0
    gave_up: int = 0

    def error(self, kind: str) -> None:
        with self.lock:
            self.errors[kind] += 1


class Run:
    def __init__(self, cluster: harness.RunningCluster) -> None:
        self.cluster = cluster
        self.url = cluster.url
        self.journal = Journal()
        self.stop_new = threading.Event()  # no new match from now on
        self.stop_all = threading.Event()  # every client stops (after its command in hand)
        self.games: set[str] = set()
        self.games_lock = threading.Lock()
        self.bot_games: set[str] = set()
        self.failures: list[str] = []

    def add_game(self, game_id: str, bots: bool) -> None:
        with self.games_lock:
            self.games.add(game_id)
            if bots:
                self.bot_games.add(game_id)

    def call(
        self,
        http_: Http,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        limit: float = RECOVERY_LIMIT_SECONDS,
    ) -> tuple[int, Any]:
        """A request sent again as a phone would (same body, same headers) until it gets an
        answer that is not a 5xx or 429: refused or dropped connections, time-outs, 502 or
        503 while a part restarts."""
        deadline = time.monotonic() + limit
        delay = 0.25
        while True:
            try:
                status, body_out = http_.request(method, path, body, headers)
            except TransportError:
                self.journal.error("no answer")
                status, body_out = None, None
            if status is not None and status < 500 and status != 429:
                return status, body_out
            if status is not None:
                self.journal.error(str(status))
            if time.monotonic() > deadline:
                raise TimeoutError(f"{method} {path}: no answer within {limit:.0f} s")
            wait = delay
            if status == 429 and isinstance(body_out, dict) and body_out.get("retry_after"):
                wait = float(body_out["retry_after"])
            time.sleep(wait * random.uniform(0.8, 1.2))
            delay = min(2.0, delay * 2)


# ---------------------------------------------------------------- a person at a table


class Seat(threading.Thread):
    """One person at one game: follows its stream, plays its turns, keeps its journal."""

    def __init__(self, run: Run, game_id: str, token: str, label: str, seed: int) -> None:
        super().__init__(name=label, daemon=True)
        self.run_ = run
        self.game_id = game_id
        self.token = token
        self.label = label
        self.rng = random.Random(seed)
        self.bot = GreedyBot()
        self.commands = Http(run.url, token)
        self.ended: dict[str, Any] | None = None
        self.error: str | None = None

    def run(self) -> None:
        try:
            self.follow()
        except Exception as exc:  # a client that dies is a failure of the run, reported
            self.error = f"{self.label}: {type(exc).__name__}: {exc}"

    def follow(self) -> None:
        run = self.run_
        path = f"/api/v1/games/{self.game_id}/stream"
        last_seq, acted = 0, -1
        delay = 0.25
        while self.ended is None and not run.stop_all.is_set():
            conn = http.client.HTTPConnection(*self.commands_address(), timeout=20)
            try:
                conn.request(
                    "GET",
                    path,
                    headers={
                        "Authorization": f"Token {self.token}",
                        "Accept": "text/event-stream",
                        "Last-Event-ID": str(last_seq),
                    },
                )
                answer = conn.getresponse()
                if answer.status != 200:
                    answer.read()
                    raise TransportError(f"stream answered {answer.status}")
                delay = 0.25
                for event, ident, data in frames(answer):
                    if ident is not None:
                        last_seq = ident
                    if event == "end":
                        if data.get("reason") == "shutdown":
                            break  # the node is stopping: resume elsewhere
                        self.ended = data
                        return
                    if run.stop_all.is_set():
                        return
                    if event != "view" or not data["legal_commands"] or data["version"] <= acted:
                        continue
                    time.sleep(self.rng.uniform(*THINK_SECONDS))
                    self.play(data)
                    acted = data["version"]
            except (OSError, http.client.HTTPException, TransportError, ValueError):
                pass
            finally:
                conn.close()
            if self.ended is None and not run.stop_all.is_set():
                with run.journal.lock:
                    run.journal.reconnects += 1
                time.sleep(delay * self.rng.uniform(0.8, 1.2))
                delay = min(2.0, delay * 2)

    def commands_address(self) -> tuple[str, int]:
        return self.commands.host, self.commands.port

    def play(self, view: dict[str, Any]) -> None:
        command = self.bot.choose(view["view"], view["legal_commands"], self.rng)
        key = f"{self.label}-{uuid.uuid4().hex}"
        entry: dict[str, Any] = {
            "game": self.game_id,
            "key": key,
            "seat": self.label,
            "expected_version": view["version"],
            "type": command.get("type"),
            "attempts": 0,
        }
        body = {"command": command, "expected_version": view["version"]}
        started = time.monotonic()
        # Wall-clock times, which PostgreSQL's commit times share: a command answered 200
        # before a moment was committed before it; one first sent after it, after it.
        entry["sent_at"] = time.time()
        try:
            status, answer = self.run_.call(
                self.commands,
                "POST",
                f"/api/v1/games/{self.game_id}/commands",
                body,
                headers={"Idempotency-Key": key},
            )
        except TimeoutError:
            entry["status"] = None
            with self.run_.journal.lock:
                self.run_.journal.gave_up += 1
                self.run_.journal.commands.append(entry)
            return
        entry["status"] = status
        entry["took"] = time.monotonic() - started
        entry["answered_at"] = time.time()
        if status == 200:
            entry["version"] = answer["version"]
            entry["events"] = [
                (e["seq"], e["hash"], e["actor"], e["type"]) for e in answer["events"]
            ]
        else:
            entry["code"] = (answer or {}).get("code")
        with self.run_.journal.lock:
            self.run_.journal.commands.append(entry)


def frames(answer: http.client.HTTPResponse):
    """(event, id, data) of a Server-Sent Events answer."""
    event, ident, data = None, None, None
    for raw in answer:
        line = raw.decode().rstrip("\r\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("id: "):
            ident = int(line[4:])
        elif line.startswith("data: "):
            data = json.loads(line[6:])
        elif not line and event is not None:
            yield event, ident, data
            event, ident, data = None, None, None


# ---------------------------------------------------------------- tables


def register(run: Run, name: str) -> str:
    status, body = run.call(
        Http(run.url), "POST", "/api/v1/auth/register", {"username": name, "password": PASSWORD}
    )
    if status != 201:
        raise RuntimeError(f"register {name}: {status} {body}")
    return body["token"]


def new_table(run: Run, owner: Http, payload: dict[str, Any], known: set[str]) -> str:
    """POST /tables; when its answer is lost (the table may exist), the owner's waiting or
    active table that is not one of ``known`` is the one."""
    for _ in range(3):
        try:
            status, body = owner.request("POST", "/api/v1/tables", payload)
        except TransportError:
            status, body = None, None
        if status == 201:
            return body["id"]
        if status is not None and status < 500:
            raise RuntimeError(f"table: {status} {body}")
        time.sleep(1.0)
        status, mine = run.call(owner, "GET", "/api/v1/me/games")
        fresh = [g["game_id"] for g in (mine or {}).get("games", []) if g["game_id"] not in known]
        if fresh:
            return fresh[0]
    raise RuntimeError("no table could be made")


def people_tables(
    run: Run, index: int, tokens: list[str], names: list[str], buy_in: int = 0
) -> None:
    owner = Http(run.url, tokens[0])
    seats = [{"kind": "user"}] + [{"kind": "user", "username": n} for n in names[1:]]
    known: set[str] = set()
    match = 0
    while not run.stop_new.is_set():
        game_id = new_table(run, owner, table_payload(seats, buy_in), known)
        known.add(game_id)
        for token in tokens[1:]:  # an invitation each: accepted (409: already, on a retry)
            status, body = run.call(
                Http(run.url, token),
                "POST",
                f"/api/v1/tables/{game_id}/invitation",
                {"answer": "accept"},
            )
            if status not in (200, 409):
                raise RuntimeError(f"invitation: {status} {body}")
        status, body = run.call(owner, "POST", f"/api/v1/tables/{game_id}/start")
        if status != 200:
            status, view = run.call(owner, "GET", f"/api/v1/games/{game_id}")
            if view.get("status") != "active":
                raise RuntimeError(f"start: {status} {body}")
        run.add_game(game_id, bots=False)
        players = [
            Seat(run, game_id, token, f"t{index}m{match}s{k}", 1000 * index + 10 * match + k)
            for k, token in enumerate(tokens)
        ]
        play_out(run, players)
        match += 1


def table_payload(seats: list[dict[str, Any]], buy_in: int) -> dict[str, Any]:
    """POST /tables' body; played for chips when ``buy_in`` (the ledger then has moves)."""
    return {"rules": RULES, "seats": seats, **({"buy_in": buy_in} if buy_in else {})}


def bot_tables(run: Run, index: int, token: str, buy_in: int = 0) -> None:
    owner = Http(run.url, token)
    levels = BOT_LEVELS[index % len(BOT_LEVELS)]
    seats = [{"kind": "user"}, *({"kind": "bot", "level": level} for level in levels)]
    known: set[str] = set()
    match = 0
    while not run.stop_new.is_set():
        game_id = new_table(run, owner, table_payload(seats, buy_in), known)
        known.add(game_id)
        run.add_game(game_id, bots=True)
        play_out(run, [Seat(run, game_id, token, f"b{index}m{match}", 5000 + 10 * index + match)])
        match += 1


def guarded(run: Run, loop: Any, *args: Any) -> None:
    """A table's loop; its failure is the run's."""
    try:
        loop(run, *args)
    except Exception as exc:
        run.failures.append(f"{loop.__name__}{args[:1]}: {type(exc).__name__}: {exc}")


def play_out(run: Run, players: list[Seat]) -> None:
    for player in players:
        player.start()
    for player in players:
        player.join()
        if player.error:
            run.failures.append(player.error)


class Probe(threading.Thread):
    """A write through HAProxy every 0.2 s (mark the inbox read): when the API answers."""

    def __init__(self, run: Run, token: str) -> None:
        super().__init__(name="probe", daemon=True)
        self.run_ = run
        self.http = Http(run.url, token, timeout=5)
        self.results: list[tuple[float, bool]] = []
        self.lock = threading.Lock()

    def run(self) -> None:
        while not self.run_.stop_all.is_set():
            try:
                status, _ = self.http.request(
                    "POST", "/api/v1/me/notifications/read", {"all": True}
                )
                ok = status == 200
            except TransportError:
                ok = False
            with self.lock:
                self.results.append((time.monotonic(), ok))
            time.sleep(0.2)

    def healthy_since(self, since: float, streak: int = 5) -> float | None:
        """The start of the first run of ``streak`` successes after ``since`` that no failure
        follows up to now; None when there is none yet."""
        with self.lock:
            results = [r for r in self.results if r[0] >= since]
        start = None
        count = 0
        for at, ok in results:
            if ok:
                start = at if count == 0 else start
                count += 1
            else:
                count, start = 0, None
        return start if count >= streak else None

    def failures_since(self, since: float) -> int:
        with self.lock:
            return sum(1 for at, ok in self.results if at >= since and not ok)


# ---------------------------------------------------------------- the database, directly


class Database:
    """The cluster's PostgreSQL, whichever server takes writes (libpq finds it), or the
    database at ``url`` (a restored copy)."""

    def __init__(self, layout: topology.Layout, url: str | None = None) -> None:
        self.layout = layout
        self.url = url
        self.conn: psycopg.Connection | None = None

    def query(self, sql: str, params: Any = None) -> list[tuple]:
        for _ in range(60):
            try:
                if self.conn is None:
                    hosts = self.layout.pg_hosts()
                    self.conn = psycopg.connect(
                        self.url
                        or f"postgres://postgres@{hosts}/{topology.DATABASE}"
                        "?target_session_attrs=read-write&connect_timeout=2",
                        autocommit=True,
                    )
                return self.conn.execute(sql, params).fetchall()
            except psycopg.Error:
                if self.conn is not None:
                    self.conn.close()
                self.conn = None
                time.sleep(0.5)
        raise RuntimeError("the database did not answer for 30 s")

    def versions(self, games: set[str]) -> dict[str, tuple[int, str, str]]:
        rows = self.query(
            "SELECT id::text, version, status, awaiting FROM games_game WHERE id = ANY(%s::uuid[])",
            [list(games)],
        )
        return {game: (version, status, awaiting) for game, version, status, awaiting in rows}


# ---------------------------------------------------------------- faults


@dataclass
class Fault:
    name: str
    injected_at: float = 0.0
    back: float | None = None  # the part running again (or the standby promoted)
    api: float | None = None  # writes through HAProxy answered again
    bots: float | None = None  # every bot table waiting on the server moved on
    errors: int = 0  # probe writes that failed meanwhile
    detail: str = ""

    @property
    def recovery(self) -> float | None:
        parts = [self.back, self.api, self.bots]
        if any(p is None for p in parts):
            return None
        return max(parts) - self.injected_at  # type: ignore[type-var]

    def line(self) -> str:
        def at(t: float | None) -> str:
            return "never" if t is None else f"{t - self.injected_at:5.1f} s"

        total = self.recovery
        return (
            f"{self.name:<38} recovered in {'NOT' if total is None else f'{total:5.1f} s'} "
            f"(back {at(self.back)}, writes {at(self.api)}, bot tables {at(self.bots)}; "
            f"{self.errors} probe writes failed){' ' + self.detail if self.detail else ''}"
        )


def moved_on(now: tuple[int, str, str] | None, version: int) -> bool:
    """Whether a table that waited on the server at ``version`` got that work done: a move or
    a deal appended, or its settlement recorded (which appends nothing)."""
    return now is not None and (now[0] > version or now[2] not in ("bot", "deal", "settle"))


class Faults:
    def __init__(self, run: Run, probe: Probe, db: Database) -> None:
        self.run = run
        self.cluster = run.cluster
        self.probe = probe
        self.db = db
        self.done: list[Fault] = []

    def kill_group(self, name: str) -> int:
        pid = self.cluster.pid(name)
        if not pid:
            raise RuntimeError(f"{name} is not running")
        os.killpg(pid, signal.SIGKILL)
        return pid

    def waiting_bots(self) -> dict[str, int]:
        """Bot tables waiting on the server (a bot's move, a deal, a settlement): their
        version now."""
        with self.run.games_lock:
            games = set(self.run.bot_games)
        if not games:
            return {}
        return {
            game: version
            for game, (version, status, awaiting) in self.db.versions(games).items()
            if awaiting in ("bot", "deal", "settle") and status in ("active", "finished")
        }

    def recover(
        self, fault: Fault, back_check, waiting: dict[str, int], limit: float = 0.0
    ) -> None:
        """Wait for each part of recovery, noting when it came (within ``limit`` seconds of
        the fault, ``RECOVERY_LIMIT_SECONDS`` by default)."""
        deadline = fault.injected_at + (limit or RECOVERY_LIMIT_SECONDS)
        while time.monotonic() < deadline:
            now = time.monotonic()
            if fault.back is None and back_check():
                fault.back = now
            if fault.api is None and fault.back is not None:
                fault.api = self.probe.healthy_since(fault.injected_at)
            if fault.bots is None:
                now_at = self.db.versions(set(waiting)) if waiting else {}
                if all(moved_on(now_at.get(g), v) for g, v in waiting.items()):
                    fault.bots = now if waiting else fault.injected_at
            if fault.back and fault.api and fault.bots:
                break
            time.sleep(0.1)
        fault.errors = self.probe.failures_since(fault.injected_at)
        if fault.bots is None:
            now_at = self.db.versions(set(waiting))
            late = {g: now_at.get(g) for g, v in waiting.items() if not moved_on(now_at.get(g), v)}
            fault.detail += f" (bot tables that did not move on: {late})"
        self.check_listeners(fault)
        self.done.append(fault)
        log(fault.line())

    def check_listeners(self, fault: Fault) -> None:
        """Only the current arbiter's workers listen on each web node's port, within
        ``ORPHAN_SECONDS`` of the recovery: a fault leaves no worker serving beside them."""
        deadline = time.monotonic() + ORPHAN_SECONDS
        while any(stale := harness.stale_listeners(self.cluster)):
            if time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        if any(stale.values()):
            named = {n: [orphans.command_line(p) for p in pids] for n, pids in stale.items()}
            self.run.failures.append(f"{fault.name}: stale listeners on the web ports: {named}")
            fault.detail += f" (STALE LISTENERS: {stale})"

    def restarted(self, name: str, old_pid: int):
        def check() -> bool:
            info = self.cluster.rpc().supervisor.getProcessInfo(name)
            return info["statename"] == "RUNNING" and info["pid"] not in (0, old_pid)

        return check

    # -- the faults, in order

    def web_node(self) -> None:
        fault = Fault("kill -9 of a web node (web-1)")
        waiting = self.waiting_bots()
        fault.injected_at = time.monotonic()
        pid = self.kill_group("web-1")
        restarted = self.restarted("web-1", pid)
        self.recover(
            fault,
            lambda: restarted() and harness.node_states(self.cluster.layout).get("web-1") == "UP",
            waiting,
        )

    def web_master(self) -> None:
        """The arbiter alone, as the OOM killer would take it: its workers must go by
        themselves (supervisord knows only the arbiter and starts a new one)."""
        fault = Fault("kill -9 of a web node's arbiter (web-2)")
        waiting = self.waiting_bots()
        workers = harness.node_workers(self.cluster, "web-2")
        pid = self.cluster.pid("web-2")
        fault.injected_at = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        restarted = self.restarted("web-2", pid)
        gone: list[float] = []

        def back() -> bool:
            if not gone and not any(orphans.running(w) for w in workers):
                gone.append(time.monotonic() - fault.injected_at)
            return bool(gone) and restarted() and self.node_up("web-2")

        self.recover(fault, back, waiting)
        if gone:
            fault.detail = f"(its {len(workers)} workers gone in {gone[0]:.2f} s)" + fault.detail
        else:
            fault.detail = f"(its workers {sorted(workers)} still running)" + fault.detail
            self.run.failures.append(f"{fault.name}: the old arbiter's workers still run")
        log(f"  {fault.detail}")

    def node_up(self, node: str) -> bool:
        return harness.node_states(self.cluster.layout).get(node) == "UP"

    def worker_mid_bot_turn(self) -> None:
        fault = Fault("kill -9 of a worker node mid bot turn")
        node, task = self.worker_with_bot_turn(timeout=60.0)
        waiting = self.waiting_bots()
        fault.injected_at = time.monotonic()
        pid = self.kill_group(node)
        fault.detail = (
            f"({node} had bot moves' task {task[:8]} in hand)"
            if task
            else f"(no bot turn caught in hand within 60 s: {node} killed anyway)"
        )
        self.recover(fault, self.restarted(node, pid), waiting)

    def worker_with_bot_turn(self, timeout: float) -> tuple[str, str | None]:
        """The worker node whose log shows a bot moves' task received and not yet finished."""
        logs = {n: self.cluster.layout.logs / f"{n}.log" for n in topology.WORKER_NODES}
        offsets = {n: path.stat().st_size for n, path in logs.items()}
        in_hand: dict[str, set[str]] = {n: set() for n in logs}
        pattern = re.compile(r"Task games\.tasks\.play_bot_turns?\[([0-9a-f-]+)\] (\w+)")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for node, path in logs.items():
                with path.open("rb") as handle:
                    handle.seek(offsets[node])
                    chunk = handle.read()
                cut = chunk.rfind(b"\n") + 1
                offsets[node] += cut
                for line in chunk[:cut].decode(errors="replace").splitlines():
                    match = pattern.search(line)
                    if match is None:
                        continue
                    task, what = match.groups()
                    if what == "received":
                        in_hand[node].add(task)
                    else:
                        in_hand[node].discard(task)
                for task in in_hand[node]:
                    return node, task
            time.sleep(0.01)
        return topology.WORKER_NODES[0], None

    def scheduler(self) -> None:
        fault = Fault("kill -9 of a scheduler (scheduler-1)")
        waiting = self.waiting_bots()
        fault.injected_at = time.monotonic()
        pid = self.kill_group("scheduler-1")
        self.recover(fault, self.restarted("scheduler-1", pid), waiting)

    def restart(self, name: str, title: str) -> None:
        fault = Fault(title)
        waiting = self.waiting_bots()
        fault.injected_at = time.monotonic()
        pid = self.cluster.pid(name)
        server = self.cluster.rpc().supervisor
        server.stopProcess(name, True)
        server.startProcess(name, True)
        self.recover(fault, self.restarted(name, pid), waiting)

    def primary_fast_restart(self) -> None:
        primary = self.cluster.state().primary
        standby = self.cluster.state().standby
        fault = Fault(f"fast restart of the primary ({primary})")
        waiting = self.waiting_bots()
        fault.injected_at = time.monotonic()
        pid = self.cluster.pid(primary)
        server = self.cluster.rpc().supervisor
        server.stopProcess(primary, True)  # SIGINT: PostgreSQL's fast shutdown
        server.startProcess(primary, True)
        restarted = self.restarted(primary, pid)

        def back() -> bool:
            return restarted() and self.synchronous(primary, standby)

        self.recover(fault, back, waiting)

    def synchronous(self, primary: str, standby: str | None) -> bool:
        try:
            with psycopg.connect(
                host="127.0.0.1",
                port=self.cluster.layout.port_of(primary),
                user="postgres",
                dbname="postgres",
                connect_timeout=2,
                autocommit=True,
            ) as conn:
                row = conn.execute(
                    "SELECT sync_state FROM pg_stat_replication WHERE application_name = %s",
                    [standby],
                ).fetchone()
            return row is not None and row[0] == "sync"
        except psycopg.Error:
            return False

    def primary_hard_stop_and_failover(self) -> None:
        old = self.cluster.state().primary
        new = self.cluster.state().standby
        fault = Fault(f"kill -9 of the primary ({old}) + failover")
        waiting = self.waiting_bots()
        fault.injected_at = time.monotonic()
        self.kill_group(old)
        # The operator's command, as docs/operations.md says, once the primary is seen gone.
        done = subprocess.run(
            [sys.executable, "-m", "cluster", "failover"],
            cwd=ROOT,
            env=self.cluster_env(),
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            self.run.failures.append(f"failover: {done.stdout}{done.stderr}")
        failed_over = time.monotonic()

        def back() -> bool:
            state = self.cluster.state()
            return state.primary == new and old in state.fenced

        self.recover(fault, back, waiting)
        fault.detail = f"(the failover command took {failed_over - fault.injected_at:.1f} s)"
        log(f"  {fault.detail}")
        self.rejoin(old, new)

    def rejoin(self, old: str, new: str) -> None:
        """The fenced old primary back as the standby (``python -m cluster rejoin``): it must
        come back read-only, following the new primary, never taking a write."""
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "cluster", "rejoin"],
            cwd=ROOT,
            env=self.cluster_env(),
            capture_output=True,
            text=True,
        )
        state = self.cluster.state()
        if done.returncode != 0 or state.standby != old or state.fenced:
            self.run.failures.append(f"rejoin: {done.stdout}{done.stderr} {state}")
            return
        with psycopg.connect(
            host="127.0.0.1",
            port=self.cluster.layout.port_of(old),
            user="postgres",
            dbname="postgres",
            autocommit=True,
        ) as conn:
            if not conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
                self.run.failures.append(f"{old} takes writes after the failover")
        if not self.synchronous(new, old):
            self.run.failures.append(f"{old} is not {new}'s synchronous standby after rejoin")
        how = "copied anew" if "pg_basebackup" in done.stdout else "rewound"
        log(
            f"  rejoin: {old} {how} into {new}'s synchronous standby, read-only, in "
            f"{time.monotonic() - started:.1f} s"
        )

    def rolling_restart(self) -> None:
        """An upgrade's restart (``python -m cluster rolling-restart``) while people play: no
        5xx answer to any client meanwhile, and no probe write refused."""
        fault = Fault("rolling restart of the application")
        waiting = self.waiting_bots()
        with self.run.journal.lock:
            seen = collections.Counter(self.run.journal.errors)
        fault.injected_at = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "cluster", "rolling-restart"],
            cwd=ROOT,
            env=self.cluster_env(),
            capture_output=True,
            text=True,
        )
        took = time.monotonic() - fault.injected_at
        for line in done.stdout.splitlines():
            log(f"  {line}")  # each process's restart, timed
        if done.returncode != 0:
            self.run.failures.append(f"rolling-restart: {done.stdout}{done.stderr}")
        # Recovery is the command's own time (every process restarted) and what follows it.
        self.recover(fault, lambda: done.returncode == 0, waiting, took + RECOVERY_LIMIT_SECONDS)
        with self.run.journal.lock:
            new = collections.Counter(self.run.journal.errors) - seen
        errors = {kind: n for kind, n in new.items() if kind.startswith("5")}
        fault.detail = f"(the command took {took:.1f} s; 5xx answers meanwhile: {errors or 0})"
        log(f"  {fault.detail}")
        if errors or fault.errors:
            self.run.failures.append(
                f"rolling restart: {errors} 5xx answers, {fault.errors} probe writes failed"
            )

    def cluster_env(self) -> dict[str, str]:
        return {
            **os.environ,
            "TONGITS_VAR_DIR": str(self.cluster.layout.var_dir),
            "CLUSTER_PORT": str(self.cluster.layout.port),
            "CLUSTER_BASE_PORT": str(self.cluster.layout.base_port),
        }

    def all(self) -> list:
        return [
            self.web_node,
            self.web_master,
            self.worker_mid_bot_turn,
            self.scheduler,
            self.rolling_restart,
            lambda: self.restart("pgbouncer", "restart of pgbouncer"),
            lambda: self.restart("redis", "restart of Redis"),
            self.primary_fast_restart,
            self.primary_hard_stop_and_failover,
        ]


# ---------------------------------------------------------------- the checks at the end


def manage(run: Run, *args: str) -> subprocess.CompletedProcess[str]:
    layout = run.cluster.layout
    env = {
        **os.environ,
        "DATABASE_URL": layout.direct_url(run.cluster.state().primary),
        "TONGITS_VAR_DIR": str(layout.app_var),
        "CELERY_BROKER_URL": f"redis://127.0.0.1:{layout.port_of('redis')}/0",
        "LOG_LEVEL": "WARNING",
    }
    env.pop("DATABASE_REPLICA_URL", None)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )


PROJECTIONS = {
    "accounts_matchrecord": "game_id",
    "accounts_playermatch": "match_id, seat",
    "accounts_playerstats": "player_id",
}


def projections(db: Database) -> dict[str, list]:
    out = {}
    for table, order in PROJECTIONS.items():
        rows = db.query(f"SELECT to_jsonb(t) - 'id' FROM {table} t ORDER BY {order}")
        out[table] = [row[0] for row in rows]
    return out


def logged_events(db: Database, games: set[str]) -> list[tuple[str, int, str, str, str]]:
    """(game, seq, hash, actor, type) of every event of ``games`` in the log."""
    return db.query(
        "SELECT game_id::text, seq, encode(hash, 'hex'), actor, type FROM games_event "
        "WHERE game_id = ANY(%s::uuid[])",
        [sorted(games)],
    )


def check_journal(run: Run, db: Database) -> tuple[int, int, list[str]]:
    """(acknowledged moves lost, duplicated, problems) of the journal against the log."""
    rows = logged_events(db, run.games)
    # A person's moves: their events but the table's start (answered by POST /tables or
    # /start, not by a command).
    log_events = {(g, seq): (h, actor) for g, seq, h, actor, kind in rows}
    moves = {key for key, (_h, actor) in log_events.items() if actor.startswith("user:")}
    moves -= {(g, seq) for g, seq, _h, _a, kind in rows if kind == "game_started"}
    acknowledged: dict[tuple[str, int], str] = {}
    lost = duplicated = 0
    problems = []
    for entry in run.journal.commands:
        if entry.get("status") != 200:
            continue
        present = True
        for seq, digest, actor, _type in entry["events"]:
            key = (entry["game"], seq)
            if log_events.get(key, (None,))[0] != digest:
                present = False
            if actor.startswith("user:"):
                if key in acknowledged and acknowledged[key] != entry["key"]:
                    duplicated += 1  # two answers claim one event: impossible unless broken
                    problems.append(f"seq {key} answered to two keys")
                acknowledged[key] = entry["key"]
        if not present:
            lost += 1
            problems.append(f"lost: {entry['game']} {entry['key']} {entry['events']}")
    # A person's event no 200 accounts for: a command applied without its answer, or twice.
    for game, seq in sorted(moves):
        if (game, seq) not in acknowledged:
            duplicated += 1
            problems.append(f"unacknowledged person's event: {game} seq {seq}")
    keys = [e["key"] for e in run.journal.commands if e.get("status") == 200]
    records = db.query(
        "SELECT key, count(*) FROM games_idempotencyrecord WHERE key = ANY(%s) GROUP BY key",
        [keys],
    )
    counted = dict(records)
    for key in keys:
        if counted.get(key, 0) != 1:
            problems.append(f"idempotency record of {key}: {counted.get(key, 0)}")
            duplicated += counted.get(key, 0) > 1
    return lost, duplicated, problems


def stuck_games(run: Run, db: Database) -> list[str]:
    rows = db.query(
        "SELECT g.id::text, g.status, g.settled_at IS NOT NULL, "
        "EXTRACT(EPOCH FROM now() - max(e.recorded_at)) "
        "FROM games_game g JOIN games_event e ON e.game_id = g.id "
        "WHERE g.id = ANY(%s::uuid[]) GROUP BY g.id",
        [sorted(run.games)],
    )
    stuck = []
    for game, status, settled, idle in rows:
        if status == "finished" and settled:
            continue
        if status == "active" and idle <= ON_TIME_SECONDS:
            continue
        stuck.append(f"{game}: {status}, settled {settled}, last event {idle:.0f} s ago")
    return stuck


# ---------------------------------------------------------------- main


def main() -> int:
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tongits-chaos-") as tmp:
        log("starting a cluster of its own (python -m cluster)")
        cluster = harness.start(Path(tmp), env=CLUSTER_ENV)
        log(f"cluster up at {cluster.url} in {time.monotonic() - began:.1f} s")
        run = Run(cluster)
        results: dict[str, Any] = {}
        try:
            results = exercise(run, began)
        except Exception as exc:
            run.failures.append(f"{type(exc).__name__}: {exc}")
        finally:
            run.stop_new.set()
            run.stop_all.set()
            try:
                log(f"cluster stopped in {harness.stop(cluster):.1f} s (Ctrl-C); nothing left")
            except harness.HarnessError as exc:
                run.failures.append(str(exc))
        took = time.monotonic() - began
        faults = results.get("faults", [])
        survived = sum(1 for f in faults if f.recovery is not None)
        lost = results.get("lost", "?")
        duplicated = results.get("duplicated", "?")
        verified = results.get("verified", 0)
        for failure in run.failures[:20]:
            log(f"FAILED: {failure}")
        ok = (
            not run.failures
            and len(faults) == FAULTS
            and survived == FAULTS
            and lost == 0
            and duplicated == 0
            and took < 600
        )
        if not ok:
            print(cluster.log_text()[-2000:])
        log(f"{'passed' if ok else 'FAILED'} in {took:.0f} s")
        print(
            f"chaos: {len(faults)} faults injected, {survived} survived, {lost} acknowledged "
            f"moves lost, {duplicated} duplicated, {verified} games verified",
            flush=True,
        )
        return 0 if ok else 1


def exercise(run: Run, began: float) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:6]
    names = [[f"p{tag}t{t}s{s}" for s in range(3)] for t in range(PEOPLE_TABLES)]
    tokens = [[register(run, n) for n in table] for table in names]
    bot_people = [f"b{tag}t{t}" for t in range(BOT_TABLES)]
    bot_tokens = [register(run, n) for n in bot_people]
    probe = Probe(run, register(run, f"probe{tag}"))
    probe.start()
    tables = [
        threading.Thread(
            target=guarded, args=(run, people_tables, i, tokens[i], names[i]), daemon=True
        )
        for i in range(PEOPLE_TABLES)
    ] + [
        threading.Thread(target=guarded, args=(run, bot_tables, i, bot_tokens[i]), daemon=True)
        for i in range(BOT_TABLES)
    ]
    for thread in tables:
        thread.start()
    log(f"{PEOPLE_TABLES} tables of three people and {BOT_TABLES} against bots playing")
    db = Database(run.cluster.layout)
    faults = Faults(run, probe, db)
    for inject in faults.all():
        time.sleep(STEADY_SECONDS)
        if time.monotonic() - began > RUN_LIMIT_SECONDS - 200:
            run.failures.append("out of time before every fault was injected")
            break
        inject()
    time.sleep(STEADY_SECONDS)
    run.stop_new.set()
    drain_until = min(time.monotonic() + DRAIN_SECONDS, began + RUN_LIMIT_SECONDS - 90)
    log("no new matches; the ones in play run on")
    for thread in tables:
        thread.join(max(0.0, drain_until - time.monotonic()))
    stuck = stuck_games(run, db)
    run.stop_all.set()
    for thread in tables:
        thread.join(30)
    time.sleep(2.0)  # settlements of matches that just ended
    results: dict[str, Any] = {"faults": faults.done}
    for problem in stuck:
        run.failures.append(f"stuck: {problem}")
    journal = run.journal
    answered = collections.Counter(e.get("status") for e in journal.commands)
    log(
        f"{len(run.games)} games; {len(journal.commands)} commands sent: {dict(answered)}; "
        f"client-side errors retried {dict(journal.errors)}; {journal.reconnects} stream "
        f"reconnects; {journal.gave_up} given up"
    )
    if journal.gave_up:
        run.failures.append(f"{journal.gave_up} commands never answered")
    lost, duplicated, problems = check_journal(run, db)
    results.update(lost=lost, duplicated=duplicated)
    run.failures.extend(problems[:10])
    log(f"journal against the log: {lost} acknowledged moves lost, {duplicated} duplicated")

    verified = manage(run, "verify_events")
    finished = db.query(
        "SELECT count(*) FROM games_game WHERE id = ANY(%s::uuid[]) AND status = 'finished'",
        [sorted(run.games)],
    )[0][0]
    if verified.returncode == 0:
        counted = db.query("SELECT count(*) FROM games_game WHERE version > 0")[0][0]
        results["verified"] = counted
        log(f"verify_events: every chain sound ({counted} games, {finished} finished here)")
    else:
        run.failures.append(f"verify_events: {verified.stdout[-1500:]}{verified.stderr[-1500:]}")

    before = projections(db)
    rebuilt = manage(run, "rebuild_projections", "--no-progress")
    if rebuilt.returncode != 0:
        run.failures.append(f"rebuild_projections: {rebuilt.stderr[-1500:]}")
    after = projections(db)
    if before != after:
        differing = [t for t in PROJECTIONS if before[t] != after[t]]
        run.failures.append(f"projections differ from a rebuild in {differing}")
    else:
        rows = sum(len(v) for v in after.values())
        log(f"projections equal a rebuild ({rows} rows)")
    for args in (("notifications", "rebuild", "--check"), ("verify_ledger",)):
        done = manage(run, *args)
        if done.returncode != 0:
            run.failures.append(f"{' '.join(args)}: {done.stdout[-800:]}{done.stderr[-800:]}")
        else:
            log(f"{' '.join(args)}: ok")
    log("recovery per fault:")
    for fault in faults.done:
        log(f"  {fault.line()}")
    return results


if __name__ == "__main__":
    sys.exit(main())
