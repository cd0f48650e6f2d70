"""The web processes' worker class: uvicorn's, with a listening socket of its own per process.

gunicorn's workers share the arbiter's listening socket, and an event loop accepts every
connection waiting when it wakes (asyncio and uvloop accept up to the backlog at once), so under
a burst one process takes most keep-alive connections and keeps them: measured, one of three
web processes did 90 % of the work while another idled. With ``--reuse-port`` on the arbiter's
socket, each worker also binds its own ``SO_REUSEPORT`` socket to the same address, and the
kernel spreads new connections across the sockets by their addresses. The shared socket is
still served too, so nothing that reaches it waits.
"""

from __future__ import annotations

import socket
from typing import Any

from uvicorn_worker import UvicornWorker


def own_socket(shared: Any, backlog: int) -> socket.socket | None:
    """A listening socket bound like ``shared``, with SO_REUSEPORT (None if the OS refuses)."""
    family = shared.family
    if family not in (socket.AF_INET, socket.AF_INET6) or not hasattr(socket, "SO_REUSEPORT"):
        return None
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(shared.getsockname()[:2])
        sock.listen(backlog)
        sock.setblocking(False)
    except OSError:
        sock.close()
        return None
    return sock


class BalancedUvicornWorker(UvicornWorker):
    """``UvicornWorker`` serving its own SO_REUSEPORT socket beside the shared one."""

    def init_process(self) -> None:
        if self.cfg.reuse_port:
            own = [own_socket(s, self.cfg.backlog) for s in self.sockets]
            self.sockets = [*self.sockets, *(s for s in own if s is not None)]
        super().init_process()
