"""The App Store's signed data, verified with Apple's own ``app-store-server-library``.

A StoreKit 2 transaction and an App Store Server Notification V2 are JWS (ES256) carrying
their certificate chain in ``x5c``. ``SignedDataVerifier`` checks the chain up to the root
certificates the settings name (``TONGITS_APPLE_ROOT_CERTIFICATES``: DER or PEM files, Apple
Root CA - G3 in production), Apple's marker extensions on the intermediate and the leaf, the
signature, and that the data belongs to this app (``TONGITS_APPLE_BUNDLE_ID``,
``TONGITS_APPLE_APP_ID``) and environment (``TONGITS_APPLE_ENVIRONMENT``). With
``TONGITS_APPLE_ONLINE_CHECKS`` (on by default) it also asks Apple's OCSP responders whether a
certificate was revoked; a chain of one's own (tests, a local StoreKit configuration) has none.

Each failure becomes a domain error of its own (``store.errors``).
"""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

import jwt
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import (
    SignedDataVerifier,
    VerificationException,
    VerificationStatus,
)
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from django.conf import settings

from store.errors import (
    InvalidSignedData,
    StoreNotConfigured,
    StoreUnavailable,
    WrongApp,
    WrongEnvironment,
)

_lock = threading.Lock()


def root_certificates(paths: tuple[str, ...]) -> list[bytes]:
    """The DER bytes of each root certificate file (DER or PEM)."""
    out = []
    for path in paths:
        data = Path(path).read_bytes()
        if b"-----BEGIN CERTIFICATE-----" in data:
            data = x509.load_pem_x509_certificate(data).public_bytes(Encoding.DER)
        out.append(data)
    return out


@lru_cache(maxsize=4)
def _verifier(
    roots: tuple[str, ...], online: bool, environment: str, bundle_id: str, app_id: int | None
) -> SignedDataVerifier:
    return SignedDataVerifier(
        root_certificates(roots), online, Environment(environment), bundle_id, app_id
    )


def verifier() -> SignedDataVerifier:
    """This process's verifier for the current settings (its chain cache shared)."""
    roots = tuple(settings.TONGITS_APPLE_ROOT_CERTIFICATES)
    bundle_id = settings.TONGITS_APPLE_BUNDLE_ID
    if not roots or not bundle_id:
        raise StoreNotConfigured()
    environment = settings.TONGITS_APPLE_ENVIRONMENT
    app_id = settings.TONGITS_APPLE_APP_ID
    with _lock:
        try:
            return _verifier(
                roots, bool(settings.TONGITS_APPLE_ONLINE_CHECKS), environment, bundle_id, app_id
            )
        except (OSError, ValueError) as exc:  # a missing file, production without an app id
            raise StoreNotConfigured() from exc


def _refusal(exc: VerificationException) -> Exception:
    if exc.status == VerificationStatus.INVALID_APP_IDENTIFIER:
        return WrongApp()
    if exc.status == VerificationStatus.INVALID_ENVIRONMENT:
        return WrongEnvironment()
    if exc.status == VerificationStatus.RETRYABLE_VERIFICATION_FAILURE:
        return StoreUnavailable()
    return InvalidSignedData()


def claims(signed: str) -> dict[str, Any]:
    """A JWS's payload as sent, not verified (for the record, or once ``verifier`` passed it)."""
    try:
        found = jwt.decode(signed, options={"verify_signature": False})
    except jwt.InvalidTokenError:
        return {}
    return found if isinstance(found, dict) else {}


def transaction(signed: str) -> dict[str, Any]:
    """A StoreKit 2 transaction (``signedTransaction``), verified: its decoded fields."""
    found = verifier()
    try:
        found.verify_and_decode_signed_transaction(signed)
    except VerificationException as exc:
        raise _refusal(exc) from None
    except Exception:  # a payload the library cannot read as a transaction
        raise InvalidSignedData() from None
    return claims(signed)


def notification(signed: str) -> dict[str, Any]:
    """An App Store Server Notification V2 (``signedPayload``), verified, with its transaction
    (``data.signedTransactionInfo``) verified and decoded as ``transaction``."""
    found = verifier()
    try:
        found.verify_and_decode_notification(signed)
    except VerificationException as exc:
        raise _refusal(exc) from None
    except Exception:
        raise InvalidSignedData() from None
    decoded = claims(signed)
    info = (decoded.get("data") or {}).get("signedTransactionInfo")
    if info:
        decoded["transaction"] = transaction(info)
    return decoded
