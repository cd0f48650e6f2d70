"""Which PostgreSQL server is the primary, which the standby, which is fenced, kept across
runs in ``var/cluster/state.json``, and the supervisord it all runs under.

A fenced server is an old primary after a failover: it is never started as a primary again
(its data directory holds ``standby.signal``) until ``rejoin`` rewinds it into a standby of the
new primary.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import xmlrpc.client
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from supervisor.xmlrpc import SupervisorTransport

from cluster.topology import PG_NODES, Layout


@dataclass
class State:
    primary: str = PG_NODES[0]
    standby: str | None = PG_NODES[1]
    fenced: list[str] = field(default_factory=list)
    failovers: int = 0

    @classmethod
    def load(cls, layout: Layout) -> State:
        try:
            data = json.loads(layout.state_file.read_text())
        except FileNotFoundError:
            return cls()
        return cls(**data)

    def save(self, layout: Layout) -> None:
        layout.state_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = layout.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2) + "\n")
        os.replace(tmp, layout.state_file)

    def role_of(self, node: str) -> str:
        if node == self.primary:
            return "postgres-primary"
        if node == self.standby:
            return "postgres-standby"
        return "postgres-fenced" if node in self.fenced else "postgres"


@contextlib.contextmanager
def locked(layout: Layout) -> Iterator[None]:
    """Held while the roles change (a failover, a rejoin, the runner's start)."""
    layout.root.mkdir(parents=True, exist_ok=True)
    with (layout.root / "roles.lock").open("wb") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def rpc(layout: Layout) -> Any:
    """supervisord's XML-RPC interface on its unix socket (``supervisor.*`` methods)."""
    transport = SupervisorTransport(None, None, f"unix://{layout.supervisor_socket}")
    return xmlrpc.client.ServerProxy("http://127.0.0.1", transport=transport)


def processes(layout: Layout) -> dict[str, dict[str, Any]]:
    """supervisord's view of each program: state name, pid (0 when not running), times."""
    return {info["name"]: info for info in rpc(layout).supervisor.getAllProcessInfo()}
