"""A certificate authority of the tests' own, shaped like Apple's, and the App Store's signed
data made with it: StoreKit 2 transactions and App Store Server Notifications V2, ES256 JWS
carrying their chain in ``x5c`` (leaf, intermediate, root), as the App Store sends them.

    authority = Authority.make()        # root CA, intermediate, leaf (Apple's marker OIDs)
    authority.root_path(tmp_path)       # the root as a DER file, for the server's settings
    jws = authority.transaction(transactionId="2000001", productId="chips_1000")
    jws = authority.notification("REFUND", jws)
"""

from __future__ import annotations

import base64
import itertools
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import NameOID

#: Apple's marker extensions: the WWDR intermediate's, and the App Store receipt signer's.
INTERMEDIATE_MARKER = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")
LEAF_MARKER = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")

BUNDLE_ID = "com.example.tongits"
APP_ID = 1234567890
_ids = itertools.count(2000000000000001)


def next_transaction_id() -> str:
    return str(next(_ids))


def _name(common: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, common),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Tongits tests"),
            x509.NameAttribute(NameOID.COUNTRY_NAME, "PH"),
        ]
    )


def _certificate(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: x509.Certificate | None,
    issuer_key: ec.EllipticCurvePrivateKey,
    *,
    ca: bool,
    marker: x509.ObjectIdentifier | None,
) -> x509.Certificate:
    now = datetime.now(UTC)
    public = key.public_key()
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer.subject if issuer else _name(subject))
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=365))
        .add_extension(
            x509.BasicConstraints(ca=ca, path_length=None if ca else None), critical=True
        )
        .add_extension(
            x509.KeyUsage(
                digital_signature=not ca,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=ca,
                crl_sign=ca,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
            critical=False,
        )
    )
    if marker is not None:
        builder = builder.add_extension(
            x509.UnrecognizedExtension(marker, b"\x05\x00"), critical=False
        )
    return builder.sign(issuer_key, hashes.SHA256())


def _b64(certificate: x509.Certificate) -> str:
    return base64.b64encode(certificate.public_bytes(Encoding.DER)).decode()


@dataclass
class Authority:
    """A root CA, an intermediate and a leaf (the signer), each with its key."""

    root: x509.Certificate
    intermediate: x509.Certificate
    leaf: x509.Certificate
    leaf_key: ec.EllipticCurvePrivateKey

    @classmethod
    def make(cls) -> Authority:
        root_key = ec.generate_private_key(ec.SECP256R1())
        root = _certificate("Test Root CA", root_key, None, root_key, ca=True, marker=None)
        middle_key = ec.generate_private_key(ec.SECP256R1())
        middle = _certificate(
            "Test WWDR CA", middle_key, root, root_key, ca=True, marker=INTERMEDIATE_MARKER
        )
        leaf_key = ec.generate_private_key(ec.SECP256R1())
        leaf = _certificate(
            "Test App Store signer", leaf_key, middle, middle_key, ca=False, marker=LEAF_MARKER
        )
        return cls(root, middle, leaf, leaf_key)

    def root_path(self, folder: Path) -> str:
        path = folder / f"root-{uuid.uuid4().hex[:8]}.cer"
        path.write_bytes(self.root.public_bytes(Encoding.DER))
        return str(path)

    def sign(self, payload: dict[str, Any], key: ec.EllipticCurvePrivateKey | None = None) -> str:
        """``payload`` as an ES256 JWS with this chain in ``x5c`` (signed by ``key`` if given:
        a forgery under the real chain)."""
        chain = [_b64(self.leaf), _b64(self.intermediate), _b64(self.root)]
        return jwt.encode(payload, key or self.leaf_key, algorithm="ES256", headers={"x5c": chain})

    def transaction(self, key: ec.EllipticCurvePrivateKey | None = None, **fields: Any) -> str:
        """A StoreKit 2 consumable's transaction (``fields`` override any of its claims)."""
        now = int(time.time() * 1000)
        transaction_id = fields.pop("transactionId", None) or next_transaction_id()
        payload = {
            "transactionId": transaction_id,
            "originalTransactionId": transaction_id,
            "bundleId": BUNDLE_ID,
            "productId": "chips_1000",
            "purchaseDate": now,
            "originalPurchaseDate": now,
            "quantity": 1,
            "type": "Consumable",
            "inAppOwnershipType": "PURCHASED",
            "signedDate": now,
            "environment": "Production",
            "transactionReason": "PURCHASE",
            "storefront": "PHL",
            "storefrontId": "143474",
            "price": 49000,
            "currency": "PHP",
            **fields,
        }
        return self.sign({k: v for k, v in payload.items() if v is not None}, key)

    def notification(self, kind: str, signed_transaction: str, **data: Any) -> str:
        """An App Store Server Notification V2 about ``signed_transaction``."""
        now = int(time.time() * 1000)
        payload = {
            "notificationType": kind,
            "notificationUUID": str(uuid.uuid4()),
            "version": "2.0",
            "signedDate": now,
            "data": {
                "appAppleId": APP_ID,
                "bundleId": BUNDLE_ID,
                "bundleVersion": "1",
                "environment": "Production",
                "signedTransactionInfo": signed_transaction,
                **data,
            },
        }
        return self.sign(payload)
