"""Stand-ins of FCM and APNs: real servers on 127.0.0.1 that check what the senders send as the
services would, record it with its arrival time (``time.monotonic``), and answer what a test
tells them to.

- ``FcmStandIn``: ``POST /token`` (HTTP/1.1) is the service account's ``token_uri``: it
  verifies the JWT assertion (RS256) against the test service account's public key, its
  ``aud``, ``iss`` and ``scope``, and issues a random bearer. ``POST
  /v1/projects/<id>/messages:send`` (HTTP/2, on a port of its own as FCM is a host of its own)
  checks the bearer is one it issued (401 otherwise) and the message's shape (400 with the
  problems).
- ``ApnsStandIn``: HTTP/2 over TLS (a test CA and a certificate for 127.0.0.1). ``POST
  /3/device/<token>`` verifies the provider JWT's ES256 signature with the team key's public
  half, its ``kid``, ``iss`` and ``iat``, and every header APNs reads. As APNs, it verifies
  each distinct JWT's signature once and remembers the result; its age is checked every time.

Both HTTP/2 servers are h2 driven by asyncio, each on an event loop of its own (a thread).

Both record every request (``problems`` empty when it was right) and answer 200 unless
``answers[token]`` holds what to answer next. ``python -m tests.notifications.standins`` runs
both, with a Web Push service, in a process of their own (``make bench-push``): it prints their
settings as one line of JSON and serves until its standard input closes.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import itertools
import json
import os
import re
import secrets
import socket
import ssl
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
#: The audience of a service account's assertion: Google's token endpoint, whichever
#: ``token_uri`` the assertion is posted to (google-auth signs it so, as Google wants).
GOOGLE_TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token"


@dataclass
class Answer:
    """What to answer one request: a status, a JSON body (or none) and extra headers."""

    status: int
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Received:
    """One request as it arrived: when, to which token, its headers and body, the credential it
    carried and what was wrong with it (empty: nothing)."""

    at: float
    token: str
    headers: dict[str, str]
    body: dict[str, Any]
    credential: str
    problems: list[str]
    status: int = 0


class _Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[Received] = []
        self.answers: dict[str, list[Answer]] = {}

    def next_answer(self, token: str) -> Answer | None:
        with self.lock:
            queue = self.answers.get(token)
            return queue.pop(0) if queue else None

    def to(self, token: str) -> list[Received]:
        with self.lock:
            return [r for r in self.requests if r.token == token]

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()
            self.answers.clear()


class _Server(ThreadingHTTPServer):
    """An HTTP server many pooled connections reach at once."""

    request_queue_size = 256
    daemon_threads = True


class H2Server:
    """An HTTP/2 server on 127.0.0.1 (over TLS when given a context, else with prior
    knowledge, as h2c): each connection an asyncio protocol driving h2, on an event loop of its
    own (a thread). ``handle(arrival, headers, body)`` answers each request (None: never).
    h2 enforces ``max_streams``: a client that opens more at once loses the connection."""

    def __init__(
        self,
        handle: Any,
        *,
        context: ssl.SSLContext | None = None,
        max_streams: int = 100,
    ) -> None:
        self.handle = handle
        self.context = context
        self.max_streams = max_streams
        self.connections = 0
        self.open: set[H2ServerProtocol] = set()
        self.loop = asyncio.new_event_loop()
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=256)
        self.port = self.listener.getsockname()[1]
        started = threading.Event()
        threading.Thread(target=self._run, args=(started,), daemon=True).start()
        started.wait()

    def _run(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(
            self.loop.create_server(self._protocol, sock=self.listener, ssl=self.context)
        )
        started.set()
        self.loop.run_forever()

    def _protocol(self) -> asyncio.Protocol:
        return H2ServerProtocol(self)

    def drop(self) -> None:
        """Close every open connection (as a server restarting would), streams and all."""

        def drop() -> None:
            for protocol in list(self.open):
                if protocol.transport is not None:
                    protocol.transport.close()

        self.loop.call_soon_threadsafe(drop)

    def close(self) -> None:
        def stop() -> None:
            self.server.close()
            self.loop.stop()

        self.loop.call_soon_threadsafe(stop)


class H2ServerProtocol(asyncio.Protocol):
    def __init__(self, server: H2Server) -> None:
        self.server = server
        self.conn = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        )
        self.conn.local_settings = h2.settings.Settings(
            client=False,
            initial_values={h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: server.max_streams},
        )
        self.streams: dict[int, tuple[float, dict[str, str], bytearray]] = {}
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # answers go at once
        self.server.connections += 1
        self.server.open.add(self)
        self.conn.initiate_connection()
        self.transport.write(self.conn.data_to_send())

    def data_received(self, data: bytes) -> None:
        assert self.transport is not None
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError as exc:
            print(f"h2 stand-in: protocol error: {exc!r}", file=sys.stderr, flush=True)
            self.transport.write(self.conn.data_to_send())
            self.transport.close()
            return
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                self.streams[event.stream_id] = (time.monotonic(), dict(event.headers), bytearray())
            elif isinstance(event, h2.events.DataReceived):
                self.streams[event.stream_id][2].extend(event.data)
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                at, headers, body = self.streams.pop(event.stream_id)
                answer = self.server.handle(at, headers, bytes(body))
                if answer is None:  # a server that never answers this one
                    continue
                data_out = json.dumps(answer.body).encode() if answer.body is not None else b""
                response = [(":status", str(answer.status))]
                response += [(k.lower(), v) for k, v in answer.headers.items()]
                if data_out:
                    response.append(("content-type", "application/json"))
                    response.append(("content-length", str(len(data_out))))
                self.conn.send_headers(event.stream_id, response, end_stream=not data_out)
                if data_out:
                    self.conn.send_data(event.stream_id, data_out, end_stream=True)
            elif isinstance(event, h2.events.StreamReset):
                self.streams.pop(event.stream_id, None)
        self.transport.write(self.conn.data_to_send())

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.open.discard(self)


# --- FCM -----------------------------------------------------------------------------------------


class FcmStandIn(_Recorder):
    """Google's OAuth token endpoint and FCM's ``messages:send``, for one service account."""

    def __init__(self, project_id: str = "tongits-test", *, lifetime: int = 3600) -> None:
        super().__init__()
        self.project_id = project_id
        self.lifetime = lifetime  # seconds an issued access token lives
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.client_email = f"push@{project_id}.iam.gserviceaccount.com"
        self.issued: dict[str, float] = {}  # bearer -> when it expires (time.time)
        self.token_requests: list[float] = []  # arrival of each token request
        self.refused_assertions = 0
        self.sent = itertools.count(1)
        # Google's token endpoint and FCM are two hosts: here two ports. FCM speaks HTTP/2
        # (prior knowledge: cleartext on 127.0.0.1) and, as Google's servers, takes 100
        # concurrent streams a connection.
        self.server = _Server(("127.0.0.1", 0), self._handler())
        self.token_uri = f"http://127.0.0.1:{self.server.server_address[1]}/token"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.h2 = H2Server(self._h2_send, max_streams=100)
        self.port = self.h2.port
        self.base = f"http://127.0.0.1:{self.port}"

    def service_account(self, path: Path | str) -> str:
        """Write the service account's JSON (as the Firebase console gives it) to ``path``."""
        pem = self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        info = {
            "type": "service_account",
            "project_id": self.project_id,
            "private_key_id": secrets.token_hex(20),
            "private_key": pem,
            "client_email": self.client_email,
            "client_id": "1234567890",
            "auth_uri": self.token_uri.removesuffix("/token") + "/auth",
            "token_uri": self.token_uri,
        }
        Path(path).write_text(json.dumps(info))
        return str(path)

    def revoke(self) -> None:
        """Every issued bearer stops working (as one past its expiry would): FCM answers 401."""
        with self.lock:
            self.issued.clear()

    @property
    def connections(self) -> int:
        """HTTP/2 connections opened to ``messages:send``."""
        return self.h2.connections

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.h2.close()

    def _token(self, form: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.token_requests.append(time.monotonic())
        assertion = (form.get("assertion") or [""])[0]
        try:
            if (form.get("grant_type") or [""])[0] != JWT_BEARER:
                raise jwt.InvalidTokenError("grant_type")
            claims = jwt.decode(
                assertion,
                self.key.public_key(),
                algorithms=["RS256"],
                audience=GOOGLE_TOKEN_AUDIENCE,
                issuer=self.client_email,
                options={"require": ["exp", "iat", "iss", "aud"]},
            )
            if claims.get("scope") != FCM_SCOPE:
                raise jwt.InvalidTokenError("scope")
        except jwt.InvalidTokenError as exc:
            with self.lock:
                self.refused_assertions += 1
            return 400, {"error": "invalid_grant", "error_description": str(exc)}
        bearer = "ya29." + secrets.token_urlsafe(24)
        with self.lock:
            self.issued[bearer] = time.time() + self.lifetime
        return 200, {"access_token": bearer, "expires_in": self.lifetime, "token_type": "Bearer"}

    def _h2_send(self, at: float, headers: dict[str, str], raw: bytes) -> Answer:
        if headers.get(":method") != "POST":
            return Answer(405, {"error": {"code": 405, "status": "METHOD_NOT_ALLOWED"}})
        return self._send(headers.get(":path", ""), headers, raw, at)

    def _send(self, path: str, headers: dict[str, str], raw: bytes, at: float) -> Answer:
        bearer = headers.get("authorization", "").removeprefix("Bearer ")
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        message = body.get("message") if isinstance(body, dict) else None
        token = message.get("token", "") if isinstance(message, dict) else ""
        problems = [] if path == f"/v1/projects/{self.project_id}/messages:send" else ["path"]
        problems += fcm_shape_problems(body)
        with self.lock:
            authorized = self.issued.get(bearer, 0) > time.time()
        received = Received(at, str(token), headers, body, bearer, problems)
        if not authorized:
            answer = Answer(401, {"error": {"code": 401, "status": "UNAUTHENTICATED"}})
        elif problems:
            answer = Answer(
                400,
                {
                    "error": {
                        "code": 400,
                        "status": "INVALID_ARGUMENT",
                        "message": "; ".join(problems),
                    }
                },
            )
        else:
            answer = self.next_answer(received.token) or Answer(
                200, {"name": f"projects/{self.project_id}/messages/{next(self.sent)}"}
            )
        received.status = answer.status
        with self.lock:
            self.requests.append(received)
        return answer

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # kept-alive connections, as Google's
            # The status line and headers, then the body, without waiting for the client's
            # ACK of the first (Nagle's algorithm, against its delayed ACK: 40 ms a request).
            disable_nagle_algorithm = True

            def do_POST(self) -> None:  # noqa: N802  (http.server's name)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path == "/token":
                    status, body = standin._token(parse_qs(raw.decode()))
                    answer = Answer(status, body)
                else:
                    answer = Answer(404, {"error": "not the token endpoint"})
                data = json.dumps(answer.body or {}).encode()
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


def fcm_shape_problems(body: Any) -> list[str]:
    """What is wrong with a ``messages:send`` body, as FCM v1 reads it (empty: nothing)."""
    if not isinstance(body, dict) or set(body) - {"message", "validate_only"}:
        return ["body: only message and validate_only"]
    message = body.get("message")
    if not isinstance(message, dict):
        return ["message: an object"]
    problems = []
    if set(message) - {"token", "notification", "data", "android", "apns", "webpush"}:
        problems.append(f"message: unknown fields {sorted(set(message))}")
    if not isinstance(message.get("token"), str) or not message["token"]:
        problems.append("message.token: a string")
    notification = message.get("notification")
    if (
        not isinstance(notification, dict)
        or set(notification) != {"title", "body"}
        or not all(isinstance(v, str) and v for v in notification.values())
    ):
        problems.append("message.notification: title and body, strings")
    data = message.get("data", {})
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        problems.append("message.data: strings only")
    android = message.get("android", {})
    if not isinstance(android, dict) or set(android) - {"collapse_key", "ttl", "priority"}:
        problems.append("message.android: collapse_key, ttl, priority")
    else:
        if "ttl" in android and not re.fullmatch(r"\d+(\.\d{1,9})?s", str(android["ttl"])):
            problems.append("message.android.ttl: seconds with an s")
        if android.get("priority", "normal") not in ("high", "normal"):
            problems.append("message.android.priority: high or normal")
        if not isinstance(android.get("collapse_key", ""), str):
            problems.append("message.android.collapse_key: a string")
    return problems


def fcm_error(status: int, code: str, *, token_field: bool = False) -> dict[str, Any]:
    """An FCM v1 error body: ``code`` as the FcmError's errorCode (and the status for 4xx)."""
    details: list[dict[str, Any]] = [
        {"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": code}
    ]
    if token_field:
        details.append(
            {
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [
                    {"field": "message.token", "description": "Invalid registration token"}
                ],
            }
        )
    return {"error": {"code": status, "message": code, "status": code, "details": details}}


# --- APNs ----------------------------------------------------------------------------------------


def make_pki(directory: Path) -> tuple[Path, ssl.SSLContext]:
    """A test CA (its certificate written to ``directory/ca.pem``) and a server context whose
    certificate, for 127.0.0.1, it signed."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Tongits test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_file = directory / "ca.pem"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file, key_file = directory / "server.pem", directory / "server.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    context.set_alpn_protocols(["h2"])
    return ca_file, context


class ApnsStandIn(_Recorder):
    """APNs' ``/3/device/<token>`` over HTTP/2 and TLS, for one team key and one app."""

    def __init__(
        self,
        directory: Path,
        *,
        topic: str = "ph.tongits.app",
        team_id: str = "TEAM123456",
        key_id: str = "KEY1234567",
    ) -> None:
        super().__init__()
        self.topic, self.team_id, self.key_id = topic, team_id, key_id
        self.team_key = ec.generate_private_key(ec.SECP256R1())  # the .p8 key Apple would hand out
        self.expired: set[str] = set()  # provider JWTs to refuse as ExpiredProviderToken
        # As APNs, each distinct provider JWT's signature is verified once and remembered (its
        # age is checked on every request).
        self.verified: dict[str, tuple[str, int]] = {}
        self.ca_file, self.context = make_pki(directory)
        self.h2 = H2Server(self._answer, context=self.context, max_streams=1000)
        self.port = self.h2.port
        self.url = f"https://127.0.0.1:{self.port}"

    @property
    def connections(self) -> int:
        """HTTP/2 connections opened to ``/3/device``."""
        return self.h2.connections

    def key_file(self, path: Path | str) -> str:
        """Write the team key as Apple hands it out (a ``.p8``: PKCS#8 PEM) to ``path``."""
        Path(path).write_bytes(
            self.team_key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        return str(path)

    def jwts(self) -> list[str]:
        """The distinct provider JWTs seen, in order of first use."""
        with self.lock:
            return list(dict.fromkeys(r.credential for r in self.requests))

    def close(self) -> None:
        self.h2.close()

    def _answer(self, at: float, headers: dict[str, str], raw: bytes) -> Answer:
        path = headers.get(":path", "")
        match = re.fullmatch(r"/3/device/([0-9a-fA-F]{64,200})", path)
        token = match.group(1) if match else ""
        credential = headers.get("authorization", "").removeprefix("bearer ")
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        problems = [] if match else [f"path {path!r}"]
        if headers.get(":method") != "POST" or headers.get(":scheme") != "https":
            problems.append("method or scheme")
        signed = self._provider_problem(credential)
        problems += [signed] if signed else []
        problems += apns_shape_problems(headers, raw, body, self.topic)
        received = Received(at, token, headers, body, credential, problems)
        if signed:
            answer = Answer(403, {"reason": "InvalidProviderToken"})
        elif problems:
            answer = Answer(400, {"reason": "BadRequest: " + "; ".join(problems)[:200]})
        elif credential in self.expired:
            answer = Answer(403, {"reason": "ExpiredProviderToken"})
        else:
            answer = self.next_answer(token) or Answer(200)
        received.status = answer.status
        with self.lock:
            self.requests.append(received)
        return Answer(answer.status, answer.body, {"apns-id": str(uuid.uuid4()), **answer.headers})

    def _provider_problem(self, credential: str) -> str:
        """What is wrong with the provider JWT ("" when APNs would take it)."""
        known = self.verified.get(credential)
        if known is None:
            known = self.verified[credential] = self._verify(credential)
        problem, issued = known
        if not problem and not time.time() - 3600 < issued <= time.time() + 60:
            return "provider token: iat older than an hour"
        return problem

    def _verify(self, credential: str) -> tuple[str, int]:
        """The JWT's signature, ``kid``, ``alg`` and ``iss`` checked: (what is wrong or "", its
        ``iat``)."""
        try:
            header = jwt.get_unverified_header(credential)
            claims = jwt.decode(
                credential,
                self.team_key.public_key(),
                algorithms=["ES256"],
                options={"require": ["iss", "iat"], "verify_iat": True},
            )
        except jwt.InvalidTokenError as exc:
            return f"provider token: {exc}", 0
        if header.get("kid") != self.key_id or header.get("alg") != "ES256":
            return "provider token: kid or alg", 0
        if claims.get("iss") != self.team_id:
            return "provider token: iss", 0
        return "", int(claims["iat"])


def apns_shape_problems(headers: dict[str, str], raw: bytes, body: Any, topic: str) -> list[str]:
    """What is wrong with an APNs request's headers and payload (empty: nothing)."""
    problems = []
    if headers.get("apns-topic") != topic:
        problems.append("apns-topic")
    if headers.get("apns-push-type") != "alert":
        problems.append("apns-push-type")
    kind = body.get("kind") if isinstance(body, dict) else None
    if headers.get("apns-priority") != ("10" if kind == "your_turn" else "5"):
        problems.append("apns-priority: 10 for a turn, else 5")
    expiration = headers.get("apns-expiration", "")
    if not expiration.isdigit() or int(expiration) <= time.time():
        problems.append("apns-expiration: a time to come")
    if len(headers.get("apns-collapse-id", "").encode()) > 64:
        problems.append("apns-collapse-id: at most 64 bytes")
    if len(raw) > 4096:
        problems.append("payload: at most 4 KB")
    aps = body.get("aps") if isinstance(body, dict) else None
    alert = aps.get("alert") if isinstance(aps, dict) else None
    if not isinstance(alert, dict) or not all(
        isinstance(alert.get(k), str) and alert[k] for k in ("title", "body")
    ):
        problems.append("aps.alert: title and body")
    return problems


# --- the three in a process of their own (make bench-push) -----------------------------------


def main() -> int:
    """Serve a Web Push service, FCM and APNs until standard input closes; print, as one JSON
    line, the settings that point a server at them."""
    from tests.notifications.support import PushService

    directory = Path(tempfile.mkdtemp(prefix="tongits-standins-"))
    webpush = PushService()
    fcm = FcmStandIn()
    apns = ApnsStandIn(directory)
    settings = {
        "webpush_port": webpush.port,
        "TONGITS_FCM_CREDENTIALS": fcm.service_account(directory / "service-account.json"),
        "TONGITS_FCM_ENDPOINT": fcm.base,
        "TONGITS_APNS_KEY_FILE": apns.key_file(directory / "AuthKey.p8"),
        "TONGITS_APNS_KEY_ID": apns.key_id,
        "TONGITS_APNS_TEAM_ID": apns.team_id,
        "TONGITS_APNS_TOPIC": apns.topic,
        "TONGITS_APNS_HOST": apns.url,
        "TONGITS_APNS_CA_FILE": str(apns.ca_file),
    }
    print(json.dumps(settings), flush=True)
    for line in sys.stdin:  # "counts": how many each has answered, with problems or not
        if line.strip() == "counts":
            counts = {
                "webpush": len(webpush.requests),
                "fcm": len(fcm.requests),
                "fcm_problems": sum(bool(r.problems) for r in fcm.requests),
                "fcm_tokens": len(fcm.token_requests),
                "apns": len(apns.requests),
                "apns_problems": sum(bool(r.problems) for r in apns.requests),
                "apns_connections": apns.connections,
            }
            print(json.dumps(counts), flush=True)
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
