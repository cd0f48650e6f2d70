"""Backups that restore: pgBackRest (Debian's ``pgbackrest``) archives the primary's WAL as it
is written and takes base backups of it; a restore rebuilds a data directory of its own at any
moment the archive covers (docs/operations.md, "Backups and restores").

    python -m cluster backup [--type full|diff|incr]   a base backup of the running primary
    python -m cluster restore --target latest|<time> [--into DIR] [--port N]
    python -m cluster backups                          what the repository holds

The repository is ``TONGITS_BACKUP_REPO``: a directory (default ``var/cluster/backup``) or
``s3://bucket/path`` (with ``TONGITS_BACKUP_S3_ENDPOINT`` and ``TONGITS_BACKUP_S3_REGION``; the
keys in pgBackRest's own ``PGBACKREST_REPO1_S3_KEY`` and ``PGBACKREST_REPO1_S3_KEY_SECRET``,
never in a file). Both servers are the stanza's (``pg1``, ``pg2``): pgBackRest finds whichever
is the primary, before and after a failover. Each server archives through ``archive_command``
while it is the primary (``archive_mode = on``); ``archive_timeout`` bounds how long a quiet
primary's last commits wait before their WAL segment is archived.

A restore runs with archiving off: the copy never writes into the repository it came from
(a copy promoted beside the cluster would otherwise add a timeline there that later restores
would follow).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg

from cluster import postgres, topology
from cluster.postgres import ClusterError
from cluster.topology import Layout

STANZA = topology.STANZA
#: Full backups kept by default (with the WAL that every one of them needs).
RETENTION_FULL = 2
RESTORE_WAIT_SECONDS = 300.0


def work_dir(layout: Layout) -> Path:
    """pgBackRest's locks, spool and logs."""
    return layout.root / "pgbackrest"


def repository(layout: Layout) -> str:
    return os.environ.get("TONGITS_BACKUP_REPO") or str(layout.root / "backup")


def config(layout: Layout) -> str:
    """pgbackrest.conf: the repository, retention, and both servers as the stanza's."""
    repo = repository(layout)
    work = work_dir(layout)
    retention = int(os.environ.get("TONGITS_BACKUP_RETENTION_FULL") or RETENTION_FULL)
    lines = ["# Written by `make cluster` (cluster/backup.py); edits are overwritten.", "[global]"]
    if repo.startswith("s3://"):
        bucket, _, path = repo[len("s3://") :].partition("/")
        endpoint = os.environ.get("TONGITS_BACKUP_S3_ENDPOINT") or "s3.amazonaws.com"
        region = os.environ.get("TONGITS_BACKUP_S3_REGION") or "us-east-1"
        lines += [
            "repo1-type=s3",
            f"repo1-s3-bucket={bucket}",
            f"repo1-path=/{path.strip('/')}",
            f"repo1-s3-endpoint={endpoint}",
            f"repo1-s3-region={region}",
        ]
    else:
        lines.append(f"repo1-path={repo}")
    lines += [
        f"repo1-retention-full={retention}",
        # lz4: the cheapest of pgBackRest's compressions in CPU, on a machine that also plays.
        "compress-type=lz4",
        "start-fast=y",
        "process-max=1",
        f"lock-path={work / 'lock'}",
        f"spool-path={work / 'spool'}",
        f"log-path={work / 'log'}",
        "log-level-console=warn",
        "log-level-file=info",
        "",
        f"[{STANZA}]",
    ]
    for i, node in enumerate(topology.PG_NODES, start=1):
        lines += [
            f"pg{i}-path={layout.data_dir(node)}",
            f"pg{i}-port={layout.port_of(node)}",
            f"pg{i}-socket-path={layout.sockets}",
            f"pg{i}-user=postgres",
        ]
    return "\n".join(lines) + "\n"


def prepare(layout: Layout, user: str | None) -> None:
    """The configuration file and pgBackRest's directories (the repository when local), the
    server user's."""
    repo = repository(layout)
    paths = [layout.sockets, work_dir(layout)]
    if not repo.startswith("s3://"):
        paths.append(Path(repo))
    for path in paths:
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(0o700)
        postgres.give(path, user)
    layout.pgbackrest_conf.write_text(config(layout))
    postgres.give(layout.pgbackrest_conf, user)


def pgbackrest(layout: Layout, user: str | None, *args: str, timeout: float = 1800) -> str:
    """One pgBackRest command on the cluster's stanza (as the server user); its output."""
    argv = ["pgbackrest", f"--config={layout.pgbackrest_conf}", f"--stanza={STANZA}", *args]
    return postgres.run(argv, user, f"pgbackrest {args[-1]}", timeout=timeout)


def create_stanza(layout: Layout, user: str | None) -> None:
    """The stanza in the repository (once; again it only checks that it matches)."""
    pgbackrest(layout, user, "stanza-create", timeout=120)


# ---------------------------------------------------------------- backups


@dataclass(frozen=True)
class Backup:
    label: str
    kind: str
    started: float
    stopped: float
    size: int  # bytes of the database it copied
    repo_size: int  # bytes it takes in the repository (compressed, deltas only)
    wal_start: str
    wal_stop: str


def backups(layout: Layout, user: str | None) -> list[Backup]:
    """The repository's backups, oldest first (``pgbackrest info``)."""
    found = json.loads(pgbackrest(layout, user, "--output=json", "info", timeout=120))
    out = []
    for stanza in found:
        for item in stanza.get("backup", []):
            out.append(
                Backup(
                    label=item["label"],
                    kind=item["type"],
                    started=float(item["timestamp"]["start"]),
                    stopped=float(item["timestamp"]["stop"]),
                    size=int(item["info"]["size"]),
                    repo_size=int(item["info"]["repository"]["delta"]),
                    wal_start=item["archive"]["start"],
                    wal_stop=item["archive"]["stop"],
                )
            )
    return out


def backup(layout: Layout, user: str | None, kind: str = "full") -> Backup:
    """A base backup of the running primary (``full``, ``diff`` or ``incr``); it ends once the
    WAL it needs is in the archive, so it restores on its own."""
    pgbackrest(layout, user, f"--type={kind}", "backup")
    return backups(layout, user)[-1]


def check(layout: Layout, user: str | None) -> None:
    """Switch the primary to a new WAL segment and wait until the last one is archived: every
    commit made before the call can be restored."""
    pgbackrest(layout, user, "check", timeout=300)


# ---------------------------------------------------------------- restores


@dataclass
class Restored:
    """A restored copy, running on its own port until ``stop``."""

    data: Path
    port: int
    user: str | None
    target: str
    seconds: float  # from the restore's start until the copy took writes

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{topology.DATABASE}"

    def stop(self) -> None:
        pg_ctl(self.data, self.user, "stop", "-m", "fast")


def pg_ctl(data: Path, user: str | None, *args: str) -> str:
    argv = [str(postgres.bin_dir() / "pg_ctl"), "-D", str(data), *args]
    return postgres.run(argv, user, f"pg_ctl {args[0]} ({data})", timeout=RESTORE_WAIT_SECONDS)


def restore(layout: Layout, user: str | None, target: str, into: Path, port: int) -> Restored:
    """The repository's newest backup restored into the fresh directory ``into`` and its WAL
    replayed up to ``target`` (``latest``: all of it; else a time PostgreSQL reads, such as
    ``2026-12-06 15:04:05.123456+00``: every transaction committed up to it, none after), then
    started on ``port`` with archiving off and promoted: it runs until ``stop``."""
    if into.exists() and any(into.iterdir()):
        raise ClusterError(f"{into} is not empty: a restore goes into a fresh directory")
    started = time.monotonic()
    into.mkdir(parents=True, exist_ok=True)
    into.chmod(0o700)
    postgres.give(into, user)
    fetch = (
        f"pgbackrest --config={layout.pgbackrest_conf} --stanza={STANZA} --pg1-path={into} "
        'archive-get %f "%p"'
    )
    args = [
        f"--pg1-path={into}",
        "--archive-mode=off",
        f"--recovery-option=restore_command={fetch}",
    ]
    if target != "latest":
        args += ["--type=time", f"--target={target}", "--target-action=promote"]
    pgbackrest(layout, user, *args, "restore")
    # The copy's own settings in place of the cluster's (the primary's port, its standby, its
    # archiving): a server of its own that waits for no standby and archives nothing.
    replaced = {
        "listen_addresses",
        "port",
        "unix_socket_directories",
        "synchronous_standby_names",
        "primary_conninfo",
        "archive_mode",
        "archive_command",
        "archive_timeout",
    }
    copied = (into / postgres.CONF_NAME).read_text().splitlines()
    kept = [line for line in copied if line.split("=", 1)[0].strip() not in replaced]
    conf = "\n".join(
        [
            *kept,
            "# A restored copy (cluster/backup.py): its own port, no standby, no archiving.",
            "listen_addresses = '127.0.0.1'",
            f"port = {port}",
            "unix_socket_directories = ''",
            "synchronous_standby_names = ''",
            "archive_mode = off",
            "",
        ]
    )
    postgres._write(into / postgres.CONF_NAME, conf, user)
    log = into.parent / f"{into.name}.log"
    log.touch()
    postgres.give(log, user)
    pg_ctl(into, user, "start", "-w", "-t", str(int(RESTORE_WAIT_SECONDS)), "-l", str(log))
    restored = Restored(into, port, user, target, 0.0)
    deadline = time.monotonic() + RESTORE_WAIT_SECONDS
    while True:
        try:
            with psycopg.connect(
                host="127.0.0.1", port=port, user="postgres", dbname="postgres", autocommit=True
            ) as conn:
                if not conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
                    break
        except psycopg.Error:
            pass
        if time.monotonic() > deadline:
            restored.stop()
            raise ClusterError(f"the restored copy did not finish its recovery: see {log}")
        time.sleep(0.1)
    restored.seconds = time.monotonic() - started
    return restored


def describe(made: Backup) -> str:
    return (
        f"{made.kind}, {made.size / 1e6:.1f} MB of database in "
        f"{made.repo_size / 1e6:.1f} MB of repository, {made.stopped - made.started:.0f} s, "
        f"WAL {made.wal_start} to {made.wal_stop}"
    )


def counts(url: str) -> dict[str, object]:
    """What a copy holds: games, events, finished matches, seals, chips ledger entries, and
    its newest event's time."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM games_game), (SELECT count(*) FROM games_event), "
            "(SELECT count(*) FROM games_game WHERE status = 'finished'), "
            "(SELECT count(*) FROM games_gameseal), (SELECT count(*) FROM chips_entry), "
            "(SELECT max(recorded_at) FROM games_event)"
        ).fetchone()
    keys = ("games", "events", "finished", "seals", "ledger_entries", "newest_event")
    return dict(zip(keys, row, strict=True))


def restore_command(layout: Layout, target: str, into: Path | None, port: int) -> int:
    """``python -m cluster restore``: restore, recover, print what the copy holds, stop it;
    the directory is left ready to start (docs/operations.md says how to serve from it)."""
    user = postgres.server_user()
    digits = "".join(c for c in target if c.isdigit())[:14] or "latest"
    into = into or layout.var_dir / "restore" / digits
    port = port or layout.base_port + 20
    restored = restore(layout, user, target, into.resolve(), port)
    try:
        found = counts(restored.url)
    finally:
        restored.stop()
    print(
        f"cluster: restored to {target} into {restored.data} in {restored.seconds:.1f} s: "
        + ", ".join(f"{k} {v}" for k, v in found.items())
    )
    print(
        f"cluster: it is stopped; pg_ctl -D {restored.data} start (as {user or 'you'}) serves it "
        f"on port {port}, or docs/operations.md's steps make it the cluster's primary"
    )
    return 0
