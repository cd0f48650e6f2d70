"""Django's WSGI handler served from an ASGI event loop in one hop.

A request's body is read in the event loop first (never more than ``TONGITS_MAX_BODY_BYTES``
+ 1 bytes), then one thread of a pool runs the whole WSGI call and hands back status, headers
and the joined body, which the loop sends. One hop into the pool and one back, where ``a2wsgi``
makes several (reading the body, starting the response and each chunk each cross back to the
loop and wait for it): under load every crossing waits for the GIL, and those waits were most of
a REST request's time (docs/scaling.md, "The web process's choices"). The REST API answers with
small JSON bodies and the browser table's static files are small, so holding a response whole
costs little.

A live stream (a ``StreamingHttpResponse`` over an async iterator) is checked the same way, in
one hop, where Django's part of the request also ends (the response is closed: its closers and
``request_finished`` run), then fed by the event loop until it ends or the client goes away.
Django's own ASGI handler would run its middleware in a thread of the request's own (asgiref's
thread-sensitive context), so every open stream held an idle thread for as long as it stayed
open.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from a2wsgi.wsgi import build_environ  # its scope-to-environ, as its own bridge builds it

from runtime import shortcuts as shortcut_runner

Response = tuple[int, list[tuple[bytes, bytes]], Any]


class OneHopWSGI:
    """An ASGI app (HTTP only) running ``app``, a WSGI callable, in a pool of ``workers``;
    ``shortcuts`` (``runtime.shortcuts``) are tried first, in the same thread."""

    def __init__(
        self,
        app: Callable[..., Iterable[bytes]],
        workers: int,
        max_body: int,
        shortcuts: Iterable[shortcut_runner.Shortcut] = (),
    ) -> None:
        self.app = app
        self.max_body = max_body
        self.shortcuts = tuple(shortcuts)
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="wsgi")

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = await self._body(scope, receive)
        if body is None:  # the client went away before its body came
            return
        loop = asyncio.get_running_loop()
        status, headers, content = await loop.run_in_executor(
            self.executor, self._call, scope, body
        )
        await send({"type": "http.response.start", "status": status, "headers": headers})
        if isinstance(content, bytes):
            await send({"type": "http.response.body", "body": content})
        else:
            await self._stream(content, receive, send)

    async def _stream(self, response: Any, receive: Any, send: Any) -> None:
        """A response over an async iterator (a live stream), fed by the loop chunk by chunk
        until it ends or the client goes away (Django closed it already: ``_call``)."""

        async def pump() -> None:
            async for chunk in response.streaming_content:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})

        async def gone() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        streaming, watching = asyncio.ensure_future(pump()), asyncio.ensure_future(gone())
        try:
            await asyncio.wait((streaming, watching), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (streaming, watching):
                task.cancel()  # the stream's own clean-up runs as the generator unwinds
            results = await asyncio.gather(streaming, watching, return_exceptions=True)
        if isinstance(results[0], Exception):
            raise results[0]

    async def _body(self, scope: dict[str, Any], receive: Any) -> bytes | None:
        """The request body, cut at the limit + 1 byte; none is read when the declared length
        is over the limit (RequestLimitsMiddleware answers 413 from the header alone)."""
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    if int(value) > self.max_body:
                        return b""
                except ValueError:
                    return b""  # the middleware answers 400 for the header
        chunks = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunks += message.get("body", b"")
            if len(chunks) > self.max_body:
                return bytes(chunks[: self.max_body + 1])
            if not message.get("more_body", False):
                return bytes(chunks)

    def _call(self, scope: dict[str, Any], body: bytes) -> Response:
        for shortcut in self.shortcuts:
            match = shortcut.matches(scope)
            if match is not None:
                answered = shortcut_runner.attempt(shortcut, match, scope, body)
                if answered is not None:
                    return answered
        environ = build_environ(scope, io.BytesIO(body))  # type: ignore[arg-type]
        started: list[Any] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None):
            started[:] = [status, headers]
            return lambda data: None  # the legacy write(); Django never calls it

        result = self.app(environ, start_response)
        status, headers = started
        if getattr(result, "is_async", False):  # a live stream: the loop feeds it
            # Django's part ends here (its closers, request_finished and the thread's database
            # connection): the stream needs none of it, and would keep the request alive.
            result.close()
            return self._status_and_headers(status, headers) + (result,)
        try:
            content = b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        return self._status_and_headers(status, headers) + (content,)

    @staticmethod
    def _status_and_headers(
        status: str, headers: list[tuple[str, str]]
    ) -> tuple[int, list[tuple[bytes, bytes]]]:
        return (
            int(status.split(" ", 1)[0]),
            [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers],
        )
