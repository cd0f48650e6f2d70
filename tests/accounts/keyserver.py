"""A stand-in for Apple's and Google's key endpoints: a real HTTP server on 127.0.0.1 serving a
JSON Web Key Set of keys the test made, and the ID tokens those keys sign.

    server = KeyServer.start()
    key = server.add_key("RS256")          # published at once; ES256 works too
    token = server.token(key, sub="001", aud="com.example.tongits", iss=APPLE_ISSUER)
    server.fetches                          # how many times the key set was fetched
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

APPLE_ISSUER = "https://appleid.apple.com"
GOOGLE_ISSUER = "https://accounts.google.com"
APPLE_CLIENT = "com.example.tongits"
GOOGLE_CLIENT = "123-tongits.apps.googleusercontent.com"


@dataclass
class Key:
    kid: str
    algorithm: str
    private: Any

    @property
    def public_pem(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def jwk(self) -> dict[str, Any]:
        maker = RSAAlgorithm if self.algorithm.startswith("RS") else ECAlgorithm
        found = maker.to_jwk(self.private.public_key(), as_dict=True)
        return {**found, "kid": self.kid, "alg": self.algorithm, "use": "sig"}


def new_key(algorithm: str, kid: str | None = None) -> Key:
    if algorithm == "RS256":
        private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    elif algorithm == "ES256":
        private = ec.generate_private_key(ec.SECP256R1())
    else:
        raise ValueError(algorithm)
    return Key(kid or uuid.uuid4().hex[:12], algorithm, private)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class KeyServer:
    """The key set at ``url``; ``keys`` is what it publishes (change it to rotate)."""

    def __init__(self) -> None:
        self.keys: list[Key] = []
        self.fetches = 0
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                with owner._lock:
                    owner.fetches += 1
                    body = json.dumps({"keys": [k.jwk() for k in owner.keys]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @classmethod
    def start(cls) -> KeyServer:
        server = cls()
        server._thread.start()
        return server

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/keys"

    def add_key(self, algorithm: str = "RS256") -> Key:
        key = new_key(algorithm)
        with self._lock:
            self.keys.append(key)
        return key

    @staticmethod
    def claims(**overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims = {"iat": now, "exp": now + 600, "sub": "000123.abc", **overrides}
        return {k: v for k, v in claims.items() if v is not None}

    def token(self, key: Key, **claims: Any) -> str:
        return jwt.encode(
            self.claims(**claims), key.private, algorithm=key.algorithm, headers={"kid": key.kid}
        )


def unsigned_token(kid: str, **claims: Any) -> str:
    """A token with ``alg: none`` and no signature."""
    header = _b64(json.dumps({"alg": "none", "kid": kid, "typ": "JWT"}).encode())
    payload = _b64(json.dumps(KeyServer.claims(**claims)).encode())
    return f"{header}.{payload}."


def hs256_with_public_key(key: Key, **claims: Any) -> str:
    """A token "signed" with HS256, the public key's PEM as the shared secret: the classic
    algorithm-confusion forgery."""
    header = _b64(json.dumps({"alg": "HS256", "kid": key.kid, "typ": "JWT"}).encode())
    payload = _b64(json.dumps(KeyServer.claims(**claims)).encode())
    signing_input = f"{header}.{payload}".encode()
    signature = hmac.new(key.public_pem, signing_input, hashlib.sha256).digest()
    return f"{header}.{payload}.{_b64(signature)}"
