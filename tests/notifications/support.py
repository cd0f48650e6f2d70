"""What the notification tests share: a local Web Push service, a browser's subscription keys,
a studio's webhook receiver (each a real HTTP server on 127.0.0.1), and the card scan."""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from games.rules.cards import CODES

#: Every card of the deck in each text form the code knows: "AS", "TD", "10D".
CARD_TEXTS = sorted({*CODES, *("10" + c[1] for c in CODES if c[0] == "T")}, key=len, reverse=True)
CARD_TOKEN = re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(CARD_TEXTS) + r")(?![A-Za-z0-9])")


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# --- a local push service ------------------------------------------------------------------------


class PushService:
    """Records every request; answers the next status of ``answers`` (201 once they run out)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answers: list[int] = []
        self.delay = 0.0  # seconds before each answer (a slow push service)
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # connections kept between pushes, as push services do
            disable_nagle_algorithm = True  # the answer at once, not after the client's ACK

            def do_POST(self) -> None:  # noqa: N802  (http.server's name)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                service.requests.append(
                    {"path": self.path, "headers": dict(self.headers.items()), "body": body}
                )
                code = service.answers.pop(0) if service.answers else 201
                time.sleep(service.delay)
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Server(ThreadingHTTPServer):
    """A push service many senders reach at once."""

    request_queue_size = 256
    daemon_threads = True


class Browser:
    """The receiving end of a subscription: its key pair and auth secret."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.secret = bytes(range(16))
        point = self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        self.p256dh = b64url(point)
        self.auth = b64url(self.secret)

    def read(self, body: bytes) -> dict[str, Any]:
        plain = http_ece.decrypt(
            body, private_key=self.key, auth_secret=self.secret, version="aes128gcm"
        )
        return json.loads(plain)


@dataclass
class Receiver:
    """A studio's webhook receiver on 127.0.0.1: verifies every request with the library and
    records ``(webhook-id, verified, body, headers)``; answers 500 to the first ``fail_first``
    requests and sleeps ``delay`` seconds before answering."""

    secret: str
    fail_first: int = 0
    delay: float = 0.0
    received: list[tuple[str, bool, bytes, dict[str, str]]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/hooks/tongits"

    def ids(self) -> list[str]:
        return [msg_id for msg_id, *_ in self.received]


def receiver_handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            headers = dict(self.headers.items())
            try:
                Webhook(receiver.secret).verify(body, headers)
                verified = True
            except WebhookVerificationError:
                verified = False
            with lock:
                receiver.received.append((headers.get("webhook-id", ""), verified, body, headers))
                failing = len(receiver.received) <= receiver.fail_first
            time.sleep(receiver.delay)
            try:
                self.send_response(500 if failing or not verified else 200)
                self.send_header("content-length", "0")
                self.end_headers()
            except OSError:
                pass  # the sender gave up waiting (the timeout test)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler
