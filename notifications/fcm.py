"""Firebase Cloud Messaging's HTTP v1 API: one push to one Android (or FCM) registration token.

Why this shape: FCM v1 has no multicast, so a burst is many ``messages:send`` requests; FCM
takes them as concurrent streams of one HTTP/2 connection (as Firebase's own Admin SDKs send),
so one process keeps one (``notifications.http2``) and the pushes of a batch
(``notifications.push.send_many``) are its streams, opened together. The bearer is an OAuth 2
access token that google-auth gets from the service account's own ``token_uri`` with a JWT
assertion signed by its key; it is kept until shortly before it expires (google-auth's
``valid``), and renewed at most once per 401 however many streams saw it refused
(``access_token(stale=...)``).

This module knows nothing of Django, the outbox or the devices' table: it is given a
``Config``, a token and a message, and answers a ``Reply`` that ``notifications.push`` turns into
a delivery's outcome (docs/notifications.md, "What each answer does").
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import json
import threading
import time
from dataclasses import dataclass
from typing import Any

import google.auth.exceptions
import google.auth.transport.requests
import orjson
import requests
from google.oauth2 import service_account

from notifications import http2

#: The one scope a server needs to send with FCM v1.
SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
#: Google's FCM host (``TONGITS_FCM_ENDPOINT``'s default).
DEFAULT_ENDPOINT = "https://fcm.googleapis.com"
#: FCM's per-message ``errorCode`` values (``google.firebase.fcm.v1.FcmError``) that mean the
#: token will never be served again.
GONE_CODES = frozenset({"UNREGISTERED", "SENDER_ID_MISMATCH"})


@dataclass(frozen=True)
class Config:
    """Where to send and as whom: the service account's JSON (a file's path) and the host."""

    credentials_file: str
    endpoint: str = DEFAULT_ENDPOINT
    timeout: float = 10.0
    streams: int = 100  # concurrent streams one batch opens on the connection
    validate_only: bool = False


@dataclass(frozen=True)
class Reply:
    """What FCM answered (``status`` None: no answer, ``error`` says why)."""

    status: int | None
    error_code: str = ""  # FCM's errorCode, else the error's status (INVALID_ARGUMENT, ...)
    token_field: bool = False  # a 400 that names message.token among its field violations
    retry_after: float | None = None
    error: str = ""
    milliseconds: int = 0  # from the first try's start to the last answer


class ConfigError(ValueError):
    """The service account's JSON cannot be used (missing, unreadable, a field absent)."""


def read_service_account(path: str) -> dict[str, Any]:
    """The service account's JSON, checked for the fields FCM needs."""
    try:
        with open(path, encoding="utf-8") as handle:
            info = json.load(handle)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the FCM service account {path!r}: {exc}") from exc
    if not isinstance(info, dict):
        raise ConfigError(f"{path!r} is not a service account's JSON object")
    missing = [
        k for k in ("project_id", "client_email", "private_key", "token_uri") if not info.get(k)
    ]
    if missing:
        raise ConfigError(f"the FCM service account {path!r} lacks {', '.join(missing)}")
    return info


class Sender:
    """One process's FCM client: the service account's credentials, its access token and one
    HTTP/2 connection (``notifications.http2``) driven by an event loop of its own (a thread);
    the pushes of a batch are streams of it, at most ``Config.streams`` at once."""

    def __init__(self, config: Config) -> None:
        info = read_service_account(config.credentials_file)
        try:
            self.credentials = service_account.Credentials.from_service_account_info(
                info, scopes=[SCOPE]
            )
        except (ValueError, KeyError) as exc:
            raise ConfigError(f"the FCM service account's key cannot be used: {exc}") from exc
        self.config = config
        self.project_id = str(info["project_id"])
        self.path = f"/v1/projects/{self.project_id}/messages:send"
        self.lock = threading.Lock()
        self.refreshes = 0  # access tokens fetched by this process (for tests and the bench)
        self.token_http = google.auth.transport.requests.Request(requests.Session())
        self.http: http2.Client | None = None
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="fcm", daemon=True).start()

    def access_token(self, stale: str | None = None) -> str:
        """The bearer to send with: the cached one while google-auth deems it valid (it renews
        a few minutes before the expiry), or a new one. ``stale``: the token FCM just refused
        (401); it is replaced only if it is still the current one, so the many requests that
        saw it refused at once fetch one new token between them, not one each."""
        with self.lock:
            current = self.credentials.token
            if stale is None and self.credentials.valid and current:
                return current
            if stale is not None and current and current != stale:
                return current  # another stream renewed it meanwhile
            self.credentials.refresh(self.token_http)
            self.refreshes += 1
            return self.credentials.token

    def send(self, token: str, message: dict[str, Any]) -> Reply:
        """``send_many`` of one."""
        return self.send_many([(token, message)])[0]

    def send_many(self, pushes: list[tuple[str, dict[str, Any]]]) -> list[Reply]:
        """Each ``(registration token, message without its token)`` sent, together; their
        replies in order. Each is sent once, and once more with a new access token when FCM
        answers 401."""
        return self.submit(pushes).result()

    def submit(self, pushes: list) -> concurrent.futures.Future[list[Reply]]:
        """``send_many`` started, not waited for: the caller may start other sends meanwhile."""
        return asyncio.run_coroutine_threadsafe(self._send_all(pushes), self.loop)

    @property
    def connections(self) -> int:
        """Connections this process opened to FCM (for tests and the bench)."""
        return self.http.connections if self.http is not None else 0

    async def _send_all(self, pushes: list[tuple[str, dict[str, Any]]]) -> list[Reply]:
        if self.http is None:
            self.http = http2.Client(
                self.config.endpoint, timeout=self.config.timeout, streams=self.config.streams
            )
        return list(await asyncio.gather(*(self._send_one(*push) for push in pushes)))

    async def _bearer(self, stale: str | None) -> str:
        """``access_token``, without blocking the loop: only a renewal (a request to the token
        endpoint) runs in a thread."""
        current = self.credentials.token
        if current and (current != stale if stale else self.credentials.valid):
            return current
        return await asyncio.get_running_loop().run_in_executor(None, self.access_token, stale)

    async def _send_one(self, token: str, message: dict[str, Any]) -> Reply:
        started = time.monotonic()
        reply = await self._try(token, message)
        return dataclasses.replace(reply, milliseconds=int((time.monotonic() - started) * 1000))

    async def _try(self, token: str, message: dict[str, Any]) -> Reply:
        assert self.http is not None
        body: dict[str, Any] = {"message": {"token": token, **message}}
        if self.config.validate_only:
            body["validate_only"] = True
        data = orjson.dumps(body)
        stale: str | None = None
        for _ in range(2):
            try:
                bearer = await self._bearer(stale)
            except google.auth.exceptions.TransportError as exc:
                return Reply(None, error=f"fcm token: network error ({type(exc).__name__})")
            except google.auth.exceptions.RefreshError as exc:
                return Reply(None, error_code="TOKEN_REFUSED", error=f"fcm token refused: {exc}")
            try:
                response = await self.http.post(
                    self.path,
                    [("authorization", f"Bearer {bearer}"), ("content-type", "application/json")],
                    data,
                )
            except TimeoutError:
                return Reply(None, error="timeout")
            except http2.Error as exc:
                return Reply(None, error=f"network error ({exc})")
            if response.status != 401 or stale is not None:
                return _reply(response)
            stale = bearer
        return _reply(response)

    def close(self) -> None:
        if self.http is not None:
            asyncio.run_coroutine_threadsafe(self.http.aclose(), self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)


def _retry_after(response: http2.Response) -> float | None:
    value = response.headers.get("retry-after", "")
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None  # an HTTP date: the backoff schedule applies


def _reply(response: http2.Response) -> Reply:
    """FCM's answer read: its status, errorCode and whether a 400 is about the token."""
    status = response.status
    if status == 200:
        return Reply(200)
    error_code, token_field, message = "", False, ""
    try:
        error = orjson.loads(response.body).get("error", {})
    except (orjson.JSONDecodeError, AttributeError):
        error = {}
    if isinstance(error, dict):
        message = str(error.get("message", ""))[:120]
        error_code = str(error.get("status", ""))
        for detail in error.get("details") or ():
            if not isinstance(detail, dict):
                continue
            if detail.get("errorCode"):
                error_code = str(detail["errorCode"])
            for violation in detail.get("fieldViolations") or ():
                if isinstance(violation, dict) and violation.get("field") == "message.token":
                    token_field = True
    text = " ".join(part for part in (str(status), error_code, message) if part)
    return Reply(status, error_code, token_field, _retry_after(response), text)
