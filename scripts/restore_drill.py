"""`make restore-drill`: a backup restored to a moment between two moves, and checked.

    .venv/bin/python scripts/restore_drill.py          (`make restore-drill`; about two minutes)

It starts `make cluster` (``python -m cluster``) in a temporary var dir on free ports, whose
primary archives its WAL with pgBackRest (cluster/backup.py), and:

1. people play over HAProxy, as `make chaos`'s journaled clients do (scripts/chaos.py): a table
   of three people and a table of one person against two bots, both for chips;
2. a full base backup of the primary (``python -m cluster backup``) while they play;
3. more play, and a match for chips that ends (its person resigns, the bots play it out):
   sealed and settled after the backup, so the restore has it from the WAL alone; then a
   target time, taken between two moves: every command answered 200 before it was committed
   before it, every command first sent after it is committed after it;
4. more play, then no new move, and every commit archived (``pgbackrest check``); the journal
   against the cluster's log: no acknowledged move lost or doubled;
5. the backup and the archive restored into a fresh data directory, replayed up to the target
   time and promoted (``python -m cluster restore``), on a port of its own;
6. on the restored copy: ``verify_events`` (every game's chain, legality and seal),
   ``verify_ledger`` (the chips ledger and each table's chips against its events), every move
   answered before the target there at the seq and with the hash its player was told, no move
   sent after it there; the last move before the target and the first after it named.

It prints the backup's size and time, the restore's time, the target time and what the restored
copy holds. Exit status 0 only when every check passed. tests/test_cluster.py runs the same
drill (``drill()``) on its module's cluster, in `make test`.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
_spec = importlib.util.spec_from_file_location("chaos", ROOT / "scripts" / "chaos.py")
chaos = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
sys.modules.setdefault("chaos", chaos)
_spec.loader.exec_module(chaos)  # type: ignore[union-attr]

from cluster import backup, harness, postgres  # noqa: E402

BUY_IN = 50
# Moves (commands answered 200) before the backup, between it and the target, and after it.
MOVES = (10, 10, 6)
# The match that ends between the backup and the target: one round.
ENDED_RULES = {"preset": "standard", "turn_seconds": 0, "wins_to_match": 1}
PLAY_LIMIT_SECONDS = 120.0
# What runs on the restored copy.
CHECKS = ("verify_events", "verify_ledger")
# The gap left around the target time: no commit of the drill's clients falls in it.
QUIET_SECONDS = 0.05


def log(message: str) -> None:
    print(f"restore-drill: {message}", flush=True)


@dataclass
class Drill:
    """What a drill found."""

    target: str = ""
    backup: backup.Backup | None = None
    backup_seconds: float = 0.0
    restore_seconds: float = 0.0
    restored: dict[str, Any] = field(default_factory=dict)
    before: int = 0  # commands answered before the target: each must be in the copy
    after: int = 0  # commands first sent after it: none may be
    last_before: dict[str, Any] | None = None
    first_after: dict[str, Any] | None = None
    commands: int = 0
    errors: dict[str, int] = field(default_factory=dict)  # retried client-side errors by kind
    between: Any = None  # what the ``between`` step returned
    ended: str = ""  # the match that ended, sealed and settled, between backup and target
    failures: list[str] = field(default_factory=list)


def answered(run: Any) -> list[dict[str, Any]]:
    with run.journal.lock:
        return [e for e in run.journal.commands if e.get("status") == 200]


def wait_moves(run: Any, count: int, after: float, what: str) -> None:
    """Until ``count`` commands first sent after ``after`` (wall clock) were answered 200."""
    deadline = time.monotonic() + PLAY_LIMIT_SECONDS
    while sum(1 for e in answered(run) if e["sent_at"] > after) < count:
        if run.failures:
            raise RuntimeError(f"a table failed: {run.failures[:3]}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: fewer than {count} moves in {PLAY_LIMIT_SECONDS:.0f} s")
        time.sleep(0.1)


def start_ended_match(run: Any, token: str) -> str:
    """A table for chips of one person and two bots whose person resigns at once: the bots
    play it out (the resigned seat by the time-out rule), then it is sealed and settled."""
    owner = chaos.Http(run.url, token)
    seats = [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}]
    payload = {"rules": ENDED_RULES, "seats": seats, "buy_in": BUY_IN}
    # Not one of the journal's games: its person's moves are the time-out rule's, unanswered.
    game_id = chaos.new_table(run, owner, payload, set())
    status, body = run.call(owner, "POST", f"/api/v1/games/{game_id}/resign")
    if status != 200:
        raise RuntimeError(f"resign: {status} {body}")
    return game_id


def wait_settled(db: Any, game_id: str) -> None:
    deadline = time.monotonic() + PLAY_LIMIT_SECONDS
    while not db.query(
        "SELECT 1 FROM games_game WHERE id = %s AND status = 'finished' AND settled_at IS NOT NULL",
        [game_id],
    ):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the resigned match {game_id} was not settled in time")
        time.sleep(0.2)


def manage(url: str, layout: Any, *args: str) -> subprocess.Popen[str]:
    """manage.py on the restored copy (the cluster's settings, its database URL), started."""
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "DATABASE_PREPARED_STATEMENTS": "1",
        "TONGITS_VAR_DIR": str(layout.app_var),
        "LOG_LEVEL": "WARNING",
    }
    for key in ("DATABASE_REPLICA_URL", "DATABASE_LISTEN_URL", "CELERY_BROKER_URL"):
        env.pop(key, None)
    return subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def pg_time(at: float) -> str:
    """A wall-clock time as recovery_target_time reads it (UTC, microseconds)."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S.%f+00")


def drill(
    cluster: harness.RunningCluster,
    workdir: Path,
    between: Any = None,
    moves: tuple[int, int, int] = MOVES,
) -> Drill:
    """The drill on a running cluster (its restored copy in ``workdir``); ``between`` (a
    callable), if given, runs while the tables play between the backup and the target;
    ``moves``: how many commands are answered before the backup, between it and the target,
    and after the target."""
    found = Drill()
    layout = cluster.layout
    user = postgres.server_user()
    run = chaos.Run(cluster)
    tag = uuid.uuid4().hex[:6]
    names = [f"d{tag}s{k}" for k in range(3)]
    tokens = [chaos.register(run, n) for n in names]
    solo = chaos.register(run, f"d{tag}b")
    resigner = chaos.register(run, f"d{tag}r")
    live = chaos.Database(layout)
    tables = [
        threading.Thread(
            target=chaos.guarded,
            args=(run, chaos.people_tables, 0, tokens, names, BUY_IN),
            daemon=True,
        ),
        threading.Thread(
            target=chaos.guarded, args=(run, chaos.bot_tables, 0, solo, BUY_IN), daemon=True
        ),
    ]
    began = time.time()
    for thread in tables:
        thread.start()
    try:
        wait_moves(run, moves[0], began, "before the backup")
        started = time.monotonic()
        found.backup = backup.backup(layout, user, "full")
        found.backup_seconds = time.monotonic() - started
        log(f"backup {found.backup.label} in {found.backup_seconds:.1f} s while tables played")
        backed_up = time.time()
        found.ended = start_ended_match(run, resigner)
        if between is not None:
            found.between = between()
        wait_moves(run, moves[1], backed_up, "between the backup and the target")
        wait_settled(live, found.ended)
        time.sleep(QUIET_SECONDS)
        target_at = time.time()
        found.target = pg_time(target_at)
        time.sleep(QUIET_SECONDS)
        log(f"target time {found.target}")
        wait_moves(run, moves[2], target_at, "after the target")
    finally:
        run.stop_new.set()
        run.stop_all.set()
        for thread in tables:
            thread.join(60)
    found.failures += run.failures
    found.commands = len(run.journal.commands)
    found.errors = dict(run.journal.errors)
    lost, duplicated, problems = chaos.check_journal(run, live)
    if lost or duplicated:
        found.failures.append(f"journal against the cluster's log: {problems[:5]}")
    # Every commit so far in the archive: the WAL past the target is there to stop at.
    backup.check(layout, user)

    moves = answered(run)
    before = [e for e in moves if e["answered_at"] < target_at]
    after = [e for e in moves if e["sent_at"] > target_at]
    found.before, found.after = len(before), len(after)
    found.last_before = max(before, key=lambda e: e["answered_at"])
    found.first_after = min(after, key=lambda e: e["sent_at"])

    restored = backup.restore(
        layout, user, found.target, workdir / "restored", harness.free_ports()[0]
    )
    found.restore_seconds = restored.seconds
    log(f"restored into {restored.data} and promoted in {restored.seconds:.1f} s")
    try:
        found.restored = backup.counts(restored.url)
        copy = chaos.Database(layout, restored.url)
        if not copy.query(
            "SELECT 1 FROM games_gameseal s JOIN games_game g ON g.id = s.game_id "
            "WHERE g.id = %s AND g.status = 'finished' AND g.settled_at IS NOT NULL",
            [found.ended],
        ):
            found.failures.append(
                f"the match that ended before the target, {found.ended}, "
                "is not restored finished, sealed and settled"
            )
        logged = {
            (g, seq): digest for g, seq, digest, _a, _t in chaos.logged_events(copy, run.games)
        }
        for entry in before:
            missing = [s for s, h, _a, _t in entry["events"] if logged.get((entry["game"], s)) != h]
            if missing:
                found.failures.append(f"answered before the target, not restored: {entry}")
        for entry in after:
            if any((entry["game"], s) in logged for s, _h, _a, _t in entry["events"]):
                found.failures.append(f"sent after the target, restored anyway: {entry}")
        # Side by side: each is a process of its own, reading only.
        checks = {name: manage(restored.url, layout, name) for name in CHECKS}
        for name, proc in checks.items():
            out, err = proc.communicate(timeout=600)
            if proc.returncode != 0:
                found.failures.append(f"{name}: {out[-1500:]}{err[-1500:]}")
            else:
                log(f"{name} on the restored copy: {out.strip().splitlines()[-1]}")
    finally:
        restored.stop()
    return found


def report(found: Drill) -> None:
    made = found.backup
    if made is not None:
        log(f"backup: {backup.describe(made)} (the command took {found.backup_seconds:.1f} s)")
    log(
        f"restore to {found.target}: {found.restore_seconds:.1f} s, from the restore's start to "
        "the copy promoted"
    )
    log("restored: " + ", ".join(f"{k} {v}" for k, v in found.restored.items()))
    for name, entry in (
        ("last move before", found.last_before),
        ("first after", found.first_after),
    ):
        if entry:
            seqs = [s for s, *_ in entry["events"]]
            log(
                f"{name} the target: game {entry['game']} seqs {seqs} ({entry['type']}), sent "
                f"{pg_time(entry['sent_at'])}, answered {pg_time(entry['answered_at'])}: "
                f"{'restored' if name.startswith('last') else 'not restored'}"
            )
    log(f"ended, sealed and settled between the backup and the target: game {found.ended}")
    log(
        f"{found.commands} commands; {found.before} answered before the target, all restored; "
        f"{found.after} sent after it, none restored; client-side errors retried {found.errors}"
    )


def main() -> int:
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tongits-drill-") as tmp:
        log("starting a cluster of its own (python -m cluster)")
        cluster = harness.start(Path(tmp) / "var", env=chaos.CLUSTER_ENV)
        log(f"cluster up at {cluster.url} in {time.monotonic() - began:.1f} s")
        found = Drill()
        try:
            found = drill(cluster, Path(tmp))
        except Exception as exc:
            found.failures.append(f"{type(exc).__name__}: {exc}")
        finally:
            try:
                log(f"cluster stopped in {harness.stop(cluster):.1f} s (Ctrl-C); nothing left")
            except harness.HarnessError as exc:
                found.failures.append(str(exc))
        report(found)
        for failure in found.failures[:20]:
            log(f"FAILED: {failure}")
        ok = not found.failures
        log(f"{'passed' if ok else 'FAILED'} in {time.monotonic() - began:.0f} s")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
