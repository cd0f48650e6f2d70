"""Shortcuts: a hot request answered without Django's handler, exactly as Django would answer it.

A ``Shortcut`` is a method, a path pattern and a function ``(ShortRequest, body, match) ->
Answer | None`` that ``runtime.wsgi_bridge`` tries in the REST pool's thread before Django's
WSGI handler, for the requests it matches. It answers only a request whose
every step it can take the way Django, its middleware and DRF take it, and returns ``None`` for
anything else: a header it does not expect, a host Django would refuse, a token that is not
accepted, a body the schema refuses, a throttle's refusal, a domain error. Such a request then
goes through Django unchanged and gets Django's own answer, errors included; a refused request
costs its checks twice, and nothing of it was written. So the error paths stay in one place, and
what a shortcut answers is only the success of an operation whose view does the same thing.

Why: for a move, the handler's middleware, DRF's dispatch and the request's signals (a pooled
database connection checked out and back per request) cost more web CPU than the move itself
(docs/scaling.md, "The web process's choices"). This module holds what any shortcut needs: the
request as the few WSGI keys DRF's authentication and the throttles read, Django's checks of the
host and the scheme, the JSON body under the parser's limits, and the answer with the headers
Django's middleware adds.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from django.conf import settings
from django.db import connections
from django.http import HttpResponse
from django.http.request import HttpHeaders, split_domain_port, validate_host
from django.middleware.security import SecurityMiddleware
from drf_orjson_renderer.renderers import ORJSONRenderer
from rest_framework.exceptions import APIException

from runtime import i18n
from runtime.hardening import depth

logger = logging.getLogger(__name__)

#: (status, headers, body), as the bridge sends it.
Answer = tuple[int, list[tuple[bytes, bytes]], bytes]

#: The media types a shortcut renders for (what DRF's one JSON renderer gives without a
#: negotiation of its own); any other ``Accept`` goes to DRF.
ACCEPTED = frozenset({"", "*/*", "application/json"})
#: The request bodies a shortcut parses; any other ``Content-Type`` goes to DRF.
JSON_TYPES = frozenset({"application/json", "application/json; charset=utf-8"})
#: How long a shortcut's thread keeps a database connection it opened before handing it back
#: to the pool (Django's own requests hand theirs back after each request).
HOLD_SECONDS = 60.0


@dataclass
class ShortRequest:
    """A request as a shortcut sees it: what DRF's authentication, the throttles and the
    idempotency check read of a ``Request`` (``META``, ``headers``, ``method``, ``user``,
    ``auth``), built from the ASGI scope as the WSGI bridge would build its environ."""

    method: str
    path: str
    query: bytes
    scheme: str
    META: dict[str, Any]  # noqa: N815 (the name DRF and Django read)
    headers: HttpHeaders = field(init=False)
    user: Any = None
    auth: Any = None

    def __post_init__(self) -> None:
        self.headers = HttpHeaders(self.META)

    @classmethod
    def from_scope(cls, scope: dict[str, Any]) -> ShortRequest:
        meta: dict[str, Any] = {}
        for raw_name, raw_value in scope.get("headers", ()):
            name = raw_name.decode("latin-1").upper().replace("-", "_")
            if name not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                name = "HTTP_" + name
            value = raw_value.decode("latin-1")
            meta[name] = f"{meta[name]},{value}" if name in meta else value
        client, server = scope.get("client"), scope.get("server")
        if client:
            meta["REMOTE_ADDR"] = client[0]
        if server:
            meta["SERVER_NAME"], meta["SERVER_PORT"] = server[0], str(server[1])
        return cls(
            method=scope["method"],
            path=scope.get("path", ""),
            query=scope.get("query_string", b""),
            scheme=scope.get("scheme", "http"),
            META=meta,
        )

    def is_secure(self) -> bool:
        """``HttpRequest.is_secure``: the proxy's header when one is trusted, else the scheme."""
        if settings.SECURE_PROXY_SSL_HEADER:
            header, secure_value = settings.SECURE_PROXY_SSL_HEADER
            value = self.META.get(header)
            if value is not None:
                return value.split(",", 1)[0].strip() == secure_value
        return self.scheme == "https"

    def host_allowed(self) -> bool:
        """Whether ``HttpRequest.get_host`` would accept the host (not: 400 DisallowedHost)."""
        if settings.USE_X_FORWARDED_HOST and "HTTP_X_FORWARDED_HOST" in self.META:
            return False  # Django's reading of the forwarded host: left to Django
        host = self.META.get("HTTP_HOST")
        if host is None:
            return False
        allowed = settings.ALLOWED_HOSTS
        if settings.DEBUG and not allowed:
            allowed = [".localhost", "127.0.0.1", "[::1]"]
        domain, _ = split_domain_port(host)
        return bool(domain) and validate_host(domain, allowed)


def usable(request: ShortRequest, body: bytes) -> bool:
    """Whether Django's middleware would let the request through to its view unchanged: no
    query string, an allowed host, no redirect to HTTPS, no refused user agent or ``www.``
    redirect, a body within the limit, JSON in and JSON out."""
    meta = request.META
    return (
        not request.query
        and request.host_allowed()
        and not (settings.SECURE_SSL_REDIRECT and not request.is_secure())
        and not settings.DISALLOWED_USER_AGENTS
        and not settings.PREPEND_WWW
        and len(body) <= settings.TONGITS_MAX_BODY_BYTES
        and meta.get("CONTENT_LENGTH", "").isdigit()
        and meta.get("CONTENT_TYPE", "").lower() in JSON_TYPES
        and meta.get("HTTP_ACCEPT", "").strip().lower() in ACCEPTED
    )


def json_body(body: bytes) -> Any:
    """The body as DRF's parser (``runtime.hardening.LimitedJSONParser``) reads it, or None
    where that parser would refuse it."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    limit = settings.TONGITS_MAX_JSON_DEPTH
    return None if depth(data, limit) > limit else data


def authenticate(request: ShortRequest, view: Any) -> bool:
    """DRF's authentication and permission checks of ``view`` (its classes, in order): True
    with ``request.user`` and ``request.auth`` set when they pass."""
    for authenticator in view.authentication_classes:
        try:
            found = authenticator().authenticate(request)
        except APIException:
            return False
        if found is not None:
            request.user, request.auth = found
            break
    else:
        return False
    return all(p().has_permission(request, view) for p in view.permission_classes)


def throttled(request: ShortRequest, view: Any) -> bool:
    """Whether one of ``view``'s throttles refuses the request (each counts it, as in DRF)."""
    return not all(throttle().allow_request(request, view) for throttle in view.throttle_classes)


def answer(
    request: ShortRequest, data: Any, *, allow: str, headers: dict[str, str] | None = None
) -> Answer:
    """A 200 with ``data`` as DRF's renderer writes it and the headers the view, DRF and
    Django's middleware give it (``Allow``, the language's, the security middleware's,
    ``Content-Length``)."""
    content = ORJSONRenderer().render(data, "application/json", {})
    language = i18n.language_for(request.user, request.META.get("HTTP_ACCEPT_LANGUAGE", ""))
    headers = {**(headers or {}), **i18n.headers_for(language)}
    out = [(b"content-type", b"application/json")]
    out += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    out.append((b"allow", allow.encode("latin-1")))
    out += _security_headers(request.is_secure())
    out.append((b"content-length", str(len(content)).encode()))
    return 200, out, content


_security: dict[tuple, list[tuple[bytes, bytes]]] = {}


def _security_headers(secure: bool) -> list[tuple[bytes, bytes]]:
    """The headers Django's ``SecurityMiddleware`` adds to an answer, made by it once per
    scheme and settings."""
    policy = settings.SECURE_REFERRER_POLICY
    key = (
        secure,
        settings.SECURE_HSTS_SECONDS,
        settings.SECURE_HSTS_INCLUDE_SUBDOMAINS,
        settings.SECURE_HSTS_PRELOAD,
        settings.SECURE_CONTENT_TYPE_NOSNIFF,
        policy if policy is None or isinstance(policy, str) else tuple(policy),
        settings.SECURE_CROSS_ORIGIN_OPENER_POLICY,
    )
    found = _security.get(key)
    if found is None:
        blank = HttpResponse()
        before = set(blank.headers)
        probe = ShortRequest("GET", "/", b"", "https" if secure else "http", {})
        SecurityMiddleware(_no_response).process_response(probe, blank)
        found = [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in blank.items()
            if name not in before
        ]
        _security[key] = found
    return found


def _no_response(request: Any) -> None:
    return None


# ---------------------------------------------------------------- trying one


@dataclass(frozen=True)
class Shortcut:
    """``handle(request, body, match)`` for requests of ``method`` whose path ``path`` matches
    (tested before anything else is built, so other requests pay one comparison)."""

    method: str
    path: re.Pattern[str]
    handle: Callable[[ShortRequest, bytes, re.Match[str]], Answer | None]

    def matches(self, scope: dict[str, Any]) -> re.Match[str] | None:
        if scope.get("method") != self.method:
            return None
        return self.path.match(scope.get("path", ""))


_held = threading.local()  # the database connections this thread opened for shortcuts, and when


def attempt(
    shortcut: Shortcut, match: re.Match[str], scope: dict[str, Any], body: bytes
) -> Answer | None:
    """``shortcut``'s answer, or None (the request goes to Django). Runs in a REST pool thread.
    A shortcut returns None for what it refuses; an exception it raises (a database gone away)
    is logged and passes the request on too, and its connection is not kept."""
    try:
        found = shortcut.handle(ShortRequest.from_scope(scope), body, match)
    except Exception:
        logger.warning("shortcut %s failed; Django answers", shortcut.path.pattern, exc_info=True)
        found = None
        _hand_back(force=True)
    else:
        _hand_back(force=False)
    return found


def _hand_back(*, force: bool) -> None:
    """Keep this thread's connections between shortcuts (a checkout from the pool per request
    is what Django pays), but hand back one that failed, is in a transaction, or has been held
    ``HOLD_SECONDS``."""
    opened: dict[int, float] = getattr(_held, "opened", None) or {}
    now = time.monotonic()
    for conn in connections.all(initialized_only=True):
        raw = conn.connection
        if raw is None:
            continue
        since = opened.setdefault(id(raw), now)
        if force or conn.errors_occurred or conn.in_atomic_block or now - since > HOLD_SECONDS:
            conn.close()
            opened.pop(id(raw), None)
    live = {id(c.connection) for c in connections.all(initialized_only=True) if c.connection}
    _held.opened = {key: at for key, at in opened.items() if key in live}
