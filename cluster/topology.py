"""Where each part of the cluster lives (ports, directories) and the configuration files of the
engines, as text. Nothing here starts anything: ``cluster.runner`` writes these files and
starts the processes.

Ports: HAProxy on ``CLUSTER_PORT`` (8100), every other part on ``CLUSTER_BASE_PORT`` (18100)
plus an offset (``OFFSETS``), so the defaults clash neither with ``make run`` (8000) nor with a
machine's own PostgreSQL (5432) and Redis (6379). Files under ``$TONGITS_VAR_DIR/cluster``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
DATABASE = "tongits"
#: The two PostgreSQL servers: their names never change, their roles (primary, standby) do.
PG_NODES = ("pg-a", "pg-b")
WEB_NODES = ("web-1", "web-2")
WORKER_NODES = ("worker-1", "worker-2")
SCHEDULERS = ("scheduler-1", "scheduler-2")
#: A web node that talks to PostgreSQL directly, started only for the benchmark's baseline.
DIRECT_NODE = "web-direct"
OFFSETS = {
    "pg-a": 1,
    "pg-b": 2,
    "pgbouncer": 3,
    "redis": 4,
    "web-1": 11,
    "web-2": 12,
    DIRECT_NODE: 13,
    # The metrics endpoints of the processes without a web server (metrics/exporter.py).
    "worker-1": 31,
    "worker-2": 32,
    "scheduler-1": 33,
    "scheduler-2": 34,
    "notifier": 35,
    "beat": 36,
}
#: The processes that serve their metrics on an endpoint of their own (each with its own files).
EXPORTERS = ("worker-1", "worker-2", "scheduler-1", "scheduler-2", "notifier", "beat")
DEFAULT_PORT = 8100
DEFAULT_BASE_PORT = 18100
#: Web processes per node: two nodes of two fill two cores, as make run's three do.
DEFAULT_NODE_CONCURRENCY = 2
WORKER_CONCURRENCY = 2
# The standby asks the primary again this often after losing it (PostgreSQL's default is 5 s,
# and a synchronous primary's commits wait for the standby to come back).
WAL_RETRY_INTERVAL = "200ms"
#: pgBackRest's name for the cluster's database servers (cluster/backup.py).
STANZA = "tongits"
#: Seconds after which a primary with unarchived commits switches to a new WAL segment: the
#: archive lags a quiet primary by at most this long (a busy one fills segments sooner).
ARCHIVE_TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class Layout:
    """The cluster's directories and ports."""

    root: Path
    port: int = DEFAULT_PORT
    base_port: int = DEFAULT_BASE_PORT
    node_concurrency: int = DEFAULT_NODE_CONCURRENCY
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, var_dir: Path | None = None) -> Layout:
        """The layout the environment asks for (``CLUSTER_PORT``, ``CLUSTER_BASE_PORT``,
        ``WEB_CONCURRENCY`` a node, ``TONGITS_VAR_DIR``)."""
        var = var_dir or Path(os.environ.get("TONGITS_VAR_DIR") or BASE_DIR / "var")
        return cls(
            root=var.resolve() / "cluster",
            port=int(os.environ.get("CLUSTER_PORT") or DEFAULT_PORT),
            base_port=int(os.environ.get("CLUSTER_BASE_PORT") or DEFAULT_BASE_PORT),
            node_concurrency=int(os.environ.get("WEB_CONCURRENCY") or DEFAULT_NODE_CONCURRENCY),
        )

    # ---------------------------------------------------------------- places

    @property
    def var_dir(self) -> Path:
        return self.root.parent

    @property
    def etc(self) -> Path:
        return self.root / "etc"

    @property
    def run(self) -> Path:
        return self.root / "run"

    def metrics_dir(self, node: str) -> Path:
        """A web node's or an exporter's prometheus-client multiprocess files (its /metrics
        sums them)."""
        return self.root / "metrics" / node

    def metrics_url(self, name: str) -> str:
        """Where a web node or an exporter (``EXPORTERS``) answers its metrics."""
        return f"http://127.0.0.1:{self.port_of(name)}/metrics"

    def metrics_env(self, name: str) -> dict[str, str]:
        """An exporter's environment: its files, and its endpoint's port."""
        return {
            "PROMETHEUS_MULTIPROC_DIR": str(self.metrics_dir(name)),
            "TONGITS_METRICS_PORT": str(self.port_of(name)),
        }

    @property
    def logs(self) -> Path:
        return self.root / "log"

    @property
    def app_var(self) -> Path:
        """The application processes' TONGITS_VAR_DIR (seal key, beat schedule)."""
        return self.root / "app"

    @property
    def state_file(self) -> Path:
        """Who is primary, standby or fenced (``cluster.state``)."""
        return self.root / "state.json"

    @property
    def description_file(self) -> Path:
        """``var/cluster.json``: every component with its pid, port and role, for tools."""
        return self.var_dir / "cluster.json"

    @property
    def sockets(self) -> Path:
        """The PostgreSQL servers' unix sockets (pgBackRest reaches a server through one)."""
        return self.root / "sockets"

    @property
    def pgbackrest_conf(self) -> Path:
        return self.etc / "pgbackrest.conf"

    @property
    def supervisor_socket(self) -> Path:
        return self.run / "supervisor.sock"

    @property
    def haproxy_socket(self) -> Path:
        return self.run / "haproxy.sock"

    def data_dir(self, node: str) -> Path:
        return self.root / node

    def port_of(self, name: str) -> int:
        if name == "haproxy":
            return self.port
        return self.base_port + OFFSETS[name]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ---------------------------------------------------------------- what clients connect to

    def pg_hosts(self, first: str | None = None) -> str:
        """``127.0.0.1:<a>,127.0.0.1:<b>``, ``first`` first."""
        nodes = sorted(PG_NODES, key=lambda n: n != first)
        return ",".join(f"127.0.0.1:{self.port_of(n)}" for n in nodes)

    def app_env(self, primary: str, standby: str | None) -> dict[str, str]:
        """The settings of every application process (README, "Configuration"): writes through
        pgbouncer, sessions (LISTEN) straight to whichever server takes writes, the public
        history's reads from a standby when there is one."""
        hosts = self.pg_hosts(primary)
        redis = f"redis://127.0.0.1:{self.port_of('redis')}"
        return {
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:{self.port_of('pgbouncer')}/{DATABASE}",
            # pgbouncer 1.18 cannot keep prepared statements across server connections.
            "DATABASE_PREPARED_STATEMENTS": "0",
            "DATABASE_LISTEN_URL": (
                f"postgres://postgres@{hosts}/{DATABASE}?target_session_attrs=read-write"
            ),
            "DATABASE_REPLICA_URL": (
                f"postgres://postgres@{self.pg_hosts(standby or primary)}/{DATABASE}"
                "?target_session_attrs=prefer-standby"
            ),
            "CELERY_BROKER_URL": f"{redis}/0",
            "CACHE_URL": f"{redis}/1",
            "TONGITS_VAR_DIR": str(self.app_var),
            # HAProxy appends the client's address to X-Forwarded-For.
            "TONGITS_NUM_PROXIES": "1",
            "PORT": str(self.port),
            "WEB_CONCURRENCY": str(self.node_concurrency),
            "PYTHONUNBUFFERED": "1",
            **self.extra,
        }

    def direct_url(self, primary: str) -> str:
        """DATABASE_URL of a client that skips pgbouncer (migrations, the direct node)."""
        return (
            f"postgres://postgres@{self.pg_hosts(primary)}/{DATABASE}"
            "?target_session_attrs=read-write"
        )


# ---------------------------------------------------------------- PostgreSQL


def postgres_conf(layout: Layout, node: str, *, sync_standby: str | None) -> str:
    """The settings of one server (included from its postgresql.conf). Both run the same ones
    but the port and the standby a primary's commits wait for (``sync_standby``, by the name it
    streams under): none for a primary alone or for a standby, which must not wait on anyone
    the moment it is promoted."""
    names = f'"{sync_standby}"' if sync_standby else ""
    # While it is the primary, each server archives its WAL into the backup repository.
    archive = (
        f"pgbackrest --config={layout.pgbackrest_conf} --stanza={STANZA} "
        f"--pg1-path={layout.data_dir(node)} archive-push %p"
    )
    return f"""# Written by `make cluster` (cluster/topology.py); edits are overwritten.
listen_addresses = '127.0.0.1'
port = {layout.port_of(node)}
unix_socket_directories = '{layout.sockets}'
archive_mode = on
archive_command = '{archive}'
archive_timeout = {ARCHIVE_TIMEOUT_SECONDS}
max_connections = 200
shared_buffers = 128MB
timezone = 'UTC'
log_timezone = 'UTC'
wal_level = replica
wal_log_hints = on
max_wal_senders = 5
wal_keep_size = 512MB
hot_standby = on
hot_standby_feedback = on
wal_receiver_status_interval = 1s
wal_retrieve_retry_interval = {WAL_RETRY_INTERVAL}
synchronous_commit = on
synchronous_standby_names = '{names}'
logging_collector = off
log_min_messages = warning
log_line_prefix = '%m [%p] {node} '
"""


def pg_hba() -> str:
    """Trust on the loopback only: the cluster runs on one machine (docs/operations.md says
    what changes on several: scram-sha-256 and the other machines' addresses)."""
    return (
        "# Written by `make cluster`.\n"
        "local all all trust\n"
        "host all all 127.0.0.1/32 trust\n"
        "host replication all 127.0.0.1/32 trust\n"
    )


def primary_conninfo(layout: Layout, primary: str, standby: str) -> str:
    """How ``standby`` streams from ``primary``; its name is what the primary's
    ``synchronous_standby_names`` matches."""
    return (
        f"host=127.0.0.1 port={layout.port_of(primary)} user=postgres "
        f"application_name={standby} connect_timeout=2"
    )


# ---------------------------------------------------------------- pgbouncer, HAProxy, Redis


def pgbouncer_ini(layout: Layout, primary: str) -> str:
    """Transaction pooling in front of the primary; a failover rewrites the [databases] line
    and reloads (SIGHUP), and clients keep their connections to pgbouncer."""
    return f"""; Written by `make cluster` (cluster/topology.py); a failover rewrites it.
[databases]
{DATABASE} = host=127.0.0.1 port={layout.port_of(primary)} dbname={DATABASE}
postgres = host=127.0.0.1 port={layout.port_of(primary)} dbname=postgres

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {layout.port_of("pgbouncer")}
unix_socket_dir =
auth_type = trust
auth_file = {layout.etc / "userlist.txt"}
admin_users = postgres
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 40
reserve_pool_size = 10
server_connect_timeout = 3
server_login_retry = 1
query_wait_timeout = 30
ignore_startup_parameters = extra_float_digits,options
server_reset_query =
log_connections = 0
log_disconnections = 0
"""


def haproxy_cfg(layout: Layout) -> str:
    """The two web nodes behind one address. ``/healthz?scope=node`` is the health check (a
    node whose database does not answer is taken out; a late sweeper, every node's news at
    once, takes none out); with no node up, HAProxy answers the API's JSON 503. A request
    that could not reach a node goes to the other one (retries, redispatch); the streams
    (Server-Sent Events, a keep-alive comment every 15 s) pass through under the 60 s idle
    timeouts; least connections, since a stream holds its connection for the whole match. A
    node that refuses a client's connection is marked down at once (``observe layer4``), not
    after the next two checks."""
    observe = "observe layer4 error-limit 1 on-error mark-down"
    servers = "\n".join(
        f"    server {node} 127.0.0.1:{layout.port_of(node)} check" for node in WEB_NODES
    )
    return f"""# Written by `make cluster` (cluster/topology.py).
global
    maxconn 8000
    stats socket {layout.haproxy_socket} mode 600 level admin

defaults
    mode http
    option dontlognull
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout http-request 10s
    timeout http-keep-alive 60s
    timeout queue 10s
    retries 3
    option redispatch 1
    errorfile 503 {layout.etc / "503.http"}

frontend api
    bind 0.0.0.0:{layout.port}
    option forwardfor
    default_backend web

backend web
    balance leastconn
    option httpchk
    http-check send meth GET uri /healthz?scope=node ver HTTP/1.1 hdr Host localhost
    http-check expect status 200
    default-server inter 1s fastinter 500ms downinter 500ms fall 2 rise 1 {observe}
{servers}
"""


def haproxy_503() -> str:
    """HAProxy's own answer when no web node is up: the API's error shape, so a client handles
    it as it handles the nodes' 503 ``database_unavailable``."""
    body = '{"code": "unavailable", "detail": "No web node can answer now: retry."}\n'
    return (
        "HTTP/1.1 503 Service Unavailable\r\n"
        "Content-Type: application/json\r\n"
        "Cache-Control: no-cache\r\n"
        "Retry-After: 1\r\n"
        "Connection: close\r\n"
        f"Content-Length: {len(body)}\r\n"
        "\r\n"
        f"{body}"
    )


def redis_conf(layout: Layout) -> str:
    """The broker and the shared counters. Append-only file, flushed every second and on a
    clean shutdown: a restarted Redis keeps the tasks it had queued."""
    return f"""# Written by `make cluster` (cluster/topology.py).
bind 127.0.0.1
port {layout.port_of("redis")}
protected-mode yes
daemonize no
dir {layout.root / "redis"}
save ""
appendonly yes
appendfsync everysec
logfile ""
loglevel warning
"""


# ---------------------------------------------------------------- supervisord


@dataclass(frozen=True)
class Program:
    """One program of supervisord: a process group of its own, started and stopped as one."""

    name: str
    command: list[str]
    role: str
    priority: int
    port: int | None = None
    autorestart: bool = True
    stopsignal: str = "TERM"
    stopwaitsecs: int = 15
    startsecs: int = 1
    user: str | None = None
    environment: dict[str, str] = field(default_factory=dict)


def programs(layout: Layout, pg_bin: Path, user: str | None, primary: str) -> list[Program]:
    """Every process of the cluster. PostgreSQL is never restarted by supervisord on its own: a
    primary that died is the operator's (or the failover command's) to restart or replace,
    never silently brought back after its standby was promoted."""
    py = sys.executable
    from ops.stack import ASGI_APP, ASGI_WORKER, GUNICORN_CONFIG  # constants only

    def web(node: str, concurrency: int) -> list[str]:
        return [
            py,
            "-m",
            "gunicorn",
            ASGI_APP,
            f"--worker-class={ASGI_WORKER}",
            "--reuse-port",
            f"--config={GUNICORN_CONFIG}",
            f"--bind=127.0.0.1:{layout.port_of(node)}",
            f"--workers={concurrency}",
            f"--control-socket={layout.run / f'{node}.ctl'}",
        ]

    out: list[Program] = []
    for i, node in enumerate(PG_NODES):
        out.append(
            Program(
                name=node,
                command=[str(pg_bin / "postgres"), "-D", str(layout.data_dir(node))],
                role="postgres",
                priority=10 + i,
                port=layout.port_of(node),
                autorestart=False,
                stopsignal="INT",  # fast shutdown: clients are disconnected, nothing is lost
                stopwaitsecs=30,
                startsecs=0,
                user=user,
            )
        )
    out.append(
        Program(
            "redis",
            ["redis-server", str(layout.etc / "redis.conf")],
            "redis",
            20,
            layout.port_of("redis"),
        )
    )
    out.append(
        Program(
            "pgbouncer",
            ["pgbouncer", str(layout.etc / "pgbouncer.ini")],
            "pgbouncer",
            21,
            layout.port_of("pgbouncer"),
            user=user,
        )
    )
    celery = [py, "-m", "celery", "-A", "tongits_site"]
    for i, node in enumerate(WORKER_NODES):
        out.append(
            Program(
                node,
                [
                    *celery,
                    "worker",
                    "--loglevel=INFO",
                    f"--hostname={node}@%h",
                    f"--concurrency={WORKER_CONCURRENCY}",
                ],
                "worker",
                40 + i,
                stopwaitsecs=20,
                environment=layout.metrics_env(node),
            )
        )
    for i, name in enumerate(SCHEDULERS):
        out.append(
            Program(
                name,
                [py, "manage.py", "run_scheduler"],
                "scheduler",
                45 + i,
                environment=layout.metrics_env(name),
            )
        )
    out.append(
        Program(
            "notifier",
            [py, "manage.py", "run_notifier"],
            "notifier",
            47,
            environment=layout.metrics_env("notifier"),
        )
    )
    out.append(
        Program(
            "beat",
            [*celery, "beat", "--loglevel=INFO"],
            "beat",
            48,
            environment=layout.metrics_env("beat"),
        )
    )
    for i, node in enumerate(WEB_NODES):
        out.append(
            Program(
                node,
                web(node, layout.node_concurrency),
                "web",
                50 + i,
                layout.port_of(node),
                startsecs=2,
                environment={"PROMETHEUS_MULTIPROC_DIR": str(layout.metrics_dir(node))},
            )
        )
    out.append(
        Program(
            DIRECT_NODE,
            web(DIRECT_NODE, layout.node_concurrency * len(WEB_NODES)),
            "web-direct",
            55,
            layout.port_of(DIRECT_NODE),
            startsecs=2,
            # One node as make run's: PostgreSQL itself, statements prepared, no pooler.
            environment={
                "DATABASE_URL": layout.direct_url(primary),
                "DATABASE_PREPARED_STATEMENTS": "1",
                "DATABASE_LISTEN_URL": "",
            },
        )
    )
    out.append(
        Program(
            "haproxy",
            ["haproxy", "-db", "-f", str(layout.etc / "haproxy.cfg")],
            "haproxy",
            70,
            layout.port,
        )
    )
    return out


def _quote_env(env: dict[str, str]) -> str:
    parts = []
    for key, value in env.items():
        escaped = value.replace("%", "%%").replace('"', '\\"')
        parts.append(f'{key}="{escaped}"')
    return ",".join(parts)


def supervisord_conf(layout: Layout, progs: list[Program]) -> str:
    """supervisord's configuration: every program declared, none started on its own (the
    runner starts them in order: databases, then pgbouncer and Redis, then the application,
    then HAProxy); each program's output in ``log/<name>.log``. Each program runs under
    util-linux's ``setpriv --pdeathsig``, which sets its stop signal as its parent-death
    signal and execs it: supervisord killed outright (``kill -9``, the OOM killer) cannot stop
    its programs, and they then stop as supervisord would have stopped them."""
    lines = [
        "; Written by `make cluster` (cluster/topology.py).",
        "[unix_http_server]",
        f"file={layout.supervisor_socket}",
        "chmod=0700",
        "",
        "[supervisord]",
        "nodaemon=true",
        f"logfile={layout.logs / 'supervisord.log'}",
        f"pidfile={layout.run / 'supervisord.pid'}",
        f"childlogdir={layout.logs}",
        "loglevel=info",
        "identifier=tongits-cluster",
        "",
        "[rpcinterface:supervisor]",
        "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface",
        "",
        "[supervisorctl]",
        f"serverurl=unix://{layout.supervisor_socket}",
    ]
    for prog in progs:
        watched = ["setpriv", f"--pdeathsig={prog.stopsignal}", "--", *prog.command]
        command = " ".join(_arg(a) for a in watched)
        lines += [
            "",
            f"[program:{prog.name}]",
            f"command={command}",
            # A server run as another user starts in /: the checkout may be a directory only its
            # owner can enter (a clone in `mktemp -d`), and supervisord must chdir before it execs.
            f"directory={'/' if prog.user else BASE_DIR}",
            "autostart=false",
            f"autorestart={'true' if prog.autorestart else 'false'}",
            f"startsecs={prog.startsecs}",
            "startretries=20",
            f"stopsignal={prog.stopsignal}",
            f"stopwaitsecs={prog.stopwaitsecs}",
            # Only the leader is asked to stop (gunicorn and celery stop their own children
            # gracefully); whatever of the group is left after stopwaitsecs is killed.
            "stopasgroup=false",
            "killasgroup=true",
            f"priority={prog.priority}",
            "redirect_stderr=true",
            f"stdout_logfile={layout.logs / f'{prog.name}.log'}",
            "stdout_logfile_maxbytes=20MB",
            "stdout_logfile_backups=1",
        ]
        if prog.user:
            lines.append(f"user={prog.user}")
        if prog.environment:
            lines.append(f"environment={_quote_env(prog.environment)}")
    return "\n".join(lines) + "\n"


def _arg(text: str) -> str:
    """One word of a supervisord command line (it splits with shlex; % must be doubled)."""
    text = text.replace("%", "%%")
    if any(c in text for c in " \"'"):
        return '"' + text.replace('"', '\\"') + '"'
    return text
