"""Move to push: how long after a move the next player's Web Push reaches the push service
(`make bench-push`).

    .venv/bin/python scripts/bench_push.py                          (20 tables, 60 s)
    .venv/bin/python scripts/bench_push.py --tables 10 --seconds 40 --think 0.5-1.5

Why end to end: a push crosses every part of the stack after the move's commit (the games'
NOTIFY, the notifier's projection and its ``push.record``, the broker, a Celery worker's claim,
the stream check, the encryption and the HTTP request), so the only honest figure is the one a
push service would see. It starts the stack as `make run` does (``python -m ops.stack``: web
processes, worker, scheduler, notifier, beat; the defaults, throttles as shipped) on a scratch
database ``tongits_bench_push`` of the local PostgreSQL, with Redis database 13 as the broker
(the throttles' and stream cap's cache as `make run` has it: the machine's shared table, unless
``--cache-url`` names a Redis), on a free port, and stops it at the end. The load's address is
in ``TONGITS_THROTTLE_EXEMPT``: counted by the throttles, never refused.

The push service is this process's own (an ``http.server`` on 127.0.0.1): it answers 201 and
notes when each ``POST /push/<user id>`` arrived, on the same clock (``time.monotonic``) as the
moves' answers, so the two can be subtracted. The stack gets a fresh VAPID key and accepts
endpoints on 127.0.0.1 (``TONGITS_WEBPUSH_ENDPOINT_HOSTS``).

Everything else goes through the API, as an app would: each user registers
(``POST /auth/register``) and subscribes one device of its own (``POST /me/devices``, a P-256
key pair and an auth secret per user), three users make an untimed table (the owner names the
other two, who accept the invitation; first to 99 wins, so no match ends during the run). Nobody
opens a stream, so every turn is pushed.

Each table is a thread that plays whoever is to act: it thinks ``--think`` seconds before each
command, then POSTs the greedy bot's choice with the version it saw. When a move's answer shows
the turn passed to another seat, the answer's arrival is t0, and that seat acts only once its
push came (or 10 s passed), as a person woken by it would. Afterwards every push is matched to
a turn by its endpoint and its time: to the user's latest turn whose move was sent before the
push arrived (a push may beat the move's own answer; then it counts as 0 ms). A turn's first
push within 10 s is measured, none is missing, any more are duplicates. A new round's first
turn comes from the worker's deal, not from a move: its push is matched (so it is not taken for
a duplicate) but not timed. Every matched push is decrypted (RFC 8291) and must be this
table's ``your_turn``.

It prints pushes measured, move to push p50/p95/p99 and max, pushes missing and duplicates, and
the commit and machine. A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import base64
import bisect
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import http_ece
import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_players import free_port, pct, reset_database  # noqa: E402  (beside this script)

DATABASE = "postgres://postgres@127.0.0.1:5432/tongits_bench_push"
BROKER = "redis://127.0.0.1:6379/13"
LOG = ROOT / "var" / "bench-push.log"
PASSWORD = "bench-push-passphrase-0192"
#: A turn whose push has not come this long after its move is counted missing.
PUSH_WAIT_SECONDS = 10.0
#: The phases in which a seat is to act (games.rules.state.IN_ROUND_PHASES).
IN_ROUND = ("start", "play", "draw_call")
#: Untimed (every turn is pushed: a turn limit under TONGITS_YOUR_TURN_MIN_SECONDS is not) and
#: long (no match ends during a run).
RULES = {"preset": "standard", "turn_seconds": 0, "wins_to_match": 99}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def vapid_private_key() -> str:
    """A fresh VAPID key in the setting's raw form (base64url of the 32-byte P-256 scalar)."""
    from py_vapid import Vapid02

    key = Vapid02()
    key.generate_keys()
    return b64url(key.private_key.private_numbers().private_value.to_bytes(32, "big"))


# ---------------------------------------------------------------- the push service


@dataclass(frozen=True)
class Arrival:
    at: float  # time.monotonic() when the request came in
    path: str
    body: bytes


class PushService:
    """A Web Push service on 127.0.0.1: notes every POST's arrival and answers 201 at once."""

    def __init__(self) -> None:
        self.arrivals: list[Arrival] = []
        self.changed = threading.Condition()
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as a real push service allows

            def do_POST(self) -> None:  # noqa: N802  (http.server's name)
                at = time.monotonic()
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()
                with service.changed:
                    service.arrivals.append(Arrival(at, self.path, body))
                    service.changed.notify_all()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def wait(self, path: str, after: float, timeout: float) -> bool:
        """Whether a push to ``path`` arrived after ``after`` (waiting up to ``timeout``)."""
        deadline = time.monotonic() + timeout
        seen = 0
        with self.changed:
            while True:
                for arrival in self.arrivals[seen:]:
                    if arrival.path == path and arrival.at >= after:
                        return True
                seen = len(self.arrivals)
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(left)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# ---------------------------------------------------------------- users, devices, tables


class Subscription:
    """A browser's side of one Web Push subscription: its key pair and auth secret."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.secret = os.urandom(16)
        point = self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        self.p256dh = b64url(point)
        self.auth = b64url(self.secret)

    def read(self, body: bytes) -> dict[str, Any]:
        plain = http_ece.decrypt(
            body, private_key=self.key, auth_secret=self.secret, version="aes128gcm"
        )
        return json.loads(plain)


@dataclass
class Player:
    user_id: int
    username: str
    http: httpx.Client
    subscription: Subscription

    @property
    def path(self) -> str:
        return f"/push/{self.user_id}"

    def call(self, method: str, path: str, body: Any = None) -> httpx.Response:
        """One request; once more on a new connection when a kept-alive one was closed (the
        server's keep-alive time-out), as an app's HTTP client does. A repeated command is
        harmless: its ``expected_version`` makes the second one a 409."""
        try:
            return self.http.request(method, path, json=body)
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
            return self.http.request(method, path, json=body)


def register(base: str, name: str, push_port: int) -> Player:
    """A user made through the API, with one Web Push device of its own."""
    http = httpx.Client(base_url=base, timeout=30.0)
    answer = http.post("/api/v1/auth/register", json={"username": name, "password": PASSWORD})
    if answer.status_code != 201:
        raise SystemExit(f"register {name}: {answer.status_code} {answer.text[:300]}")
    body = answer.json()
    http.headers["Authorization"] = f"Token {body['token']}"
    player = Player(body["user"]["id"], name, http, Subscription())
    device = {
        "kind": "webpush",
        "endpoint": f"http://127.0.0.1:{push_port}{player.path}",
        "keys": {"p256dh": player.subscription.p256dh, "auth": player.subscription.auth},
    }
    answer = player.call("POST", "/api/v1/me/devices", device)
    if answer.status_code != 201:
        raise SystemExit(f"device of {name}: {answer.status_code} {answer.text[:300]}")
    return player


def make_table(players: list[Player]) -> str:
    """A started table of the three: the owner names the others, who accept."""
    owner, *others = players
    seats = [{"kind": "user"}] + [{"kind": "user", "username": p.username} for p in others]
    answer = owner.call("POST", "/api/v1/tables", {"rules": RULES, "seats": seats})
    if answer.status_code != 201:
        raise SystemExit(f"table: {answer.status_code} {answer.text[:300]}")
    game_id = answer.json()["id"]
    for other in others:
        answer = other.call("POST", f"/api/v1/tables/{game_id}/invitation", {"answer": "accept"})
        if answer.status_code != 200:
            raise SystemExit(f"invitation: {answer.status_code} {answer.text[:300]}")
    answer = owner.call("POST", f"/api/v1/tables/{game_id}/start")
    if answer.status_code != 200:
        raise SystemExit(f"start: {answer.status_code} {answer.text[:300]}")
    return game_id


# ---------------------------------------------------------------- playing


@dataclass(frozen=True)
class Turn:
    """A turn that should be pushed: to ``player``, caused by a move sent at ``sent`` whose
    answer arrived at ``t0`` (``t0`` None: a new round's first turn, dealt by the worker)."""

    player: Player
    game_id: str
    sent: float
    t0: float | None


@dataclass
class Record:
    turns: list[Turn] = field(default_factory=list)
    moves: int = 0
    conflicts: int = 0
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def turn(self, turn: Turn) -> None:
        with self.lock:
            self.turns.append(turn)

    def error(self, text: str) -> None:
        with self.lock:
            self.errors.append(text)


class Table:
    """One table's three players, played by one thread (see the module's docstring)."""

    def __init__(
        self,
        game_id: str,
        players: list[Player],
        service: PushService,
        record: Record,
        think: tuple[float, float],
        seed: int,
    ) -> None:
        from games.rules.bots import GreedyBot

        self.game_id, self.service, self.record, self.think = game_id, service, record, think
        self.rng = random.Random(seed)
        self.bot = GreedyBot()
        self.path = f"/api/v1/games/{game_id}"
        self.seat_of: dict[int, Player] = {}
        for player in players:  # who sits where
            self.seat_of[self.get(player)["seat"]] = player

    def get(self, player: Player) -> dict[str, Any]:
        answer = player.call("GET", self.path)
        answer.raise_for_status()
        return answer.json()

    def dealt(self, timeout: float = 30.0) -> dict[str, Any] | None:
        """The table's view once a seat is to act again (after a round's end: the deal)."""
        deadline = time.monotonic() + timeout
        anyone = next(iter(self.seat_of.values()))
        while time.monotonic() < deadline:
            view = self.get(anyone)
            if view["view"]["phase"] in IN_ROUND:
                return view
            if view["status"] == "finished":
                return None
            time.sleep(0.2)
        return None

    def play(self, stop_at: float) -> None:
        """Move until ``stop_at``; a round's end is always followed to its deal, so that deal's
        push is matched to its turn rather than taken for a duplicate of an earlier one."""
        view = self.dealt()
        mine: dict[str, Any] | None = None  # the actor's view, from its last command's answer
        while view is not None and time.monotonic() < stop_at:
            actor = self.seat_of[view["view"]["turn"]]
            if mine is None:
                mine = self.get(actor)
            if not mine["legal_commands"]:  # not its move after all (it moved meanwhile)
                view, mine = self.dealt(), None
                continue
            time.sleep(self.rng.uniform(*self.think))
            command = self.bot.choose(mine["view"], mine["legal_commands"], self.rng)
            sent = time.monotonic()
            try:
                answer = actor.call(
                    "POST",
                    f"{self.path}/commands",
                    {"command": command, "expected_version": mine["version"]},
                )
            except httpx.HTTPError as exc:
                self.record.error(f"POST {type(exc).__name__}")
                view, mine = self.dealt(), None
                continue
            t0 = time.monotonic()
            if answer.status_code == 409:
                with self.record.lock:
                    self.record.conflicts += 1
                view, mine = self.dealt(), None
                continue
            if answer.status_code != 200:
                self.record.error(f"POST {answer.status_code} {answer.text[:120]}")
                view, mine = self.dealt(), None
                continue
            with self.record.lock:
                self.record.moves += 1
            game = answer.json()["game"]
            phase, turn = game["view"]["phase"], game["view"]["turn"]
            if phase in IN_ROUND and self.seat_of[turn] is actor:
                view, mine = game, game  # the same seat goes on (draw, meld, discard)
                continue
            if phase in IN_ROUND:  # a new turn of another person: it is pushed
                nxt = self.seat_of[turn]
                self.record.turn(Turn(nxt, self.game_id, sent, t0))
                self.service.wait(nxt.path, sent, PUSH_WAIT_SECONDS)
                view, mine = game, None
                continue
            # The round is over: the worker deals the next one, whose first turn is pushed.
            view, mine = self.dealt(), None
            if view is not None:
                starter = self.seat_of[view["view"]["turn"]]
                self.record.turn(Turn(starter, self.game_id, sent, None))
                self.service.wait(starter.path, sent, PUSH_WAIT_SECONDS)


def run_table(table: Table, stop_at: float) -> None:
    try:
        table.play(stop_at)
    except Exception as exc:  # a benchmark reports, it does not die with one table
        table.record.error(f"table {table.game_id[:8]}: {type(exc).__name__}: {exc}")


# ---------------------------------------------------------------- matching pushes to turns


@dataclass
class Result:
    measured: list[float] = field(default_factory=list)  # ms, move's answer to push
    missing: int = 0
    late: int = 0  # missing, but it came after PUSH_WAIT_SECONDS
    duplicates: int = 0
    deals: int = 0
    deals_pushed: int = 0
    other: int = 0  # before a user's first turn: invitations, the match's first turn
    decrypted: int = 0
    wrong: list[str] = field(default_factory=list)


def match(turns: list[Turn], arrivals: list[Arrival]) -> Result:
    """Each push goes to its user's latest turn whose move was sent before it arrived."""
    result = Result()
    by_path: dict[str, list[Turn]] = {}
    for turn in sorted(turns, key=lambda t: t.sent):
        by_path.setdefault(turn.player.path, []).append(turn)
    sent = {path: [t.sent for t in mine] for path, mine in by_path.items()}
    got: dict[int, list[Arrival]] = {id(t): [] for t in turns}
    for arrival in arrivals:
        mine = by_path.get(arrival.path, [])
        index = bisect.bisect_right(sent.get(arrival.path, []), arrival.at) - 1
        if index < 0:
            result.other += 1
            continue
        turn = mine[index]
        got[id(turn)].append(arrival)
        try:
            payload = turn.player.subscription.read(arrival.body)
        except Exception as exc:
            result.wrong.append(f"undecryptable: {type(exc).__name__}")
            continue
        result.decrypted += 1
        if payload.get("kind") != "your_turn" or payload.get("game_id") != turn.game_id:
            result.wrong.append(f"{payload.get('kind')} of {payload.get('game_id')}")
    for turn in turns:
        pushes = got[id(turn)]
        result.duplicates += max(0, len(pushes) - 1)
        if turn.t0 is None:
            result.deals += 1
            result.deals_pushed += bool(pushes)
        elif pushes and pushes[0].at - turn.t0 <= PUSH_WAIT_SECONDS:
            result.measured.append(max(0.0, pushes[0].at - turn.t0) * 1000)
        else:
            result.missing += 1
            result.late += bool(pushes)
    return result


# ---------------------------------------------------------------- the stack


def start_stack(
    port: int, database_url: str, broker: str, cache_url: str, vapid: str
) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.pop("DJANGO_DEBUG", None)
    no_proxy = ",".join(filter(None, [env.get("NO_PROXY", ""), "127.0.0.1"]))
    env.update(
        DATABASE_URL=database_url,
        CELERY_BROKER_URL=broker,
        CACHE_URL=cache_url,
        PORT=str(port),
        TONGITS_VAR_DIR=str(ROOT / "var" / "bench-push"),
        LOG_LEVEL="WARNING",
        # Every request from this one address: counted by the throttles, never refused.
        TONGITS_THROTTLE_EXEMPT="127.0.0.1,::1",
        TONGITS_WEBPUSH_VAPID_PRIVATE_KEY=vapid,
        TONGITS_WEBPUSH_ENDPOINT_HOSTS="127.0.0.1",
        # The push service is local: never through a proxy the environment may name.
        NO_PROXY=no_proxy,
        no_proxy=no_proxy,
    )
    LOG.parent.mkdir(exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "ops.stack"],
        cwd=ROOT,
        env=env,
        stdout=LOG.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def wait_healthy(base: str, stack: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if stack.poll() is not None:
            raise SystemExit(f"the stack exited ({stack.returncode}); see {LOG}")
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise SystemExit(f"the stack's /healthz did not answer; see {LOG}")


def stop_stack(stack: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the runner, which stops its children in order (each in a group of its own)."""
    if stack.poll() is None:
        os.killpg(stack.pid, signal.SIGTERM)
    try:
        stack.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(stack.pid, signal.SIGKILL)
        stack.wait()


def flush_broker(broker: str) -> None:
    """Drop tasks a previous run left in the broker (they name deliveries of a dropped db)."""
    if broker.startswith(("redis://", "rediss://")):
        import redis

        redis.Redis.from_url(broker, socket_connect_timeout=3).flushdb()


def machine() -> str:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        commit, dirty = "?", ""
    cpu = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    changes = " (with uncommitted changes)" if dirty else ""
    return f"commit {commit}{changes}; {cpu}, {os.cpu_count()} cores"


# ---------------------------------------------------------------- main


def parse_think(text: str) -> tuple[float, float]:
    low, _, high = text.partition("-")
    return float(low), float(high or low)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=20, help="tables of three people")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long they play")
    parser.add_argument("--think", default="0.5-1.5", help="seconds before each command, a-b")
    parser.add_argument("--database-url", default=DATABASE)
    parser.add_argument("--broker", default=BROKER)
    parser.add_argument(
        "--cache-url", default="", help="the throttles' cache (default: none, as make run)"
    )
    args = parser.parse_args()
    think = parse_think(args.think)

    print(f"{machine()}", flush=True)
    reset_database(args.database_url)
    flush_broker(args.broker)
    service = PushService()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    stack = start_stack(port, args.database_url, args.broker, args.cache_url, vapid_private_key())
    record = Record()
    players: list[Player] = []
    try:
        wait_healthy(base, stack)
        started = time.monotonic()
        tag = f"{int(time.time()) % 100000}"
        names = [f"push{tag}t{t}s{s}" for t in range(args.tables) for s in range(3)]
        with ThreadPoolExecutor(6) as pool:  # password hashing: the web processes in parallel
            players = list(pool.map(lambda name: register(base, name, service.port), names))
            threes = [players[3 * t : 3 * t + 3] for t in range(args.tables)]
            games = list(pool.map(make_table, threes))
        tables = [
            Table(game, three, service, record, think, seed)
            for seed, (game, three) in enumerate(zip(games, threes, strict=True))
        ]
        print(
            f"{len(players)} users with a device, {len(tables)} tables made through the API in "
            f"{time.monotonic() - started:.0f} s; playing {args.seconds:.0f} s, "
            f"think {think[0]}-{think[1]} s",
            flush=True,
        )
        stop_at = time.monotonic() + args.seconds
        threads = [
            threading.Thread(target=run_table, args=(table, stop_at), daemon=True)
            for table in tables
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(args.seconds + 120)
        time.sleep(PUSH_WAIT_SECONDS)  # the last turns' pushes, and any late duplicate
        with service.changed:
            arrivals = list(service.arrivals)
    finally:
        stop_stack(stack)
        service.close()
        for player in players:
            player.http.close()

    result = match(record.turns, arrivals)
    measured = result.measured
    print(
        f"moves {record.moves} (409: {record.conflicts}); turns passed to another person "
        f"{len(measured) + result.missing}; pushes received {len(arrivals)}",
        flush=True,
    )
    print(
        f"pushes measured {len(measured)}; move to push ms p50 {pct(measured, 0.5):.1f} "
        f"p95 {pct(measured, 0.95):.1f} p99 {pct(measured, 0.99):.1f} "
        f"max {max(measured, default=float('nan')):.1f}",
        flush=True,
    )
    print(
        f"pushes missing {result.missing} (of which late, after {PUSH_WAIT_SECONDS:.0f} s: "
        f"{result.late}); duplicates {result.duplicates}; new rounds' first turns "
        f"{result.deals} (pushed {result.deals_pushed}); before the first turn "
        f"(invitations, the match's first turn) {result.other}",
        flush=True,
    )
    print(
        f"payloads decrypted {result.decrypted}, not this table's your_turn "
        f"{len(result.wrong)}{' ' + str(sorted(set(result.wrong))[:5]) if result.wrong else ''}"
        f"; errors {len(record.errors)}"
        f"{' ' + str(sorted(set(record.errors))[:5]) if record.errors else ''}",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
