"""Google Play: the Play Developer API through ``google-auth``, and the OIDC token of Pub/Sub
pushes.

The API is reached at ``TONGITS_GOOGLE_PLAY_API_URL`` (Google's by default; the tests point it
at a stand-in) with an ``AuthorizedSession`` of the service account whose JSON key file
``TONGITS_GOOGLE_PLAY_CREDENTIALS`` names (its ``token_uri`` is where the access token comes
from). Three calls: ``purchases.products.get`` (what a purchase token is), ``consume`` (so the
player can buy the product again; an unacknowledged purchase is refunded by Google after three
days) and ``voidedpurchases.list`` (refunds, chargebacks, revocations).

Real-time developer notifications arrive as Pub/Sub pushes whose ``Authorization`` header
carries a Google-signed OIDC token: checked with PyJWT against Google's published keys
(``TONGITS_GOOGLE_JWKS_URL``, as for sign-in), for ``TONGITS_GOOGLE_PUBSUB_AUDIENCE`` and the
push subscription's service account (``TONGITS_GOOGLE_PUBSUB_SERVICE_ACCOUNT``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import jwt
import requests
from django.conf import settings
from google.auth.exceptions import GoogleAuthError
from google.auth.transport.requests import AuthorizedSession
from google.oauth2 import service_account
from jwt import PyJWKClient
from jwt.exceptions import PyJWKClientConnectionError, PyJWKClientError

from store.errors import InvalidPushToken, StoreNotConfigured, StoreUnavailable

SCOPE = "https://www.googleapis.com/auth/androidpublisher"
ISSUERS = ("https://accounts.google.com", "accounts.google.com")

_lock = threading.Lock()
_sessions: dict[str, AuthorizedSession] = {}
_key_clients: dict[str, PyJWKClient] = {}


@dataclass(frozen=True)
class Answer:
    """What the API answered: its HTTP status and JSON body (empty when it had none)."""

    status: int
    body: dict[str, Any]
    text: str


def package() -> str:
    name = settings.TONGITS_GOOGLE_PLAY_PACKAGE
    if not name or not settings.TONGITS_GOOGLE_PLAY_CREDENTIALS:
        raise StoreNotConfigured()
    return name


def _session() -> AuthorizedSession:
    path = settings.TONGITS_GOOGLE_PLAY_CREDENTIALS
    with _lock:
        session = _sessions.get(path)
        if session is None:
            try:
                credentials = service_account.Credentials.from_service_account_file(
                    path, scopes=[SCOPE]
                )
            except (OSError, ValueError) as exc:
                raise StoreNotConfigured() from exc
            session = AuthorizedSession(credentials)
            _sessions[path] = session
        return session


def _call(method: str, path: str, **kwargs: Any) -> Answer:
    base = settings.TONGITS_GOOGLE_PLAY_API_URL.rstrip("/")
    url = f"{base}/androidpublisher/v3/applications/{quote(package(), safe='')}/{path}"
    try:
        response = _session().request(
            method, url, timeout=settings.TONGITS_GOOGLE_PLAY_TIMEOUT_SECONDS, **kwargs
        )
    except (requests.RequestException, GoogleAuthError, OSError) as exc:
        raise StoreUnavailable() from exc
    try:
        body = response.json() if response.content else {}
    except ValueError:
        body = {}
    return Answer(response.status_code, body if isinstance(body, dict) else {}, response.text)


def product_purchase(product_id: str, token: str) -> Answer:
    """``purchases.products.get``: the purchase a token stands for."""
    return _call(
        "GET", f"purchases/products/{quote(product_id, safe='')}/tokens/{quote(token, safe='')}"
    )


def consume(product_id: str, token: str) -> Answer:
    """``purchases.products.consume``: the player may buy the product again."""
    return _call(
        "POST",
        f"purchases/products/{quote(product_id, safe='')}/tokens/{quote(token, safe='')}:consume",
    )


def voided_purchases(start_ms: int, page_token: str | None = None) -> Answer:
    """``purchases.voidedpurchases.list``: purchases voided since ``start_ms``, a page."""
    params: dict[str, Any] = {"startTime": start_ms, "type": 0}
    if page_token:
        params["token"] = page_token
    return _call("GET", "purchases/voidedpurchases", params=params)


def _keys(url: str) -> PyJWKClient:
    with _lock:
        client = _key_clients.get(url)
        if client is None:
            client = PyJWKClient(
                url,
                cache_jwk_set=True,
                lifespan=float(settings.TONGITS_JWKS_CACHE_SECONDS),
                timeout=float(settings.TONGITS_JWKS_TIMEOUT_SECONDS),
                headers={"User-Agent": "tongits-server"},
            )
            _key_clients[url] = client
        return client


def push_identity(authorization: str) -> dict[str, Any]:
    """The claims of a Pub/Sub push's OIDC token (``Authorization: Bearer <token>``), or
    ``InvalidPushToken``: Google's signature, the configured audience and service account."""
    audience = settings.TONGITS_GOOGLE_PUBSUB_AUDIENCE
    account = settings.TONGITS_GOOGLE_PUBSUB_SERVICE_ACCOUNT
    if not audience or not account:
        raise StoreNotConfigured()
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise InvalidPushToken()
    try:
        header = jwt.get_unverified_header(token)
        if header.get("alg") != "RS256" or not header.get("kid"):
            raise InvalidPushToken()
        key = _keys(settings.TONGITS_GOOGLE_JWKS_URL).get_signing_key(header["kid"])
        claims = jwt.decode(
            token,
            key.key,
            algorithms=["RS256"],
            audience=audience,
            issuer=list(ISSUERS),
            leeway=float(settings.TONGITS_ID_TOKEN_LEEWAY_SECONDS),
            options={"require": ["iss", "aud", "exp", "iat", "email"]},
        )
    except PyJWKClientConnectionError:
        raise StoreUnavailable() from None
    except (PyJWKClientError, jwt.InvalidTokenError):
        raise InvalidPushToken() from None
    if claims.get("email") != account or claims.get("email_verified") not in (True, "true"):
        raise InvalidPushToken()
    return claims
