"""Apple Push Notification service: one push to one iOS device token, over HTTP/2.

Why this shape: APNs wants many streams over few connections, so one process keeps one HTTP/2
connection (``notifications.http2``, h2 on asyncio) in an event loop of its own; the pushes of
a batch (``notifications.push.send_many``) are streams of it, opened together.
Authentication is token-based: an ES256 JWT signed with the team's ``.p8`` key (header ``kid``,
claims ``iss`` = team id and ``iat``), made with PyJWT and reused for ``REUSE_SECONDS`` (Apple
refuses one older than an hour and one renewed more often than every 20 minutes). An
``ExpiredProviderToken`` answer replaces it once, however many streams saw it refused
(``provider_token(stale=...)``).

This module knows nothing of Django, the outbox or the devices' table: it is given a ``Config``,
a device token, headers and a payload, and answers a ``Reply`` that ``notifications.push`` turns
into a delivery's outcome (docs/notifications.md, "What each answer does").
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any

import jwt
import orjson
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from notifications import http2

#: The hosts ``TONGITS_APNS_HOST`` may name by a word; anything else is a URL (a stand-in).
HOSTS = {
    "production": "https://api.push.apple.com",
    "sandbox": "https://api.sandbox.push.apple.com",
}
#: How long one provider JWT is used: between Apple's 20 minutes (no more often) and 60 (no
#: older), with room on both sides.
REUSE_SECONDS = 40 * 60
#: Apple's reasons that mean the device token will never be served again for this app.
GONE_REASONS = frozenset({"Unregistered", "BadDeviceToken", "DeviceTokenNotForTopic"})


@dataclass(frozen=True)
class Config:
    """The team's key and where to send: every setting APNs needs."""

    key_file: str
    key_id: str
    team_id: str
    topic: str  # the app's bundle id
    host: str = "production"
    ca_file: str = ""
    timeout: float = 10.0
    streams: int = 100  # concurrent streams one batch opens on the connection

    @property
    def base_url(self) -> str:
        return HOSTS.get(self.host, self.host).rstrip("/")


@dataclass(frozen=True)
class Reply:
    """What APNs answered (``status`` None: no answer, ``error`` says why)."""

    status: int | None
    reason: str = ""  # Apple's ``reason`` (BadDeviceToken, ExpiredProviderToken, ...)
    retry_after: float | None = None
    error: str = ""
    milliseconds: int = 0  # from the first try's start to the last answer


class ConfigError(ValueError):
    """The key or a setting cannot be used."""


def read_key(path: str) -> ec.EllipticCurvePrivateKey:
    """The team's ``.p8`` key (PKCS#8 PEM of a P-256 key), checked."""
    try:
        with open(path, "rb") as handle:
            key = serialization.load_pem_private_key(handle.read(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise ConfigError(f"cannot read the APNs key {path!r}: {exc}") from exc
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        raise ConfigError(f"the APNs key {path!r} is not a P-256 (ES256) key")
    return key


def check(config: Config) -> None:
    """Raise ``ConfigError`` for a configuration that cannot send (system checks call it)."""
    read_key(config.key_file)
    for name in ("key_id", "team_id", "topic"):
        if not getattr(config, name).strip():
            raise ConfigError(f"TONGITS_APNS_{name.upper()} is empty")
    if not config.base_url.startswith("https://"):
        raise ConfigError(
            f"TONGITS_APNS_HOST must be production, sandbox or an https URL, not {config.host!r}"
        )
    if config.ca_file:
        try:
            ssl.create_default_context(cafile=config.ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(
                f"cannot read TONGITS_APNS_CA_FILE {config.ca_file!r}: {exc}"
            ) from exc


class Sender:
    """One process's APNs client: the key, the current provider JWT and one HTTP/2 connection
    (``notifications.http2``), driven by an event loop of its own (a thread): every push of a
    batch is a stream of that connection, at most ``Config.streams`` at once (and no more than
    APNs' own ``MAX_CONCURRENT_STREAMS``)."""

    def __init__(self, config: Config) -> None:
        check(config)
        self.config = config
        self.key = read_key(config.key_file)
        self.lock = threading.Lock()
        self.token = ""
        self.issued = 0.0
        self.tokens_made = 0  # provider JWTs made by this process (for tests and the bench)
        self.context = ssl.create_default_context(cafile=config.ca_file or None)
        self.http: http2.Client | None = None
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="apns", daemon=True).start()

    def provider_token(self, stale: str | None = None) -> str:
        """The JWT to send with: the current one while younger than ``REUSE_SECONDS``, else a
        new one. ``stale``: the JWT APNs just called expired; it is replaced only if it is still
        the current one, so a burst of streams refused together makes one new JWT."""
        with self.lock:
            now = time.time()
            fresh = self.token and now - self.issued < REUSE_SECONDS
            if fresh and (stale is None or stale != self.token):
                return self.token
            self.token = jwt.encode(
                {"iss": self.config.team_id, "iat": int(now)},
                self.key,
                algorithm="ES256",
                headers={"kid": self.config.key_id},
            )
            self.issued = now
            self.tokens_made += 1
            return self.token

    def send(self, device_token: str, payload: dict[str, Any], headers: dict[str, str]) -> Reply:
        """``send_many`` of one."""
        return self.send_many([(device_token, payload, headers)])[0]

    def send_many(self, pushes: list[tuple[str, dict[str, Any], dict[str, str]]]) -> list[Reply]:
        """Each ``(device token, payload, apns-* headers)`` sent on the connection, together;
        their replies in order. Each is sent once, and once more with a new JWT when APNs
        answers ``ExpiredProviderToken``."""
        return self.submit(pushes).result()

    def submit(self, pushes: list) -> concurrent.futures.Future[list[Reply]]:
        """``send_many`` started, not waited for: the caller may start other sends meanwhile."""
        return asyncio.run_coroutine_threadsafe(self._send_all(pushes), self.loop)

    @property
    def connections(self) -> int:
        """Connections this process opened to APNs (for tests and the bench)."""
        return self.http.connections if self.http is not None else 0

    async def _send_all(self, pushes: list[tuple[str, dict[str, Any], dict[str, str]]]) -> list:
        if self.http is None:
            self.http = http2.Client(
                self.config.base_url,
                timeout=self.config.timeout,
                streams=self.config.streams,
                ssl_context=self.context,
            )
        return list(await asyncio.gather(*(self._send_one(*push) for push in pushes)))

    async def _send_one(
        self, device_token: str, payload: dict[str, Any], headers: dict[str, str]
    ) -> Reply:
        assert self.http is not None
        started = time.monotonic()
        body = orjson.dumps(payload)
        fixed = [("apns-topic", self.config.topic), *headers.items()]
        stale: str | None = None
        for _ in range(2):
            bearer = self.provider_token(stale)
            try:
                response = await self.http.post(
                    f"/3/device/{device_token}",
                    [("authorization", f"bearer {bearer}"), *fixed],
                    body,
                )
            except TimeoutError:
                return Reply(None, error="timeout", milliseconds=_since(started))
            except http2.Error as exc:
                return Reply(None, error=f"network error ({exc})", milliseconds=_since(started))
            reply = _reply(response, _since(started))
            if reply.reason != "ExpiredProviderToken" or stale is not None:
                return reply
            stale = bearer
        return reply

    def close(self) -> None:
        if self.http is not None:
            asyncio.run_coroutine_threadsafe(self.http.aclose(), self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)


def _since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _reply(response: http2.Response, milliseconds: int = 0) -> Reply:
    status = response.status
    if status == 200:
        return Reply(200, milliseconds=milliseconds)
    reason = ""
    try:
        body = orjson.loads(response.body)
        reason = str(body.get("reason", ""))[:60] if isinstance(body, dict) else ""
    except orjson.JSONDecodeError:
        pass
    error = f"{status} {reason}".strip()
    return Reply(status, reason, retry_after(response), error, milliseconds)


def retry_after(response: http2.Response) -> float | None:
    """``Retry-After`` in seconds (None: absent, or an HTTP date: the backoff schedule
    applies)."""
    value = response.headers.get("retry-after", "")
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None
