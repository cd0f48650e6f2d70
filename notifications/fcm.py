"""Firebase Cloud Messaging's HTTP v1 API: one push to one Android (or FCM) registration token.

Why this shape: FCM v1 has no multicast, so a burst is many ``messages:send`` requests; one
``httpx.Client`` per process keeps a pool of kept-alive connections that the threads of a batch
share (``notifications.push.send_many``). The bearer is an OAuth 2 access token that google-auth
gets from the service account's own ``token_uri`` with a JWT assertion signed by its key; it is
kept until shortly before it expires (google-auth's ``valid``), and renewed at most once per
401 however many requests saw it refused (``access_token(stale=...)``).

This module knows nothing of Django, the outbox or the devices' table: it is given a
``Config``, a token and a message, and answers a ``Reply`` that ``notifications.push`` turns into
a delivery's outcome (docs/notifications.md, "What each answer does").
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

import google.auth.exceptions
import google.auth.transport.requests
import httpx
import requests
from google.oauth2 import service_account

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
    connections: int = 32
    validate_only: bool = False


@dataclass(frozen=True)
class Reply:
    """What FCM answered (``status`` None: no answer, ``error`` says why)."""

    status: int | None
    error_code: str = ""  # FCM's errorCode, else the error's status (INVALID_ARGUMENT, ...)
    token_field: bool = False  # a 400 that names message.token among its field violations
    retry_after: float | None = None
    error: str = ""


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
    """One process's FCM client: the service account's credentials, its access token and a
    connection pool. Thread-safe: a batch's threads share it."""

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
        self.url = f"{config.endpoint.rstrip('/')}/v1/projects/{self.project_id}/messages:send"
        self.lock = threading.Lock()
        self.refreshes = 0  # access tokens fetched by this process (for tests and the bench)
        self.token_http = google.auth.transport.requests.Request(requests.Session())
        size = max(1, config.connections)
        self.http = httpx.Client(
            timeout=config.timeout,
            limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
        )

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
                return current  # another thread renewed it meanwhile
            self.credentials.refresh(self.token_http)
            self.refreshes += 1
            return self.credentials.token

    def send(self, token: str, message: dict[str, Any]) -> Reply:
        """``message`` (without ``token``) to the registration ``token``: once, and once more
        with a new access token when FCM answers 401."""
        body: dict[str, Any] = {"message": {"token": token, **message}}
        if self.config.validate_only:
            body["validate_only"] = True
        stale: str | None = None
        for _ in range(2):
            try:
                bearer = self.access_token(stale)
            except google.auth.exceptions.TransportError as exc:
                return Reply(None, error=f"fcm token: network error ({type(exc).__name__})")
            except google.auth.exceptions.RefreshError as exc:
                return Reply(None, error_code="TOKEN_REFUSED", error=f"fcm token refused: {exc}")
            try:
                response = self.http.post(
                    self.url, json=body, headers={"Authorization": f"Bearer {bearer}"}
                )
            except httpx.TimeoutException:
                return Reply(None, error="timeout")
            except httpx.HTTPError as exc:
                return Reply(None, error=f"network error ({type(exc).__name__})")
            if response.status_code != 401 or stale is not None:
                return _reply(response)
            stale = bearer
        return _reply(response)

    def close(self) -> None:
        self.http.close()


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "")
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None  # an HTTP date: the backoff schedule applies


def _reply(response: httpx.Response) -> Reply:
    """FCM's answer read: its status, errorCode and whether a 400 is about the token."""
    status = response.status_code
    if status == 200:
        return Reply(200)
    error_code, token_field, message = "", False, ""
    try:
        error = response.json().get("error", {})
    except (ValueError, AttributeError):
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
