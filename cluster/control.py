"""The operator's commands on a running cluster: failover, rejoin, status, rolling restart.

Failover (``python -m cluster failover``), when the primary is gone:

1. check that it is gone: it answers no connection (with ``--force``, it is stopped first);
2. fence it: supervisord will not start it (it is stopped and never restarted on its own), and
   its data directory gets ``standby.signal`` and the new primary as the server it follows, so
   a start by hand brings it up read-only; the roles file records it as fenced;
3. promote the standby (``pg_promote``): it takes writes on a new timeline, and waits for no
   synchronous standby (it was configured with none);
4. point pgbouncer at it (its file rewritten, SIGHUP): the web nodes, workers and schedulers
   keep their connections to pgbouncer, and their next transaction reaches the new primary;
5. the sessions that go around pgbouncer (LISTEN) and the public reads (the replica's URL) name
   both servers with ``target_session_attrs``: they find the new primary, or the promoted
   standby, on their next connect, with no restart.

Rejoin (``python -m cluster rejoin``) brings the fenced server back as the synchronous standby
(pg_rewind, or a new base backup). Until then the new primary runs alone: its commits are on
one server only. It also replaces a standby that was lost: while the synchronous standby is
away, the primary's commits wait for it.

Rolling restart (``python -m cluster rolling-restart [--migrate] [--web-only]``), to run new
code with no downtime: the migrations first (``--migrate``; they must be of the expand kind,
docs/operations.md "Upgrades without downtime"), then one web node at a time: drained in HAProxy
(no new request goes to it), stopped gracefully (the requests in hand are answered, its live
streams end with ``shutdown`` and their clients resume on the other node), started, healthy,
then ready in HAProxy again; then each worker node (the next one once it is consuming again),
scheduler, the notifier and beat, one at a time (a worker's warm shutdown finishes the tasks in
hand; the other takes the queue meanwhile).
"""

from __future__ import annotations

import socket
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from cluster import postgres, runner, topology
from cluster.postgres import ClusterError
from cluster.state import State, locked, rpc
from cluster.topology import Layout


def log(message: str) -> None:
    print(f"cluster: {message}", flush=True)


def failover(layout: Layout, force: bool = False) -> float:
    """Promote the standby in place of a primary that is gone; seconds it took."""
    started = time.monotonic()
    user = postgres.server_user()
    with locked(layout):
        state = State.load(layout)
        old, new = state.primary, state.standby
        if new is None:
            raise ClusterError(f"no standby to promote ({old} is the primary, alone)")
        if postgres.in_recovery(layout, old) is not None:
            if not force:
                raise ClusterError(
                    f"the primary {old} still answers: stop it first, or use --force to stop it"
                )
            log(f"--force: stopping the primary {old}")
        server = rpc(layout).supervisor
        if server.getProcessInfo(old)["statename"] in ("RUNNING", "STARTING", "BACKOFF"):
            server.stopProcess(old, True)
        # Fenced: should anyone start it, it comes up as a read-only follower of the new one.
        postgres.configure(layout, old, user, primary=new, standby=True)
        state.fenced = sorted({*state.fenced, old})
        state.primary, state.standby = new, None
        state.failovers += 1
        state.save(layout)
        log(f"fenced {old}: stopped, standby.signal in its data directory")
        # Commits wait for no standby; promotion itself removes standby.signal.
        postgres.configure(layout, new, user, primary=new, standby=None)
        postgres.reload(layout, new)
        postgres.promote(layout, new)
        log(f"promoted {new}: it takes writes on port {layout.port_of(new)}")
        runner.repoint_pgbouncer(layout, new)
        log(f"pgbouncer now sends every transaction to {new}")
    took = time.monotonic() - started
    log(f"failover done in {took:.1f} s; `python -m cluster rejoin` makes {old} the standby")
    # WAL the old primary wrote but had not archived is in no archive: a point-in-time restore
    # past this moment needs a base backup of the new primary.
    log("take a full backup of the new primary now: python -m cluster backup")
    return took


def rejoin(layout: Layout) -> float:
    """The other server back as the primary's synchronous standby: the fenced old primary
    after a failover, or a standby that was lost (while it is away, the primary's commits
    wait for it); seconds it took."""
    started = time.monotonic()
    user = postgres.server_user()
    with locked(layout):
        state = State.load(layout)
        node = next(n for n in topology.PG_NODES if n != state.primary)
        if state.standby == node and postgres.in_recovery(layout, node):
            try:
                postgres.wait_synchronous(layout, state.primary, node, timeout=5)
            except ClusterError:
                pass
            else:
                raise ClusterError(f"{node} is already the synchronous standby")
        runner.rejoin_node(layout, state, node, user)
        state.save(layout)
    took = time.monotonic() - started
    log(f"{node} is {state.primary}'s synchronous standby again ({took:.1f} s)")
    return took


def haproxy(layout: Layout, command: str) -> str:
    """One command on HAProxy's admin socket (``show stat``, ``set server ...``), its answer."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(5)
        sock.connect(str(layout.haproxy_socket))
        sock.sendall(command.encode() + b"\n")
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
    return out.decode()


def node_states(layout: Layout) -> dict[str, str]:
    """Each web node's status as HAProxy sees it (UP, DOWN, DRAIN, MAINT ...)."""
    out = {}
    for line in haproxy(layout, "show stat").splitlines():
        fields = line.split(",")
        if len(fields) > 17 and fields[0] == "web" and fields[1] in topology.WEB_NODES:
            out[fields[1]] = fields[17]
    return out


def _until(what: str, timeout: float, condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise ClusterError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.1)


def _node_healthy(layout: Layout, node: str) -> bool:
    url = f"http://127.0.0.1:{layout.port_of(node)}/healthz?scope=node"
    try:
        with urllib.request.urlopen(url, timeout=3) as answer:
            return answer.status == 200
    except OSError:
        return False


def _logged(path: Path, offset: int, text: str) -> bool:
    """Whether ``path`` holds ``text`` past ``offset`` (supervisord's log of a program)."""
    try:
        with path.open("rb") as handle:
            # supervisord rotated the log meanwhile: all of the new one is new.
            handle.seek(offset if path.stat().st_size >= offset else 0)
            return text.encode() in handle.read()
    except FileNotFoundError:
        return False


def rolling_restart(
    layout: Layout, migrate: bool = False, web_only: bool = False
) -> dict[str, float]:
    """Every application process started again, one at a time, while the cluster serves (the
    web nodes alone with ``web_only``); seconds each took (``migrate``: the migrations
    first)."""
    taken: dict[str, float] = {}
    server = rpc(layout).supervisor
    if migrate:
        started = time.monotonic()
        runner.migrate(layout, State.load(layout))
        taken["migrate"] = time.monotonic() - started
        log(f"migrations applied in {taken['migrate']:.1f} s")
    for node in topology.WEB_NODES:
        if node_states(layout).get(node) != "UP":
            raise ClusterError(f"{node} is not UP in HAProxy: restart nothing while it is down")
    for node in topology.WEB_NODES:
        started = time.monotonic()
        haproxy(layout, f"set server web/{node} state drain")
        try:
            _until(f"{node} drained", 10, lambda n=node: node_states(layout).get(n) == "DRAIN")
            server.stopProcess(node, True)  # SIGTERM: gunicorn's graceful stop
            server.startProcess(node, True)
            _until(f"{node} healthy", 120, lambda n=node: _node_healthy(layout, n))
        finally:  # even after a failure: HAProxy's health check decides then
            haproxy(layout, f"set server web/{node} state ready")
        _until(f"{node} UP in HAProxy", 30, lambda n=node: node_states(layout).get(n) == "UP")
        taken[node] = time.monotonic() - started
        log(f"{node} restarted (drained, stopped, started, ready) in {taken[node]:.1f} s")
    for name in () if web_only else runner.APPLICATION:
        started = time.monotonic()
        output = layout.logs / f"{name}.log"
        offset = output.stat().st_size if output.exists() else 0
        server.stopProcess(name, True)  # a worker's warm shutdown: its tasks in hand finish
        server.startProcess(name, True)
        if name in topology.WORKER_NODES:  # consuming again before the other one stops
            _until(f"{name} ready", 120, lambda p=output, o=offset: _logged(p, o, " ready."))
        taken[name] = time.monotonic() - started
        log(f"{name} restarted in {taken[name]:.1f} s")
    log(f"rolling restart done in {sum(taken.values()):.1f} s")
    return taken


def status(layout: Layout) -> int:
    """Print each component with its state, pid, port and role; 1 if the cluster is not up."""
    try:
        infos = {name: info for name, info in _infos(layout).items()}
    except OSError:
        log(f"not running ({layout.supervisor_socket} does not answer)")
        return 1
    state = State.load(layout)
    for prog in topology.programs(layout, postgres.bin_dir(), None, state.primary):
        info = infos.get(prog.name, {})
        role = state.role_of(prog.name) if prog.role == "postgres" else prog.role
        print(
            f"{prog.name:<12} {info.get('statename', '?'):<9} pid {info.get('pid') or '-':<8} "
            f"port {prog.port or '-':<6} {role}"
        )
    print(f"url {layout.url}/  primary {state.primary}  standby {state.standby or '-'}")
    return 0


def _infos(layout: Layout) -> dict[str, dict]:
    return {info["name"]: info for info in rpc(layout).supervisor.getAllProcessInfo()}
