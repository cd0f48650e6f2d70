"""The cluster's two PostgreSQL servers: made (initdb, pg_basebackup), configured, watched,
promoted and rewound. Debian's binaries (``postgresql-15``, or ``PG_BINDIR``); PostgreSQL
refuses to run as root, so when the runner is root the servers, their data and these tools run
as the ``postgres`` user the Debian package creates.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import psycopg

from cluster import topology
from cluster.topology import Layout

CONF_NAME = "cluster.conf"
INCLUDE_LINE = f"include_if_exists = '{CONF_NAME}'\n"


class ClusterError(RuntimeError):
    """Something the cluster cannot do, said in words an operator can act on."""


def bin_dir() -> Path:
    """PostgreSQL's programs: ``PG_BINDIR``, else the newest ``/usr/lib/postgresql/*/bin``."""
    configured = os.environ.get("PG_BINDIR")
    if configured:
        return Path(configured)
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/postgres"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if not found:
        raise ClusterError(
            "no PostgreSQL server found in /usr/lib/postgresql: apt-get install -y postgresql-15 "
            "(or set PG_BINDIR)"
        )
    return found[-1].parent


def server_user() -> str | None:
    """The user the servers run as: ``postgres`` when we are root (PostgreSQL will not run as
    root), else None (ourselves)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise ClusterError("run as root, but no `postgres` user to run PostgreSQL as") from None
    return "postgres"


def give(path: Path, user: str | None) -> None:
    """Make ``path`` (and what is under it) ``user``'s, and every directory above it
    traversable, so a server running as that user reaches it."""
    if user is None:
        return
    entry = pwd.getpwnam(user)
    for parent in path.resolve().parents:
        mode = parent.stat().st_mode
        if not mode & stat.S_IXOTH:
            parent.chmod(mode | stat.S_IXOTH)
    for root, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            os.chown(os.path.join(root, name), entry.pw_uid, entry.pw_gid, follow_symlinks=False)
    os.chown(path, entry.pw_uid, entry.pw_gid)


def run(argv: list[str], user: str | None, what: str, timeout: float = 300) -> str:
    """Run a PostgreSQL tool (as ``user``); its output, or ClusterError with it."""
    # As that user with its own group and no other (root's group would make the group bits,
    # not the others', decide what it may enter).
    group = pwd.getpwnam(user).pw_gid if user else None
    done = subprocess.run(
        argv,
        user=user,
        group=group,
        extra_groups=[] if user else None,
        cwd="/",
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PGCONNECT_TIMEOUT": "5"},
    )
    if done.returncode != 0:
        raise ClusterError(f"{what} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return done.stdout


# ---------------------------------------------------------------- making and configuring


def initialised(layout: Layout, node: str) -> bool:
    return (layout.data_dir(node) / "PG_VERSION").exists()


def initdb(layout: Layout, node: str, user: str | None) -> None:
    data = layout.data_dir(node)
    data.mkdir(parents=True, exist_ok=True)
    data.chmod(0o700)
    give(data, user)
    run(
        [
            str(bin_dir() / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-instructions",
        ],
        user,
        f"initdb of {node}",
    )


def configure(
    layout: Layout,
    node: str,
    user: str | None,
    *,
    primary: str,
    sync_standby: str | None = None,
    standby: bool | None = False,
) -> None:
    """Write ``node``'s settings: its port, who it streams from (``primary``), the standby
    a primary's commits wait for (``sync_standby``), and ``standby.signal`` when it follows
    (None: left as it is, for a standby about to be promoted, whose promotion removes it).
    A running server takes them on ``reload``."""
    data = layout.data_dir(node)
    conf = topology.postgres_conf(layout, node, sync_standby=sync_standby)
    if node != primary:
        conninfo = topology.primary_conninfo(layout, primary, node)
        conf += f"primary_conninfo = '{conninfo}'\n"
    _write(data / CONF_NAME, conf, user)
    _write(data / "pg_hba.conf", topology.pg_hba(), user)
    main = data / "postgresql.conf"
    text = main.read_text()
    if INCLUDE_LINE not in text:
        _write(main, text + "\n" + INCLUDE_LINE, user)
    signal_file = data / "standby.signal"
    if standby and not signal_file.exists():
        _write(signal_file, "", user)
    elif standby is False and signal_file.exists():
        signal_file.unlink()


def _write(path: Path, text: str, user: str | None) -> None:
    path.write_text(text)
    path.chmod(0o600)
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(path, entry.pw_uid, entry.pw_gid)


def clone(layout: Layout, primary: str, standby: str, user: str | None) -> None:
    """A new standby: a base backup of the running primary (its WAL streamed alongside)."""
    data = layout.data_dir(standby)
    if data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True)
    data.chmod(0o700)
    give(data, user)
    run(
        [
            str(bin_dir() / "pg_basebackup"),
            "-h",
            "127.0.0.1",
            "-p",
            str(layout.port_of(primary)),
            "-U",
            "postgres",
            "-D",
            str(data),
            "-X",
            "stream",
            "-c",
            "fast",
        ],
        user,
        f"pg_basebackup of {primary} into {standby}",
    )
    configure(layout, standby, user, primary=primary, standby=True)


def rewind(layout: Layout, old: str, primary: str, user: str | None) -> bool:
    """Turn a stopped old primary into a copy of the new primary's history (pg_rewind: only the
    blocks that differ since the timelines split); False if that cannot be done."""
    source = f"host=127.0.0.1 port={layout.port_of(primary)} user=postgres dbname=postgres"
    # A promoted server's control file names its new timeline only after a checkpoint; before
    # it, pg_rewind sees one timeline on both sides and rewinds nothing.
    with connect(layout, primary) as conn:
        conn.execute("CHECKPOINT")
    try:
        run(
            [
                str(bin_dir() / "pg_rewind"),
                f"--target-pgdata={layout.data_dir(old)}",
                f"--source-server={source}",
            ],
            user,
            f"pg_rewind of {old}",
        )
    except ClusterError as exc:
        print(f"cluster: {exc}", flush=True)
        return False
    return True


# ---------------------------------------------------------------- asking a running server


def connect(layout: Layout, node: str, timeout: float = 2.0) -> psycopg.Connection:
    return psycopg.connect(
        host="127.0.0.1",
        port=layout.port_of(node),
        user="postgres",
        dbname="postgres",
        connect_timeout=max(1, int(timeout)),
        autocommit=True,
    )


def in_recovery(layout: Layout, node: str) -> bool | None:
    """True for a standby, False for a server that takes writes, None when it does not answer."""
    try:
        with connect(layout, node) as conn:
            return bool(conn.execute("SELECT pg_is_in_recovery()").fetchone()[0])
    except psycopg.Error:
        return None


def wait_ready(
    layout: Layout, node: str, timeout: float = 60.0, running: Callable[[], bool] | None = None
) -> None:
    """Until ``node`` answers. ``running``: whether its server process still runs; a server that
    exited (a port taken, a bad setting) fails at once, with the end of its log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if in_recovery(layout, node) is not None:
            return
        if running is not None and not running() and in_recovery(layout, node) is None:
            raise ClusterError(f"PostgreSQL {node} exited while starting: {log_tail(layout, node)}")
        time.sleep(0.1)
    raise ClusterError(
        f"PostgreSQL {node} did not answer within {timeout:.0f} s: {log_tail(layout, node)}"
    )


def log_tail(layout: Layout, node: str, lines: int = 8) -> str:
    """The last lines of a server's log (supervisord's file of its output)."""
    try:
        text = (layout.logs / f"{node}.log").read_text(errors="replace")
    except OSError:
        return "(no log)"
    return " | ".join(text.strip().splitlines()[-lines:]) or "(empty log)"


def reload(layout: Layout, node: str) -> None:
    with connect(layout, node) as conn:
        conn.execute("SELECT pg_reload_conf()")


def wait_synchronous(layout: Layout, primary: str, standby: str, timeout: float = 60.0) -> None:
    """Until ``standby`` streams from ``primary`` as its synchronous standby, has replayed
    everything the primary had written when asked, and still streams half a second later on
    the same connection (a standby whose WAL diverged connects, then drops, again and again)."""
    deadline = time.monotonic() + timeout
    target = None
    seen: tuple | None = None
    row = None
    while time.monotonic() < deadline:
        try:
            with connect(layout, primary) as conn:
                if target is None:
                    target = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
                row = conn.execute(
                    "SELECT pid, state, sync_state, replay_lsn >= %s::pg_lsn "
                    "FROM pg_stat_replication WHERE application_name = %s",
                    [target, standby],
                ).fetchone()
        except psycopg.Error:
            row = None
        if row is not None and row[1:] == ("streaming", "sync", True):
            if seen is not None and seen[0] == row[0] and time.monotonic() - seen[1] >= 0.5:
                return
            if seen is None or seen[0] != row[0]:
                seen = (row[0], time.monotonic())
        else:
            seen = None
        time.sleep(0.1)
    raise ClusterError(f"{standby} is not {primary}'s synchronous standby ({row})")


def promote(layout: Layout, node: str, timeout: int = 60) -> None:
    """End recovery on ``node``: from now on it takes writes, on a new timeline."""
    with connect(layout, node) as conn:
        done = conn.execute("SELECT pg_promote(true, %s)", [timeout]).fetchone()[0]
    if not done:
        raise ClusterError(f"{node} was not promoted within {timeout} s")


def ensure_database(layout: Layout, node: str) -> None:
    with connect(layout, node) as conn:
        found = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [topology.DATABASE]
        ).fetchone()
        if not found:
            conn.execute(f'CREATE DATABASE "{topology.DATABASE}"')
