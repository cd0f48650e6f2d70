"""Apple's and Google's ID tokens, verified: who the provider says signed in.

A phone app signs the player in with the provider's SDK and sends the ID token it got (a JWT the
provider signed). ``verify`` checks it with PyJWT against the provider's published keys
(``TONGITS_APPLE_JWKS_URL``, ``TONGITS_GOOGLE_JWKS_URL``), fetched once and kept
(``TONGITS_JWKS_CACHE_SECONDS``), fetched again once when a token names a key id not among them
(a rotated key) unless the last fetch is younger than ``TONGITS_JWKS_REFETCH_COOLDOWN_SECONDS``
(so a stream of made-up key ids costs the provider one request per cool-down, not one each):

- the signature, with the algorithm of the key the header's ``kid`` names and only that one (no
  ``none``, no HMAC: a public key is never taken for a shared secret);
- ``iss`` (Apple: ``https://appleid.apple.com``; Google: ``https://accounts.google.com`` or
  ``accounts.google.com``), ``aud`` among the configured client ids (a token made for another
  app is refused), ``exp`` and ``iat`` within ``TONGITS_ID_TOKEN_LEEWAY_SECONDS``, ``sub``;
- ``nonce`` when the app sends one: the token's must be the app's nonce or its SHA-256 in hex
  (Apple's iOS flow hands Apple the hash), which binds the token to this sign-in.

The account is found by (provider, ``sub``), never by e-mail (a provider may reassign an address,
and Apple's relay addresses differ per app); the e-mail is kept only when the token says the
provider verified it.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
from dataclasses import dataclass
from typing import Any

import jwt
from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from jwt import PyJWKClient
from jwt.exceptions import PyJWKClientConnectionError, PyJWKClientError

from core.errors import Conflict, Unauthenticated, Unavailable

#: Signature algorithms an ID token may use: asymmetric ones only.
ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)


@dataclass(frozen=True)
class Provider:
    name: str
    issuers: tuple[str, ...]
    client_ids_setting: str
    jwks_url_setting: str

    @property
    def client_ids(self) -> list[str]:
        return list(getattr(settings, self.client_ids_setting))

    @property
    def jwks_url(self) -> str:
        return getattr(settings, self.jwks_url_setting)


PROVIDERS = {
    "apple": Provider(
        "apple",
        ("https://appleid.apple.com",),
        "TONGITS_APPLE_CLIENT_IDS",
        "TONGITS_APPLE_JWKS_URL",
    ),
    "google": Provider(
        "google",
        ("https://accounts.google.com", "accounts.google.com"),
        "TONGITS_GOOGLE_CLIENT_IDS",
        "TONGITS_GOOGLE_JWKS_URL",
    ),
}


class InvalidIdToken(Unauthenticated):
    code = "invalid_id_token"
    detail = gettext_lazy("The ID token is not valid.")


class LoginMethodNotConfigured(Conflict):
    code = "login_method_not_configured"
    detail = gettext_lazy("This way of signing in is not set up on this server.")


class ProviderUnavailable(Unavailable):
    code = "identity_provider_unavailable"
    detail = gettext_lazy("The sign-in provider cannot be reached now: try again.")


@dataclass(frozen=True)
class Identity:
    """Who signed in: the provider, its ``sub`` and the e-mail it verified ("" if none)."""

    provider: str
    subject: str
    email: str


_clients: dict[tuple[str, float, float, float], PyJWKClient] = {}
_clients_lock = threading.Lock()


def _client(url: str) -> PyJWKClient:
    """This process's key client for ``url`` (its cache shared by every request)."""
    key = (
        url,
        float(settings.TONGITS_JWKS_CACHE_SECONDS),
        float(settings.TONGITS_JWKS_REFETCH_COOLDOWN_SECONDS),
        float(settings.TONGITS_JWKS_TIMEOUT_SECONDS),
    )
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            client = PyJWKClient(
                url,
                cache_jwk_set=True,
                lifespan=key[1],
                cooldown_duration=key[2],
                timeout=key[3],
                headers={"User-Agent": "tongits-server"},
            )
            _clients[key] = client
        return client


def provider(name: str) -> Provider:
    """The provider of this name, or ``LoginMethodNotConfigured`` when no client id is set."""
    found = PROVIDERS[name]
    if not found.client_ids:
        raise LoginMethodNotConfigured()
    return found


def _refused(check: str) -> InvalidIdToken:
    return InvalidIdToken(_("The ID token is not valid: %(check)s.") % {"check": check})


def _nonce_matches(claimed: Any, nonce: str) -> bool:
    if not isinstance(claimed, str):
        return False
    hashed = hashlib.sha256(nonce.encode()).hexdigest()
    return hmac.compare_digest(claimed, nonce) or hmac.compare_digest(claimed, hashed)


def verify(name: str, id_token: str, nonce: str | None = None) -> Identity:
    """The identity an ID token of provider ``name`` proves, or ``InvalidIdToken`` naming the
    check that failed (``ProviderUnavailable`` when its keys cannot be fetched)."""
    source = provider(name)
    try:
        header = jwt.get_unverified_header(id_token)
    except jwt.DecodeError:
        raise _refused(_("it is not a JWT")) from None
    algorithm = header.get("alg")
    if algorithm not in ALGORITHMS:
        raise _refused(_("its algorithm is not allowed"))
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid:
        raise _refused(_("it names no signing key"))
    try:
        key = _client(source.jwks_url).get_signing_key(kid)
    except PyJWKClientConnectionError:
        raise ProviderUnavailable() from None
    except PyJWKClientError:
        raise _refused(_("its signing key is unknown")) from None
    if key.algorithm_name != algorithm:
        raise _refused(_("its algorithm is not its key's"))
    try:
        claims = jwt.decode(
            id_token,
            key.key,
            algorithms=[algorithm],
            audience=source.client_ids,
            issuer=list(source.issuers),
            leeway=float(settings.TONGITS_ID_TOKEN_LEEWAY_SECONDS),
            options={"require": ["iss", "aud", "exp", "iat", "sub"]},
        )
    except jwt.InvalidSignatureError:
        raise _refused(_("its signature does not verify")) from None
    except jwt.ExpiredSignatureError:
        raise _refused(_("it has expired")) from None
    except jwt.ImmatureSignatureError:
        raise _refused(_("it was issued in the future")) from None
    except jwt.InvalidAudienceError:
        raise _refused(_("it was made for another app")) from None
    except jwt.InvalidIssuerError:
        raise _refused(_("another issuer made it")) from None
    except jwt.MissingRequiredClaimError as exc:
        raise _refused(_("it has no %(claim)s claim") % {"claim": exc.claim}) from None
    except jwt.InvalidTokenError:
        raise _refused(_("it is malformed")) from None
    subject = claims.get("sub")
    if not isinstance(subject, str) or not 0 < len(subject) <= 255:
        raise _refused(_("its subject is not valid"))
    if nonce is not None and not _nonce_matches(claims.get("nonce"), nonce):
        raise _refused(_("its nonce is not this sign-in's"))
    email = claims.get("email")
    verified = claims.get("email_verified") in (True, "true")
    return Identity(name, subject, email if verified and isinstance(email, str) else "")
