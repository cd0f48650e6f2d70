"""The cluster (`make cluster`: two web nodes behind HAProxy, pgbouncer, a PostgreSQL primary and
its synchronous standby, Redis, two worker nodes, two schedulers), started as a terminal would
start it, in a temporary var dir on free ports: one match through HAProxy against two bots,
one web node killed with ``kill -9`` in the middle of it, the match finishes; then a web node's
arbiter alone killed with ``kill -9``, its workers gone within 5 s and only the new arbiter's
workers on its port; then the restore drill (scripts/restore_drill.py, `make restore-drill`)
with a rolling restart of every application process under play in it; and Ctrl-C leaves nothing
running. Needs Debian's postgresql-15, pgbouncer, haproxy, redis-server and pgbackrest (`.ci/run`
installs them); it fails, never skips, without them.

The longer run, with every fault of docs/operations.md, is `make chaos` (not a test).
"""

from __future__ import annotations

import http.client
import importlib.util
import json
import os
import random
import signal
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from cluster import backup, control, harness, topology
from games.rules.bots import GreedyBot
from ops import orphans

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "restore_drill", ROOT / "scripts" / "restore_drill.py"
)
restore_drill = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
sys.modules.setdefault("restore_drill", restore_drill)
_spec.loader.exec_module(restore_drill)  # type: ignore[union-attr]

MATCH_TIMEOUT_SECONDS = 120.0


class Client:
    """A player's HTTP client, retrying as a mobile app does: on a refused or dropped
    connection and on 502/503 (a node restarting, HAProxy's own 503), with the same
    Idempotency-Key for a command."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.token: str | None = None
        self.retried = 0
        self.stream_port = 0

    def headers(self, **extra: str) -> dict[str, str]:
        out = {"Content-Type": "application/json", **extra}
        if self.token:
            out["Authorization"] = f"Token {self.token}"
        return out

    def call(self, method: str, path: str, body: Any = None, key: str | None = None) -> Any:
        deadline = time.monotonic() + 60
        while True:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=15)
            try:
                extra = {"Idempotency-Key": key} if key else {}
                conn.request(
                    method,
                    path,
                    json.dumps(body) if body is not None else None,
                    self.headers(**extra),
                )
                answer = conn.getresponse()
                status, raw = answer.status, answer.read()
            except (OSError, http.client.HTTPException):
                status, raw = None, b""
            finally:
                conn.close()
            if status is not None and status < 500:
                return status, json.loads(raw) if raw else None
            assert time.monotonic() < deadline, f"{method} {path}: no answer within 60 s"
            self.retried += 1
            time.sleep(0.3)

    def stream(self, path: str, after: int) -> Iterator[tuple[str, str | None, Any]]:
        """(event, id, data) frames of a game stream from seq ``after`` until it closes."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=20)
        try:
            conn.request(
                "GET",
                path,
                headers=self.headers(
                    **{"Accept": "text/event-stream", "Last-Event-ID": str(after)}
                ),
            )
            answer = conn.getresponse()
            if answer.status != 200:
                answer.read()
                raise ConnectionError(f"stream answered {answer.status}")
            self.stream_port = conn.sock.getsockname()[1]
            event, ident, data = None, None, None
            for raw in answer:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("id: "):
                    ident = line[4:]
                elif line.startswith("data: "):
                    data = json.loads(line[6:])
                elif not line and event is not None:
                    yield event, ident, data
                    event, ident, data = None, None, None
        finally:
            conn.close()


@pytest.fixture(scope="module")
def cluster():
    with tempfile.TemporaryDirectory(prefix="tongits-cluster-") as tmp:
        running = harness.start(
            Path(tmp),
            env={
                "WEB_CONCURRENCY": "1",
                "TONGITS_BOT_DELAY_SECONDS": "0",
                "TONGITS_NEXT_ROUND_DELAY_SECONDS": "0",
            },
        )
        try:
            yield running
        except BaseException:
            print(running.log_text()[-3000:])
            raise
        finally:
            harness.stop(running)


def test_a_match_through_haproxy_outlives_a_killed_web_node(cluster) -> None:
    described = json.loads(cluster.layout.description_file.read_text())
    roles = {c["name"]: c["role"] for c in described["components"]}
    assert roles["pg-a"] == "postgres-primary" and roles["pg-b"] == "postgres-standby"
    assert [roles[n] for n in topology.WEB_NODES] == ["web", "web"]
    assert all(c["pid"] for c in described["components"] if c["name"] != topology.DIRECT_NODE)

    api = Client(cluster.url)
    name = f"c{uuid.uuid4().hex[:10]}"
    status, body = api.call(
        "POST", "/api/v1/auth/register", {"username": name, "password": "a-long-cluster-passphrase"}
    )
    assert status == 201, body
    api.token = body["token"]
    seats = [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}]
    rules = {"preset": "standard", "wins_to_match": 1}  # one round: the test stays short
    status, table = api.call("POST", "/api/v1/tables", {"rules": rules, "seats": seats})
    assert status == 201 and table["status"] == "active", table
    game = f"/api/v1/games/{table['id']}"

    bot, rng = GreedyBot(), random.Random(1)
    killed, victim, moves, last, acted, end, reconnects = None, "", 0, 0, -1, None, -1
    deadline = time.monotonic() + MATCH_TIMEOUT_SECONDS
    while end is None:
        assert time.monotonic() < deadline, "the match did not end in time"
        reconnects += 1
        try:
            for event, ident, data in api.stream(f"{game}/stream", last):
                if ident:
                    last = int(ident)
                if event == "end":
                    end = data
                    break
                if event != "view" or not data["legal_commands"] or data["version"] <= acted:
                    continue
                if moves == 3 and killed is None:  # mid-match: the stream's web node dies
                    victim = harness.node_serving(cluster.layout, api.stream_port)
                    assert victim in topology.WEB_NODES, victim
                    killed = cluster.pid(victim)
                    os.killpg(killed, signal.SIGKILL)
                command = bot.choose(data["view"], data["legal_commands"], rng)
                status, answer = api.call(
                    "POST",
                    f"{game}/commands",
                    {"command": command, "expected_version": data["version"]},
                    key=uuid.uuid4().hex,
                )
                assert status in (200, 409), answer
                acted = data["version"]
                moves += status == 200
        except (OSError, http.client.HTTPException, ConnectionError):
            api.retried += 1
            time.sleep(0.3)  # the stream's node died: reconnect after the last seq
    assert killed is not None, "the match ended before a node could be killed"
    assert reconnects >= 1, "the stream did not have to move to the other node"
    assert end == {"reason": "settled"}

    status, audit = api.call("GET", f"{game}/audit")
    assert status == 200 and audit["sound"] and audit["chain_ok"], audit
    # The history is read from the standby, and shows the match as soon as it is settled.
    status, history = api.call("GET", f"/api/v1/players/{name}/matches")
    assert status == 200 and [m["game_id"] for m in history["results"]] == [table["id"]]
    since = standby_now(cluster)
    assert api.call("GET", f"/api/v1/players/{name}/stats")[0] == 200
    assert standby_ran(cluster, "accounts_playerstats", since), "the read missed the standby"
    # supervisord started the killed node again, and HAProxy sends to it once it is healthy.
    deadline = time.monotonic() + 60
    while harness.node_states(cluster.layout).get(victim) != "UP" or cluster.pid(victim) in (
        0,
        killed,
    ):
        assert time.monotonic() < deadline, f"{victim} did not come back"
        time.sleep(0.2)
    print(
        f"{moves} moves of ours, {api.retried} retries, {reconnects} stream reconnects; "
        f"{victim} (pid {killed}) killed mid-match, back in HAProxy"
    )
    # Every process without a web server serves its metrics where the cluster said: the bots'
    # moves were queued and run on the worker nodes, the schedulers and the notifier loop.
    urls = {c["name"]: c["metrics"] for c in described["components"] if c.get("metrics")}
    assert set(urls) == {*topology.WEB_NODES, *topology.EXPORTERS}
    log = cluster.log_text()
    for name, url in urls.items():
        assert f"metrics   {name}: {url}" in log, name
    scraped = {name: _metric_samples(urls[name]) for name in topology.EXPORTERS}
    bot_turns = sum(
        value
        for name in topology.WORKER_NODES
        for (metric, labels), value in scraped[name].items()
        if metric == "tongits_task_queue_seconds_count"
        and ("task", "games.tasks.play_bot_turns") in labels
    )
    assert bot_turns >= 1, "no bot move's wait in the workers' metrics"
    for part, names in (("scheduler", topology.SCHEDULERS), ("notifier", ("notifier",))):
        for name in names:
            key = ("tongits_loop_heartbeat_timestamp_seconds", (("part", part),))
            assert scraped[name].get(key, 0) > 0, name


def _metric_samples(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        text = answer.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_a_killed_web_master_leaves_only_its_replacements_workers_on_the_port(cluster) -> None:
    """kill -9 of a web node's gunicorn arbiter alone (supervisord then starts a new one): its
    workers exit within 5 s, and from then on only the new arbiter's workers listen on the
    node's port. The module's Ctrl-C then checks that nothing of the cluster is left."""
    node = topology.WEB_NODES[1]
    port = cluster.layout.port_of(node)
    master = cluster.pid(node)
    workers = harness.node_workers(cluster, node)
    assert workers and orphans.listening_pids(port) == workers
    os.kill(master, signal.SIGKILL)
    killed = time.monotonic()
    while any(orphans.running(pid) for pid in workers):
        assert time.monotonic() - killed < 5, "the killed arbiter's workers are still running"
        time.sleep(0.02)
    gone = time.monotonic() - killed
    assert not orphans.listening_pids(port) & workers
    deadline = killed + 60
    while not (
        cluster.pid(node) not in (0, master)
        and (new := harness.node_workers(cluster, node))
        and orphans.listening_pids(port) == new
        and harness.node_states(cluster.layout).get(node) == "UP"
    ):
        assert time.monotonic() < deadline, f"{node} did not come back"
        assert not orphans.listening_pids(port) & workers, "an old worker listens again"
        time.sleep(0.1)
    assert harness.stale_listeners(cluster) == {n: set() for n in topology.WEB_NODES}
    print(
        f"{node}'s arbiter killed: its workers gone in {gone:.2f} s, "
        f"the new ones listening after {time.monotonic() - killed:.1f} s"
    )


def test_a_rolling_restart_and_a_restore_to_a_moment_between_two_moves(cluster) -> None:
    """The restore drill, lean: journaled people play for chips; a full backup (pgBackRest)
    while they do; then, under play, each web node drained in HAProxy, stopped gracefully,
    started again and made ready, one at a time (``make chaos`` restarts every other
    application process too); a match ends (sealed, settled); a target time between two
    moves; the backup and the WAL restored to it and promoted. On the copy every chain,
    legality and seal verifies, the ledger verifies, every move answered before the target is
    there with the hash its player was told and none sent after it is; and no answered move
    was lost on the cluster."""
    states: list[dict[str, str]] = []

    def rolling_restart() -> dict[str, float]:
        before = harness.node_workers(cluster, "web-1") | harness.node_workers(cluster, "web-2")
        taken = control.rolling_restart(cluster.layout, web_only=True)
        states.append(control.node_states(cluster.layout))
        after = harness.node_workers(cluster, "web-1") | harness.node_workers(cluster, "web-2")
        assert after and not before & after, "a web node kept its old workers"
        return taken

    # The copy beside the cluster's var dir, which the server user may enter.
    workdir = cluster.layout.var_dir / "drill"
    found = restore_drill.drill(cluster, workdir, between=rolling_restart, moves=(4, 6, 2))
    restore_drill.report(found)
    assert not found.failures, found.failures
    assert set(found.between) == set(topology.WEB_NODES)
    assert states == [{node: "UP" for node in topology.WEB_NODES}]
    # Draining kept every request off a stopping node: no answer of 502 or 503 to retry.
    assert not {kind for kind in found.errors if kind.startswith("5")}, found.errors
    assert found.restored["seals"] >= 1 and found.restored["ledger_entries"] > 0
    assert found.before >= 10 and found.after >= 2
    assert found.last_before["answered_at"] < found.first_after["sent_at"]


def _standby(cluster) -> psycopg.Connection:
    port = cluster.layout.port_of(cluster.state().standby)
    return psycopg.connect(
        host="127.0.0.1", port=port, user="postgres", dbname="postgres", autocommit=True
    )


def standby_now(cluster) -> Any:
    with _standby(cluster) as conn:
        return conn.execute("SELECT now()").fetchone()[0]


def standby_ran(cluster, table: str, since: Any) -> bool:
    """Whether a session of the application's ran a query of ``table`` on the standby since."""
    with _standby(cluster) as conn:
        return bool(
            conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND query LIKE %s "
                "AND query_start >= %s",
                [topology.DATABASE, f"%{table}%", since],
            ).fetchone()[0]
        )


# ---------------------------------------------------------------- the configuration, as text


def test_the_default_ports_clash_with_nothing_the_machine_runs() -> None:
    layout = topology.Layout(root=Path("/tmp/x/cluster"))
    ports = [layout.port_of(name) for name in ("haproxy", *topology.OFFSETS)]
    assert len(set(ports)) == len(ports)
    assert not {5432, 6379, 8000, 6432} & set(ports)


def test_the_application_writes_through_pgbouncer_and_listens_past_it() -> None:
    layout = topology.Layout(root=Path("/tmp/x/cluster"))
    env = layout.app_env("pg-b", "pg-a")
    assert env["DATABASE_URL"].endswith(f":{layout.port_of('pgbouncer')}/tongits")
    assert env["DATABASE_PREPARED_STATEMENTS"] == "0"  # pgbouncer 1.18
    both = f"127.0.0.1:{layout.port_of('pg-b')},127.0.0.1:{layout.port_of('pg-a')}"
    assert env["DATABASE_LISTEN_URL"] == (
        f"postgres://postgres@{both}/tongits?target_session_attrs=read-write"
    )
    assert env["DATABASE_REPLICA_URL"].endswith("?target_session_attrs=prefer-standby")
    assert env["CELERY_BROKER_URL"] != env["CACHE_URL"]
    ini = topology.pgbouncer_ini(layout, "pg-b")
    assert "pool_mode = transaction" in ini
    assert f"tongits = host=127.0.0.1 port={layout.port_of('pg-b')} dbname=tongits" in ini


def test_postgresql_is_never_restarted_behind_the_operators_back() -> None:
    layout = topology.Layout(root=Path("/tmp/x/cluster"))
    conf = topology.supervisord_conf(
        layout, topology.programs(layout, Path("/usr/lib/postgresql/15/bin"), "postgres", "pg-a")
    )
    sections = {block.split("]", 1)[0]: block for block in conf.split("[program:")[1:]}
    for node in topology.PG_NODES:
        assert "autorestart=false" in sections[node] and "user=postgres" in sections[node]
        assert "stopsignal=INT" in sections[node]  # fast shutdown
    for name in (*topology.WEB_NODES, *topology.WORKER_NODES, *topology.SCHEDULERS, "pgbouncer"):
        assert "autorestart=true" in sections[name], name
    assert all("autostart=false" in block for block in sections.values())  # the runner orders
    assert "--hostname=worker-1@%%h" in sections["worker-1"]  # supervisord's own % doubled


def test_a_primary_waits_for_its_standby_and_a_standby_for_nobody() -> None:
    layout = topology.Layout(root=Path("/tmp/x/cluster"))
    assert "synchronous_standby_names = '\"pg-b\"'" in topology.postgres_conf(
        layout, "pg-a", sync_standby="pg-b"
    )
    assert "synchronous_standby_names = ''" in topology.postgres_conf(
        layout, "pg-b", sync_standby=None
    )


def test_haproxy_checks_each_node_and_answers_json_when_none_is_up() -> None:
    layout = topology.Layout(root=Path("/tmp/x/cluster"))
    cfg = topology.haproxy_cfg(layout)
    assert "uri /healthz?scope=node" in cfg
    for node in topology.WEB_NODES:
        assert f"server {node} 127.0.0.1:{layout.port_of(node)} check" in cfg
    head, body = topology.haproxy_503().split("\r\n\r\n", 1)
    assert json.loads(body)["code"] == "unavailable"
    assert f"Content-Length: {len(body)}" in head


def test_each_server_archives_into_the_stanza_that_names_both(monkeypatch) -> None:
    layout = topology.Layout(root=Path("/tmp/x/cluster"))
    for node in topology.PG_NODES:
        conf = topology.postgres_conf(layout, node, sync_standby=None)
        assert "archive_mode = on" in conf
        assert (
            f"--stanza=tongits --pg1-path={layout.data_dir(node)} archive-push %p" in conf
        )  # its own WAL, whichever server is the primary
        assert f"unix_socket_directories = '{layout.sockets}'" in conf  # pgBackRest's way in
    monkeypatch.delenv("TONGITS_BACKUP_REPO", raising=False)
    text = backup.config(layout)
    assert f"repo1-path={layout.root / 'backup'}" in text and "repo1-retention-full=2" in text
    for i, node in enumerate(topology.PG_NODES, start=1):
        assert f"pg{i}-path={layout.data_dir(node)}" in text
        assert f"pg{i}-port={layout.port_of(node)}" in text
    monkeypatch.setenv("TONGITS_BACKUP_REPO", "s3://studio-backups/tongits/prod")
    monkeypatch.setenv("TONGITS_BACKUP_S3_REGION", "ap-southeast-1")
    text = backup.config(layout)
    assert "repo1-type=s3" in text and "repo1-s3-bucket=studio-backups" in text
    assert "repo1-path=/tongits/prod" in text and "repo1-s3-region=ap-southeast-1" in text
    assert "key" not in text.replace("s3-bucket", "")  # the keys stay in the environment
