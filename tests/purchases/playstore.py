"""A stand-in for Google's OAuth token endpoint and the Play Developer API: one real HTTP
server on 127.0.0.1, reached by the server through google-auth's own session.

    play = PlayStandIn.start(package="com.example.tongits")
    play.credentials_file(tmp_path)        # a service account whose token_uri is the stand-in
    play.add_purchase("token-1", orderId="GPA.1", productId="chips_1000")
    play.consume_failures = 2              # the next two consumes answer 503
    play.voided.append({...})              # what voidedpurchases.list answers

It issues an access token only for a JWT assertion signed by the service account's key, and
answers the API only with a token it issued.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

SERVICE_ACCOUNT = "play-api@tongits-tests.iam.gserviceaccount.com"
#: The audience google-auth's service-account assertions name, whatever their token_uri.
GOOGLE_TOKEN_AUDIENCE = "https://oauth2.googleapis.com/token"
_PRODUCT = re.compile(
    r"^/androidpublisher/v3/applications/([^/]+)/purchases/products/([^/]+)/tokens/([^/:]+)"
    r"(:consume)?$"
)
_VOIDED = re.compile(r"^/androidpublisher/v3/applications/([^/]+)/purchases/voidedpurchases$")


class PlayStandIn:
    def __init__(self, package: str) -> None:
        self.package = package
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.purchases: dict[str, dict[str, Any]] = {}
        self.voided: list[dict[str, Any]] = []
        self.consume_failures = 0
        self.consumed: list[str] = []
        self.calls: list[tuple[str, str]] = []
        self.tokens: set[str] = set()
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, status: int, body: Any = None) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                if body is not None:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _authorised(self) -> bool:
                scheme, _, token = self.headers.get("Authorization", "").partition(" ")
                with owner.lock:
                    return scheme == "Bearer" and token in owner.tokens

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode()
                path = urlparse(self.path).path
                with owner.lock:
                    owner.calls.append(("POST", path))
                if path == "/token":
                    return self._token(parse_qs(body))
                found = _PRODUCT.match(path)
                if not found or not found.group(4):
                    return self._answer(404, {"error": {"code": 404}})
                if not self._authorised():
                    return self._answer(401, {"error": {"code": 401}})
                with owner.lock:
                    if owner.consume_failures > 0:
                        owner.consume_failures -= 1
                        return self._answer(503, {"error": {"code": 503}})
                    purchase = owner.purchases.get(unquote(found.group(3)))
                    if found.group(1) != owner.package or purchase is None:
                        return self._answer(404, {"error": {"code": 404}})
                    purchase["consumptionState"] = 1
                    owner.consumed.append(unquote(found.group(3)))
                return self._answer(204)

            def _token(self, form: dict[str, list[str]]) -> None:
                assertion = (form.get("assertion") or [""])[0]
                try:
                    claims = jwt.decode(
                        assertion,
                        owner.key.public_key(),
                        algorithms=["RS256"],
                        audience=GOOGLE_TOKEN_AUDIENCE,
                    )
                except jwt.InvalidTokenError:
                    return self._answer(400, {"error": "invalid_grant"})
                if claims.get("iss") != SERVICE_ACCOUNT or "androidpublisher" not in claims.get(
                    "scope", ""
                ):
                    return self._answer(400, {"error": "invalid_scope"})
                token = uuid.uuid4().hex
                with owner.lock:
                    owner.tokens.add(token)
                return self._answer(
                    200, {"access_token": token, "expires_in": 3600, "token_type": "Bearer"}
                )

            def do_GET(self) -> None:  # noqa: N802
                url = urlparse(self.path)
                with owner.lock:
                    owner.calls.append(("GET", url.path))
                if not self._authorised():
                    return self._answer(401, {"error": {"code": 401}})
                voided = _VOIDED.match(url.path)
                if voided:
                    query = parse_qs(url.query)
                    start = int((query.get("startTime") or ["0"])[0])
                    with owner.lock:
                        items = [v for v in owner.voided if int(v["voidedTimeMillis"]) >= start]
                    page = int((query.get("token") or ["0"])[0])
                    body: dict[str, Any] = {"voidedPurchases": items[page * 2 : page * 2 + 2]}
                    if len(items) > page * 2 + 2:
                        body["tokenPagination"] = {"nextPageToken": str(page + 1)}
                    return self._answer(200, body)
                found = _PRODUCT.match(url.path)
                if not found or found.group(4):
                    return self._answer(404, {"error": {"code": 404}})
                with owner.lock:
                    purchase = owner.purchases.get(unquote(found.group(3)))
                    if found.group(1) != owner.package or purchase is None:
                        return self._answer(404, {"error": {"code": 404, "status": "NOT_FOUND"}})
                    if purchase.get("productId") != unquote(found.group(2)):
                        return self._answer(400, {"error": {"code": 400}})
                    return self._answer(200, dict(purchase))

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @classmethod
    def start(cls, package: str) -> PlayStandIn:
        server = cls(package)
        server._thread.start()
        return server

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def token_url(self) -> str:
        return f"{self.url}/token"

    def credentials_file(self, folder: Path) -> str:
        """A service account's JSON key file, as the Play Console hands it out."""
        pem = self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        info = {
            "type": "service_account",
            "project_id": "tongits-tests",
            "private_key_id": uuid.uuid4().hex,
            "private_key": pem,
            "client_email": SERVICE_ACCOUNT,
            "client_id": "1234567890",
            "token_uri": self.token_url,
        }
        path = folder / f"play-{uuid.uuid4().hex[:8]}.json"
        path.write_text(json.dumps(info))
        return str(path)

    def add_purchase(self, token: str, **fields: Any) -> dict[str, Any]:
        """A purchase as purchases.products.get answers it (purchased, not consumed)."""
        purchase = {
            "kind": "androidpublisher#productPurchase",
            "purchaseTimeMillis": str(int(time.time() * 1000)),
            "purchaseState": 0,
            "consumptionState": 0,
            "developerPayload": "",
            "orderId": f"GPA.{uuid.uuid4().int % 10**16:016d}",
            "purchaseType": 0,
            "acknowledgementState": 0,
            "productId": "chips_1000",
            "quantity": 1,
            "regionCode": "PH",
            **fields,
        }
        with self.lock:
            self.purchases[token] = purchase
        return purchase

    def void(self, order_id: str, token: str, *, when_ms: int | None = None) -> None:
        """Google voided (refunded) this order: voidedpurchases.list names it from now on."""
        now = when_ms or int(time.time() * 1000)
        with self.lock:
            self.voided.append(
                {
                    "kind": "androidpublisher#voidedPurchase",
                    "purchaseToken": token,
                    "purchaseTimeMillis": str(now - 60000),
                    "voidedTimeMillis": str(now),
                    "orderId": order_id,
                    "voidedSource": 0,
                    "voidedReason": 1,
                }
            )
