"""``runtime.shortcuts`` reads a request as Django would: its host, its scheme, its headers."""

from __future__ import annotations

import io
from typing import Any

import pytest
from a2wsgi.wsgi import build_environ
from django.core.exceptions import DisallowedHost
from django.core.handlers.wsgi import WSGIRequest

from runtime import shortcuts


def scope(headers: dict[str, str], scheme: str = "http") -> dict[str, Any]:
    return {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "path": "/api/v1/x",
        "raw_path": b"/api/v1/x",
        "root_path": "",
        "scheme": scheme,
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("10.1.2.3", 5000),
        "server": ("127.0.0.1", 8000),
    }


def django_request(found: dict[str, Any]) -> WSGIRequest:
    return WSGIRequest(build_environ(found, io.BytesIO(b"")))  # type: ignore[arg-type]


def test_the_request_carries_what_the_wsgi_environ_does():
    found = scope({"Host": "localhost", "Authorization": "Token abc", "X-Forwarded-For": "1.2.3.4"})
    request = shortcuts.ShortRequest.from_scope(found)
    environ = build_environ(found, io.BytesIO(b""))  # type: ignore[arg-type]
    for key in ("HTTP_HOST", "HTTP_AUTHORIZATION", "HTTP_X_FORWARDED_FOR", "REMOTE_ADDR"):
        assert request.META[key] == environ[key]
    assert request.headers["authorization"] == "Token abc"


@pytest.mark.parametrize(
    "host",
    ["localhost", "localhost:8000", "127.0.0.1", "[::1]:80", "evil.example", "", "local host"],
)
@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("allowed", [["localhost", "127.0.0.1", "[::1]"], [".example"], []])
def test_a_host_is_allowed_exactly_when_django_allows_it(settings, host, debug, allowed):
    settings.DEBUG, settings.ALLOWED_HOSTS = debug, allowed
    found = scope({"Host": host})
    try:
        django_request(found).get_host()
        expected = True
    except DisallowedHost:
        expected = False
    assert shortcuts.ShortRequest.from_scope(found).host_allowed() is expected


@pytest.mark.parametrize("scheme", ["http", "https"])
@pytest.mark.parametrize("forwarded", [None, "https", "http", "https, http"])
def test_the_scheme_is_secure_exactly_when_django_says_so(settings, scheme, forwarded):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    headers = {"Host": "localhost"}
    if forwarded is not None:
        headers["X-Forwarded-Proto"] = forwarded
    found = scope(headers, scheme)
    assert shortcuts.ShortRequest.from_scope(found).is_secure() is django_request(found).is_secure()


def test_a_request_django_would_redirect_to_https_is_left_to_django(settings):
    settings.SECURE_SSL_REDIRECT = True
    headers = {"Host": "localhost", "Content-Type": "application/json", "Content-Length": "2"}
    assert not shortcuts.usable(shortcuts.ShortRequest.from_scope(scope(headers)), b"{}")
    secure = shortcuts.ShortRequest.from_scope(scope(headers, "https"))
    assert shortcuts.usable(secure, b"{}")


def test_an_answer_over_https_carries_the_security_middlewares_headers(settings):
    settings.SECURE_HSTS_SECONDS = 3600
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    request = shortcuts.ShortRequest.from_scope(scope({"Host": "localhost"}, "https"))
    status, headers, body = shortcuts.answer(request, {"a": 1}, allow="POST, OPTIONS")
    found = dict(headers)
    assert status == 200 and body == b'{"a":1}'
    assert found[b"strict-transport-security"] == b"max-age=3600; includeSubDomains"
    assert found[b"x-content-type-options"] == b"nosniff"
    assert found[b"content-length"] == b"7"
    assert found[b"allow"] == b"POST, OPTIONS"
