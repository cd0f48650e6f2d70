"""The web processes' gunicorn worker class and arbiter hook: a listening socket per process.

An event loop accepts every connection waiting when it wakes (uvloop and asyncio accept up to
the backlog at once), so on one socket shared by all processes a burst's keep-alive connections
pile onto one process and stay there (docs/scaling.md). With ``--reuse-port`` gunicorn gives
each worker, after the fork, ``SO_REUSEPORT`` sockets of its own bound to the configured
addresses, and the kernel spreads new connections across the listening sockets by their
addresses; the arbiter itself then binds nothing, and its "Listening at:" line names nothing.

``reserve_addresses`` (gunicorn's ``on_starting``, set by ``runtime.gunicorn_config``) binds
each TCP address in the arbiter with ``SO_REUSEPORT`` and never listens on it: the arbiter holds
the addresses while workers come and go, and names them in its "Listening at:" line. A socket
that is bound but not listening takes no connections, so every connection still reaches a
worker's own socket (one the arbiter listened on would take a share that whichever worker woke
first would drain). Without the hook gunicorn behaves as it does alone.

``BalancedUvicornWorker`` hands uvicorn the ``socket.socket`` inside each of gunicorn's socket
wrappers: once libuv has closed a served socket's descriptor, uvloop detaches a plain socket but
calls a wrapper's ``close()``, which fails on the closed descriptor and logs "Bad file
descriptor" from every worker at every stop. It also stops when its arbiter dies
(``runtime.parent_watch``): an arbiter killed outright cannot stop it.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from gunicorn import sock as gunicorn_sock
from gunicorn import systemd, util
from uvicorn_worker import UvicornWorker

from runtime import parent_watch
from runtime.http_protocol import OneWriteHttpToolsProtocol


class _Reserved:
    """gunicorn's TCP socket class, bound and never listening (see the module's docstring)."""

    def set_options(self, sock: socket.socket, bound: bool = False) -> socket.socket:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        if not bound:
            self.bind(sock)  # type: ignore[attr-defined]  (gunicorn's socket class)
        sock.setblocking(False)
        sock.set_inheritable(True)  # handed on to a re-executed arbiter (USR2), as gunicorn does
        return sock


class ReservedTCPSocket(_Reserved, gunicorn_sock.TCPSocket):
    pass


class ReservedTCP6Socket(_Reserved, gunicorn_sock.TCP6Socket):
    pass


def reserve_addresses(arbiter: Any) -> None:
    """Bind the configured TCP addresses in the arbiter when ``--reuse-port`` would leave it
    none; on a re-exec (USR2), adopt the ones the old arbiter hands down."""
    cfg = arbiter.cfg
    if arbiter.LISTENERS or not (cfg.reuse_port and hasattr(socket, "SO_REUSEPORT")):
        return
    if systemd.listen_fds(unset_environment=False):
        return  # systemd's sockets: gunicorn's own handling
    handed = os.environ.pop("GUNICORN_FD", "") if arbiter.master_pid else ""
    reserved: list[Any] = []
    try:
        if handed:
            for fd in (int(fd) for fd in handed.split(",")):
                probe = socket.socket(fileno=fd)  # the family, read from the descriptor
                cls = ReservedTCP6Socket if probe.family == socket.AF_INET6 else ReservedTCPSocket
                probe.detach()
                reserved.append(cls(None, cfg, arbiter.log, fd=fd))
        else:
            for address in cfg.address:
                if not isinstance(address, tuple):
                    continue  # a unix socket or a file descriptor: gunicorn's own handling
                cls = ReservedTCP6Socket if util.is_ipv6(address[0]) else ReservedTCPSocket
                reserved.append(cls(address, cfg, arbiter.log))
    except OSError as error:
        for listener in reserved:
            listener.close()
        arbiter.log.error("Cannot hold the listening addresses in the arbiter: %s", error)
        return
    arbiter.LISTENERS = reserved


def plain(listener: Any) -> Any:
    """The ``socket.socket`` inside a gunicorn socket wrapper (anything else as it is)."""
    inner = getattr(listener, "sock", None)
    return inner if isinstance(inner, socket.socket) else listener


class BalancedUvicornWorker(UvicornWorker):
    """``UvicornWorker`` serving the sockets gunicorn gives it (its own with ``--reuse-port``)
    as plain sockets, with an answer's head and body in one write (``runtime.http_protocol``),
    stopping when its arbiter dies (``runtime.parent_watch``)."""

    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, "http": OneWriteHttpToolsProtocol}

    def init_process(self) -> None:
        self.sockets = [plain(s) for s in self.sockets]
        super().init_process()

    def init_signals(self) -> None:
        super().init_signals()
        # Only now: until the reset above, a SIGTERM would reach the arbiter's inherited handler.
        parent_watch.watch(self.ppid, self.cfg.graceful_timeout, self.log)
