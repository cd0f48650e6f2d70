"""Start the cluster in order, keep it described in ``var/cluster.json``, stop it on Ctrl-C.

Order: supervisord; the primary (made with initdb on first use), the database, the backup
repository's stanza (pgBackRest: the primary archives its WAL there), the standby
(a base backup of the primary on first use, or the fenced old primary rewound into one) and,
once it streams, the primary's commits made to wait for it; migrations; Redis and pgbouncer;
the application (workers, schedulers, notifier, beat, web nodes), each web node until its
/healthz answers; HAProxy last. supervisord restarts any application process that exits (even
``kill -9``); the runner, like make run's, restarts the workers and beat when /healthz says the
sweeper is late. Ctrl-C or SIGTERM: supervisord stops everything, HAProxy and the web nodes
first, the databases last, and exits; the runner checks that no process it started is left.

Nothing outlives its parent (docs/operations.md, "When a parent dies"): supervisord gets SIGTERM
when the runner dies, each program its stop signal when supervisord dies (``setpriv``), the web
nodes' workers stop when their arbiter dies and Celery's pool children with their main process.
Once supervisord has exited, the runner waits for whatever still carries the cluster's var
directory and kills what does not end (logging each).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

from cluster import backup, postgres, topology
from cluster.postgres import ClusterError
from cluster.state import State, locked, processes, rpc
from cluster.topology import Layout
from ops import orphans

START_TIMEOUT_SECONDS = 180.0
STOP_TIMEOUT_SECONDS = 60.0
# A standby started again gets this long to catch up and stream before it is copied anew.
CATCH_UP_SECONDS = 30.0
# After restarting the workers and beat for a late sweeper, judge again after this long.
HEAL_GRACE_SECONDS = 30.0
APPLICATION = (
    *topology.WORKER_NODES,
    *topology.SCHEDULERS,
    "notifier",
    "beat",
)
# After supervisord has exited: how long what is left of the cluster gets to end on its own.
LEFTOVER_SECONDS = 30.0


def log(message: str) -> None:
    print(f"cluster: {message}", flush=True)


def check_tools() -> None:
    """The engines the cluster runs, from Debian's packages (`.ci/run` installs them)."""
    tools = ("pgbouncer", "haproxy", "redis-server", "setpriv", "pgbackrest")
    missing = [tool for tool in tools if not shutil.which(tool)]
    if missing:
        raise ClusterError(
            f"not installed: {', '.join(missing)} "
            "(apt-get install -y pgbouncer haproxy redis-server postgresql-15 util-linux "
            "pgbackrest)"
        )
    postgres.bin_dir()


def wait_port(port: int, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise ClusterError(f"{what} did not listen on {port} within {timeout:.0f} s")


def healthy(url: str, timeout: float = 3.0) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=timeout) as answer:
            return answer.status == 200
    except (OSError, ValueError):
        return False


def wait_healthy(url: str, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if healthy(url):
            return
        time.sleep(0.2)
    raise ClusterError(f"{what} ({url}/healthz) was not healthy within {timeout:.0f} s")


# ---------------------------------------------------------------- configuration files


def write_files(layout: Layout, state: State, user: str | None) -> None:
    """Every engine's configuration from the layout and the current roles."""
    for path in (layout.etc, layout.run, layout.logs, layout.app_var, layout.root / "redis"):
        path.mkdir(parents=True, exist_ok=True)
    (layout.etc / "pgbouncer.ini").write_text(topology.pgbouncer_ini(layout, state.primary))
    (layout.etc / "userlist.txt").write_text('"postgres" ""\n')
    (layout.etc / "haproxy.cfg").write_text(topology.haproxy_cfg(layout))
    (layout.etc / "503.http").write_text(topology.haproxy_503())
    (layout.etc / "redis.conf").write_text(topology.redis_conf(layout))
    progs = topology.programs(layout, postgres.bin_dir(), user, state.primary)
    (layout.etc / "supervisord.conf").write_text(topology.supervisord_conf(layout, progs))
    backup.prepare(layout, user)
    if user is not None:  # pgbouncer runs as that user too: it reads its files
        postgres.give(layout.etc, user)


def repoint_pgbouncer(layout: Layout, primary: str) -> None:
    """pgbouncer to the new primary: its file rewritten, then SIGHUP (a reload: clients keep
    their connections to it; its connections to the old server are dropped)."""
    path = layout.etc / "pgbouncer.ini"
    path.write_text(topology.pgbouncer_ini(layout, primary))
    rpc(layout).supervisor.signalProcess("pgbouncer", "HUP")


# ---------------------------------------------------------------- PostgreSQL's roles


def start_program(layout: Layout, name: str) -> None:
    server = rpc(layout).supervisor
    info = server.getProcessInfo(name)
    if info["statename"] not in ("RUNNING", "STARTING"):
        server.startProcess(name, True)


def bring_up_databases(layout: Layout, user: str | None) -> State:
    """The primary, then its synchronous standby (made, or rejoined, when needed)."""
    with locked(layout):
        state = State.load(layout)
        primary = state.primary
        if not postgres.initialised(layout, primary):
            log(f"postgres  initdb {primary}")
            postgres.initdb(layout, primary, user)
        postgres.configure(layout, primary, user, primary=primary)
        start_program(layout, primary)
        postgres.wait_ready(layout, primary, running=lambda: _running(layout, primary))
        if postgres.in_recovery(layout, primary):
            raise ClusterError(f"{primary} is recorded as the primary but runs as a standby")
        postgres.ensure_database(layout, primary)
        backup.create_stanza(layout, user)
        other = next(n for n in topology.PG_NODES if n != primary)
        if other in state.fenced:
            log(f"postgres  {other} was the primary before a failover: rejoining it as standby")
        rejoin_node(layout, state, other, user)
        state.save(layout)
        return state


def make_synchronous(
    layout: Layout, state: State, standby: str, user: str | None, timeout: float = 60.0
) -> None:
    """Once ``standby`` streams, the primary's commits wait for it."""
    postgres.configure(layout, state.primary, user, primary=state.primary, sync_standby=standby)
    postgres.reload(layout, state.primary)
    postgres.wait_synchronous(layout, state.primary, standby, timeout)
    state.standby = standby


def rejoin_node(layout: Layout, state: State, node: str, user: str | None) -> None:
    """``node`` back as the primary's synchronous standby. A standby that was lost is started
    again and catches up from the primary's WAL; the fenced old primary is rewound onto the new
    primary's timeline (pg_rewind). Either is copied again (pg_basebackup) when that fails."""
    server = rpc(layout).supervisor
    if server.getProcessInfo(node)["statename"] in ("RUNNING", "STARTING"):
        server.stopProcess(node, True)
    fenced = node in state.fenced
    if postgres.initialised(layout, node):
        if fenced:
            # pg_rewind first finishes the stopped server's crash recovery in single-user mode,
            # which a standby cannot run: the fence's standby.signal goes while it is stopped.
            (layout.data_dir(node) / "standby.signal").unlink(missing_ok=True)
            if postgres.rewind(layout, node, state.primary, user):
                log(f"postgres  {node} rewound to {state.primary}'s timeline")
                if _start_standby(layout, state, node, user):
                    return
        elif _start_standby(layout, state, node, user):
            return
        if _running(layout, node):
            server.stopProcess(node, True)
    log(f"postgres  pg_basebackup {state.primary} -> {node}")
    postgres.clone(layout, state.primary, node, user)
    if not _start_standby(layout, state, node, user):
        raise ClusterError(f"{node} does not stream from {state.primary} even as a new copy")


def _running(layout: Layout, node: str) -> bool:
    return rpc(layout).supervisor.getProcessInfo(node)["statename"] in ("RUNNING", "STARTING")


def _start_standby(layout: Layout, state: State, node: str, user: str | None) -> bool:
    """Start ``node`` as the standby and make the primary wait for it; False if it does not
    catch up and stream."""
    postgres.configure(layout, node, user, primary=state.primary, standby=True)
    start_program(layout, node)
    try:
        postgres.wait_ready(
            layout, node, timeout=CATCH_UP_SECONDS, running=lambda: _running(layout, node)
        )
        make_synchronous(layout, state, node, user, timeout=CATCH_UP_SECONDS)
    except ClusterError as exc:
        log(f"postgres  {node}: {exc}")
        postgres.configure(layout, state.primary, user, primary=state.primary)
        postgres.reload(layout, state.primary)  # commits must not wait for it meanwhile
        return False
    state.fenced = [n for n in state.fenced if n != node]
    return True


# ---------------------------------------------------------------- var/cluster.json


def describe(layout: Layout, state: State, runner_pid: int) -> dict[str, Any]:
    """Each component with its pid, port and role (what tools and tests read)."""
    progs = {p.name: p for p in topology.programs(layout, Path("/"), None, state.primary)}
    infos = processes(layout)
    components = []
    for name, prog in progs.items():
        info = infos.get(name, {})
        role = state.role_of(name) if prog.role == "postgres" else prog.role
        components.append(
            {
                "name": name,
                "pid": info.get("pid") or None,
                "port": prog.port,
                "role": role,
                "state": info.get("statename", "UNKNOWN"),
                "log": str(layout.logs / f"{name}.log"),
                "metrics": (
                    layout.metrics_url(name)
                    if name in (*topology.WEB_NODES, *topology.EXPORTERS)
                    else None
                ),
            }
        )
    return {
        "name": "tongits-cluster",
        "url": layout.url,
        "runner_pid": runner_pid,
        "supervisor_socket": str(layout.supervisor_socket),
        "haproxy_socket": str(layout.haproxy_socket),
        "root": str(layout.root),
        "primary": state.primary,
        "standby": state.standby,
        "fenced": state.fenced,
        "components": components,
    }


def write_description(layout: Layout, data: dict[str, Any]) -> None:
    tmp = layout.description_file.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, layout.description_file)


# ---------------------------------------------------------------- the run


def lock_root(layout: Layout) -> IO[bytes] | None:
    layout.root.mkdir(parents=True, exist_ok=True)
    handle = (layout.root / "cluster.lock").open("wb")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


def start_supervisord(layout: Layout, env: dict[str, str]) -> subprocess.Popen[bytes]:
    exe = Path(sys.executable).parent / "supervisord"
    argv = [str(exe) if exe.exists() else "supervisord", "-c", str(layout.etc / "supervisord.conf")]
    with contextlib.suppress(FileNotFoundError):
        layout.supervisor_socket.unlink()
    out = (layout.logs / "supervisord.out").open("ab")
    runner = os.getpid()
    proc = subprocess.Popen(
        argv,
        cwd=topology.BASE_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # Ctrl-C reaches the runner only, which stops it in order
        # SIGTERM (a clean stop of everything) if the runner is killed outright.
        preexec_fn=lambda: orphans.die_with_parent(signal.SIGTERM, runner),
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ClusterError(f"supervisord exited ({proc.returncode}): see {layout.logs}")
        try:
            if rpc(layout).supervisor.getState()["statename"] == "RUNNING":
                return proc
        except OSError:
            pass
        time.sleep(0.1)
    raise ClusterError("supervisord did not answer within 30 s")


def app_environment(layout: Layout, state: State) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_DEBUG",)}
    env.update(layout.app_env(state.primary, state.standby))
    return env


def migrate(layout: Layout, state: State) -> None:
    env = app_environment(layout, state)
    env["DATABASE_URL"] = layout.direct_url(state.primary)
    env["DATABASE_PREPARED_STATEMENTS"] = "1"
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=topology.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise ClusterError(f"migrate failed: {done.stdout[-2000:]}{done.stderr[-3000:]}")


def start_everything(layout: Layout, user: str | None, direct_node: bool) -> State:
    state = bring_up_databases(layout, user)
    log(
        f"postgres  primary {state.primary} on {layout.port_of(state.primary)}, synchronous "
        f"standby {state.standby} on {layout.port_of(state.standby or state.primary)}"
    )
    migrate(layout, state)
    for name in ("redis", "pgbouncer"):
        start_program(layout, name)
        wait_port(layout.port_of(name), 30, name)
    server = rpc(layout).supervisor
    names = [*APPLICATION, *topology.WEB_NODES]
    if direct_node:
        names.append(topology.DIRECT_NODE)
    for name in names:  # no wait: they start side by side
        server.startProcess(name, False)
    for node in names[len(APPLICATION) :]:
        wait_healthy(f"http://127.0.0.1:{layout.port_of(node)}", START_TIMEOUT_SECONDS, node)
    start_program(layout, "haproxy")
    wait_healthy(layout.url, 30, "haproxy")
    return state


def stop_everything(layout: Layout, proc: subprocess.Popen[bytes] | None) -> None:
    """supervisord stops every program, in reverse order of priority, then exits; then
    nothing of the cluster may be left (``sweep``)."""
    if proc is None:
        return
    if proc.poll() is not None:
        sweep(layout)
        return
    try:
        server = rpc(layout).supervisor
        server.stopAllProcesses(True)
        server.shutdown()
    except (OSError, xmlrpc_fault()) as exc:
        log(f"supervisord did not stop cleanly ({exc}); terminating it")
        proc.terminate()
    try:
        proc.wait(STOP_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        log("supervisord did not exit; killing it")
        proc.kill()
        proc.wait()
    sweep(layout)


def sweep(layout: Layout) -> None:
    """Once supervisord has exited: wait for every process that carries the cluster's var
    directory to end (after supervisord died outright, each program got its stop signal), and
    kill what is still running after ``LEFTOVER_SECONDS``, naming it."""
    deadline = time.monotonic() + LEFTOVER_SECONDS
    while (left := orphans.processes_of(layout.root)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in left:
        log(f"left running after supervisord: pid {pid} ({orphans.command_line(pid)}); killing it")
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def xmlrpc_fault() -> type[Exception]:
    import xmlrpc.client

    return xmlrpc.client.Fault


def heal(layout: Layout) -> bool:
    """Restart the workers and beat when /healthz names the sweeper late (as make run does);
    whether it did."""
    from ops.stack import late_parts

    late = late_parts(str(layout.port))
    if not late or "sweeper" not in late:
        return False
    log("/healthz: the sweeper is late; restarting the workers and beat")
    server = rpc(layout).supervisor
    for name in (*topology.WORKER_NODES, "beat"):
        with contextlib.suppress(xmlrpc_fault()):
            server.stopProcess(name, True)
        server.startProcess(name, False)
    return True


def run(layout: Layout, direct_node: bool = False) -> int:
    started = time.monotonic()
    stop_signal: list[int] = []

    def request_stop(signum: int, frame: object) -> None:
        stop_signal.append(signum)

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    lock = lock_root(layout)
    if lock is None:
        log(f"another cluster runs on {layout.root}; stop it, or set TONGITS_VAR_DIR")
        return 1
    proc = None
    status = 0
    try:
        check_tools()
        user = postgres.server_user()
        with locked(layout):
            state = State.load(layout)
            write_files(layout, state, user)
        for node in (*topology.WEB_NODES, *topology.EXPORTERS):  # metrics start empty
            shutil.rmtree(layout.metrics_dir(node), ignore_errors=True)
            layout.metrics_dir(node).mkdir(parents=True)
        proc = start_supervisord(layout, app_environment(layout, state))
        log(f"supervisord running; logs in {layout.logs}")
        if not stop_signal:
            state = start_everything(layout, user, direct_node)
        if not stop_signal:
            write_description(layout, describe(layout, state, os.getpid()))
            log(
                f"haproxy   {layout.url}/ in front of {', '.join(topology.WEB_NODES)}; "
                f"pgbouncer on {layout.port_of('pgbouncer')}, Redis on {layout.port_of('redis')}"
            )
            for node in (*topology.WEB_NODES, *topology.EXPORTERS):
                log(f"metrics   {node}: {layout.metrics_url(node)}")
            log(f"components and pids in {layout.description_file}")
            log(f"started in {time.monotonic() - started:.1f} s; Ctrl-C stops everything")
        interval = float(os.environ.get("TONGITS_SWEEP_INTERVAL_SECONDS") or 10.0)
        next_heal = time.monotonic() + max(HEAL_GRACE_SECONDS, 3 * interval)
        while not stop_signal:
            if proc.poll() is not None:
                log(f"supervisord exited ({proc.returncode}); stopping")
                status = 1
                break
            with contextlib.suppress(OSError, xmlrpc_fault()):
                write_description(layout, describe(layout, State.load(layout), os.getpid()))
            if time.monotonic() >= next_heal:
                healed = heal(layout)
                wait = max(HEAL_GRACE_SECONDS, 3 * interval) if healed else max(interval, 5.0)
                next_heal = time.monotonic() + wait
            time.sleep(0.5)
    except ClusterError as exc:
        log(f"error: {exc}")
        status = 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stopping = time.monotonic()
        if stop_signal:
            log(f"{signal.Signals(stop_signal[0]).name}: stopping")
        stop_everything(layout, proc)
        with contextlib.suppress(FileNotFoundError):
            layout.description_file.unlink()
        log(f"stopped in {time.monotonic() - stopping:.1f} s")
        lock.close()
    return status
