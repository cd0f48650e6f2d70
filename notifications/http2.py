"""An HTTP/2 client for the push services: many requests as concurrent streams of one
connection, driven by h2's protocol state machine on an asyncio event loop.

Why not httpx: APNs and FCM want a burst sent as streams of one connection, and httpx's HTTP/2
(httpcore's locks, events and per-request objects around h2) cost about a millisecond of CPU a
request, several times what h2 itself costs; here a request is h2's frames, a future and a
timer. Everything HTTP/2 is h2's (framing, HPACK, flow control, settings); this module only
moves its bytes and keeps each stream's answer.

What it honours: the server's ``MAX_CONCURRENT_STREAMS`` (APNs starts low and raises it; a
request waits for a free stream), flow control of request bodies, ``GOAWAY`` (no new stream on
that connection; the streams it did not take fail, to be retried), a lost connection (its
streams fail; the next request opens a new one). ``https`` URLs speak TLS with ALPN ``h2``;
``http`` ones HTTP/2 with prior knowledge (a stand-in on 127.0.0.1).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections import deque
from dataclasses import dataclass
from urllib.parse import urlsplit

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings


class Error(Exception):
    """No answer: the connection could not be made, was lost, or the stream was refused."""


@dataclass(frozen=True)
class Response:
    """A stream's answer: its status, headers (names in lower case) and body."""

    status: int
    headers: dict[str, str]
    body: bytes


class _Stream:
    __slots__ = ("future", "headers", "body", "timer")

    def __init__(self, future: asyncio.Future[Response]) -> None:
        self.future = future
        self.headers: dict[str, str] = {}
        self.body = bytearray()
        self.timer: asyncio.TimerHandle | None = None


class _Connection(asyncio.Protocol):
    """One HTTP/2 connection: h2's state, the open streams, the request bodies waiting for
    flow-control credit, and the requests waiting for a free stream."""

    def __init__(self, limit: int) -> None:
        # The request headers are this module's callers' own (lower-case names; values from the
        # settings and from device tokens checked at registration): h2's checking and
        # normalising of them would be a third of a request's cost.
        self.h2 = h2.connection.H2Connection(
            h2.config.H2Configuration(
                client_side=True,
                header_encoding="utf-8",
                validate_outbound_headers=False,
                normalize_outbound_headers=False,
            )
        )
        self.transport: asyncio.Transport | None = None
        self.streams: dict[int, _Stream] = {}
        self.unsent: dict[int, memoryview] = {}
        self.limit = limit  # our own bound of concurrent streams
        self.remote_limit = (
            100  # until the server's SETTINGS say otherwise (RFC 9113 advises >= 100)
        )
        self.waiting: deque[asyncio.Future[None]] = deque()
        self.usable = True  # False once the server sent GOAWAY or the connection is gone
        self.lost: Exception | None = None
        self.flushing = False  # a flush is scheduled for the end of this loop iteration
        # The server's first SETTINGS (its limits) arrived: no stream is opened before, so a
        # server that allows fewer than 100 at once never sees more.
        self.settled: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    # -- asyncio.Protocol --

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.h2.initiate_connection()
        self.flush()

    def data_received(self, data: bytes) -> None:
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError as exc:
            self.flush()
            self._fail_all(Error(f"protocol error ({type(exc).__name__})"))
            if self.transport is not None:
                self.transport.close()
            return
        for event in events:
            if isinstance(event, h2.events.ResponseReceived):
                stream = self.streams.get(event.stream_id)
                if stream is not None:
                    stream.headers = dict(event.headers)  # type: ignore[arg-type]
            elif isinstance(event, h2.events.DataReceived):
                stream = self.streams.get(event.stream_id)
                if stream is not None:
                    stream.body += event.data
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                self._finish(event.stream_id)
            elif isinstance(event, h2.events.StreamReset):
                self._fail(event.stream_id, Error(f"stream reset ({event.error_code!r})"))
            elif isinstance(event, h2.events.WindowUpdated):
                self._send_unsent()
            elif isinstance(event, h2.events.RemoteSettingsChanged):
                setting = event.changed_settings.get(
                    h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS
                )
                if setting is not None:
                    self.remote_limit = setting.new_value
                    self._wake()
                if not self.settled.done():
                    self.settled.set_result(None)
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.usable = False  # GOAWAY: the streams it did not take will never be answered
                last = event.last_stream_id or 0
                for stream_id in [s for s in self.streams if s > last]:
                    self._fail(stream_id, Error("the server closed the connection (GOAWAY)"))
                self._wake()
        self.flush()

    def connection_lost(self, exc: Exception | None) -> None:
        self.usable = False
        self.lost = Error(f"connection lost ({type(exc).__name__ if exc else 'closed'})")
        if not self.settled.done():
            self.settled.set_exception(self.lost)
        self._fail_all(self.lost)

    # -- requests --

    async def request(
        self, path: str, headers: list[tuple[str, str]], body: bytes, timeout: float
    ) -> Response:
        while len(self.streams) >= min(self.limit, self.remote_limit) and self.usable:
            waiter = asyncio.get_running_loop().create_future()
            self.waiting.append(waiter)
            await waiter
        if not self.usable:
            raise self.lost or Error("the server closed the connection (GOAWAY)")
        stream_id = self.h2.get_next_available_stream_id()
        loop = asyncio.get_running_loop()
        stream = _Stream(loop.create_future())
        self.streams[stream_id] = stream
        self.h2.send_headers(stream_id, headers, end_stream=not body)
        if body:
            self.unsent[stream_id] = memoryview(body)
            self._send_unsent()
        if not self.flushing:  # the streams a batch opens together leave in one write
            self.flushing = True
            loop.call_soon(self.flush)
        stream.timer = loop.call_later(timeout, self._time_out, stream_id)
        return await stream.future

    def _send_unsent(self) -> None:
        """Send what flow control allows of the bodies not yet sent."""
        for stream_id in list(self.unsent):
            data = self.unsent[stream_id]
            try:
                while data:
                    room = min(
                        self.h2.local_flow_control_window(stream_id),
                        self.h2.max_outbound_frame_size,
                    )
                    if room <= 0:
                        break
                    chunk, data = data[:room], data[room:]
                    self.h2.send_data(stream_id, chunk.tobytes(), end_stream=not data)
            except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
                data = memoryview(b"")  # the stream is gone: its answer or its reset says why
            if data:
                self.unsent[stream_id] = data
            else:
                del self.unsent[stream_id]

    def _time_out(self, stream_id: int) -> None:
        if stream_id in self.streams:
            with contextlib.suppress(h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
                self.h2.reset_stream(stream_id, h2.errors.ErrorCodes.CANCEL)
            self._fail(stream_id, TimeoutError())
            self.flush()

    def _finish(self, stream_id: int) -> None:
        stream = self._pop(stream_id)
        if stream is not None and not stream.future.done():
            headers = stream.headers
            status = int(headers.get(":status", "0"))
            stream.future.set_result(Response(status, headers, bytes(stream.body)))

    def _fail(self, stream_id: int, exc: BaseException) -> None:
        stream = self._pop(stream_id)
        if stream is not None and not stream.future.done():
            stream.future.set_exception(exc)

    def _fail_all(self, exc: BaseException) -> None:
        for stream_id in list(self.streams):
            self._fail(stream_id, exc)
        self._wake()

    def _pop(self, stream_id: int) -> _Stream | None:
        stream = self.streams.pop(stream_id, None)
        self.unsent.pop(stream_id, None)
        if stream is not None and stream.timer is not None:
            stream.timer.cancel()
        self._wake()
        return stream

    def _wake(self) -> None:
        """Let waiting requests go, as many as there are free streams (all when unusable)."""
        free = min(self.limit, self.remote_limit) - len(self.streams)
        while self.waiting and (free > 0 or not self.usable):
            waiter = self.waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                free -= 1

    def flush(self) -> None:
        self.flushing = False
        data = self.h2.data_to_send()
        if data and self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.h2.close_connection()
            self.flush()
            self.transport.close()


class Client:
    """Requests to one origin over one HTTP/2 connection at a time (opened when first needed,
    opened anew when lost or closed by the server), at most ``streams`` at once. Used from one
    event loop."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float,
        streams: int = 100,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.authority = parts.netloc
        self.scheme = parts.scheme
        self.ssl: ssl.SSLContext | None = None
        if parts.scheme == "https":
            self.ssl = ssl_context or ssl.create_default_context()
            self.ssl.set_alpn_protocols(["h2"])
        self.timeout = timeout
        self.streams = max(1, streams)
        self.connection: _Connection | None = None
        self.connections = 0  # connections opened (for tests and the bench)
        self.connecting: asyncio.Lock | None = None

    async def _connection(self) -> _Connection:
        if self.connection is not None and self.connection.usable:
            return self.connection
        if self.connecting is None:
            self.connecting = asyncio.Lock()
        async with self.connecting:
            if self.connection is not None and self.connection.usable:
                return self.connection
            loop = asyncio.get_running_loop()
            try:
                transport, connection = await asyncio.wait_for(
                    loop.create_connection(
                        lambda: _Connection(self.streams),
                        self.host,
                        self.port,
                        ssl=self.ssl,
                        server_hostname=self.host if self.ssl else None,
                    ),
                    self.timeout,
                )
            except (OSError, ssl.SSLError) as exc:  # TimeoutError is an OSError
                raise Error(f"cannot connect ({type(exc).__name__})") from exc
            if self.ssl is not None:
                ssl_object = transport.get_extra_info("ssl_object")
                if ssl_object is None or ssl_object.selected_alpn_protocol() != "h2":
                    transport.close()
                    raise Error("the server does not speak HTTP/2 (ALPN)")
            try:
                await asyncio.wait_for(asyncio.shield(connection.settled), self.timeout)
            except TimeoutError as exc:
                transport.close()
                raise Error("the server sent no HTTP/2 settings") from exc
            self.connection = connection
            self.connections += 1
            return connection

    async def post(self, path: str, headers: list[tuple[str, str]], body: bytes) -> Response:
        """POST ``body`` to ``path`` with ``headers`` (lower-case names, beside the pseudo
        headers this adds); raises ``Error`` when nothing was answered, ``TimeoutError`` when
        no answer came within the timeout."""
        connection = await self._connection()
        request = [
            (":method", "POST"),
            (":scheme", self.scheme),
            (":authority", self.authority),
            (":path", path),
            *headers,
            ("content-length", str(len(body))),
        ]
        return await connection.request(path, request, body, self.timeout)

    async def aclose(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None
