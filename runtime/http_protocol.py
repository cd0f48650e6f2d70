"""The web processes' HTTP/1.1 protocol: uvicorn's httptools one, with an answer's head and the
first part of its body leaving in one write.

uvicorn writes a response's status line and headers as soon as the app starts the response,
then the body in a second write. On a move's answer that is two sends, two TCP segments and two
wake-ups of the client for one small JSON body; each send also holds the process's interpreter
lock for its system call, and the sends were the largest single share of a web process's CPU
time when streams fan moves out (docs/scaling.md). Here the head is held until the first body
write (which always follows: an empty body is written too) and goes with it. An interim
``100 Continue`` is written at once, as uvicorn does.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

_INTERIM = b"HTTP/1.1 1"


class _Joining:
    """A transport that holds a response's first write (its head) and sends it with the next
    one; everything else passes through to ``transport``."""

    __slots__ = ("_held", "_started", "_transport")

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._held: bytes | None = None
        self._started = False

    def write(self, data: bytes) -> None:
        if not self._started and not data.startswith(_INTERIM):
            self._started = True
            self._held = bytes(data)
            return
        if self._held is not None:
            data, self._held = self._held + data, None
        self._transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class OneWriteHttpToolsProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` whose request cycles write through ``_Joining`` (one per request,
    pipelined ones included: each starts here)."""

    def _start_asgi_task(self, cycle: Any, app: Any) -> None:
        cycle.transport = _Joining(cycle.transport)
        super()._start_asgi_task(cycle, app)
