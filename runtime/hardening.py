"""Input limits at the edge: every malformed request gets a 4xx JSON answer, never a 500.

- ``RequestLimitsMiddleware`` (first in ``MIDDLEWARE``): a body declared larger than
  ``TONGITS_MAX_BODY_BYTES`` is refused with 413 ``payload_too_large`` before anything reads it;
  a path holding NUL or another control character is 404 ``not_found`` (no name of ours has
  one, and PostgreSQL text cannot hold NUL), a query string holding one 400 ``bad_request``.
- ``LimitedJSONParser``: DRF's JSON parser (orjson) that also refuses bodies nested deeper than
  ``TONGITS_MAX_JSON_DEPTH`` and bodies longer than the limit that came without a length.
- error details quote at most a hundred or so characters of what a client sent
  (``core.errors.clip``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import BaseParser

from core.errors import clip

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def _error(code: str, detail: str, status: int) -> JsonResponse:
    return JsonResponse({"code": code, "detail": detail}, status=status)


class RequestLimitsMiddleware:
    """413 for bodies over the limit (by ``Content-Length``), 404 for control characters in the
    path, 400 in the query string. Runs before sessions, CSRF and the views."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = request.META.get("CONTENT_LENGTH") or "0"
        try:
            declared = int(length)
        except ValueError:
            return _error("bad_request", "Content-Length is not a number.", 400)
        limit = settings.TONGITS_MAX_BODY_BYTES
        if declared > limit:
            return _error(
                "payload_too_large", f"The request body is larger than {limit} bytes.", 413
            )
        if _has_control(request.path):  # no resource of ours is named with one
            return _error("not_found", "Not found: the path holds a control character.", 404)
        try:
            query = request.GET
        except Exception:  # a query string Django cannot decode
            return _error("bad_request", "The query string is malformed.", 400)
        for key, values in query.lists():
            if _has_control(key) or any(_has_control(v) for v in values):
                return _error("bad_request", "The query string holds a control character.", 400)
        return self.get_response(request)


def depth(value: Any, limit: int) -> int:
    """The nesting depth of a parsed JSON value, walking no deeper than ``limit`` + 1."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if level > limit:
            return level
        stack.extend((child, level + 1) for child in children)
    return deepest


class PayloadTooLarge(APIException):
    status_code = 413
    default_code = "payload_too_large"
    default_detail = "The request body is too large."


class LimitedJSONParser(BaseParser):
    """JSON (orjson) no longer than ``TONGITS_MAX_BODY_BYTES`` and no deeper than
    ``TONGITS_MAX_JSON_DEPTH``: a request of ours never needs more, and deep nesting is how a
    recursive parser or serializer is made to fall over."""

    media_type = "application/json"

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        limit = settings.TONGITS_MAX_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(f"The request body is larger than {limit} bytes.")
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise ParseError(clip(f"JSON parse error - {exc}")) from None
        max_depth = settings.TONGITS_MAX_JSON_DEPTH
        if depth(data, max_depth) > max_depth:
            raise ParseError(f"JSON parse error - nested deeper than {max_depth} levels.")
        return data
