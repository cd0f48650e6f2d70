"""Input limits at the edge: every malformed request gets a 4xx JSON answer, never a 500.

- ``RequestLimitsMiddleware`` (first in ``MIDDLEWARE``): a body declared larger than
  ``TONGITS_MAX_BODY_BYTES`` is refused with 413 ``payload_too_large`` before anything reads it;
  a path holding NUL or another control character is 404 ``not_found`` (no name of ours has
  one, and PostgreSQL text cannot hold NUL), a query string holding one 400 ``bad_request``.
- ``LimitedJSONParser``: DRF's JSON parser (orjson) that also refuses bodies nested deeper than
  ``TONGITS_MAX_JSON_DEPTH`` and bodies longer than the limit that came without a length.
- error details quote at most a hundred or so characters of what a client sent
  (``core.errors.clip``).

The middleware answers before ``runtime.i18n.LanguageMiddleware`` has run, so it renders its
texts in the ``Accept-Language`` choice itself and stamps ``Content-Language`` the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import BaseParser

from core import error_texts
from core.errors import clip
from runtime import i18n

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


# The refusals' texts (the middleware's, and the parser's body over the limit).
TOO_LARGE = gettext_lazy("The request body is larger than %(limit)s bytes.")
NOT_A_LENGTH = gettext_lazy("Content-Length is not a number.")
CONTROL_IN_PATH = gettext_lazy("Not found: the path holds a control character.")
MALFORMED_QUERY = gettext_lazy("The query string is malformed.")
CONTROL_IN_QUERY = gettext_lazy("The query string holds a control character.")
error_texts.register("payload_too_large", TOO_LARGE)
error_texts.register("bad_request", NOT_A_LENGTH, MALFORMED_QUERY, CONTROL_IN_QUERY)
error_texts.register("not_found", CONTROL_IN_PATH)


def _error(request: HttpRequest, code: str, status: int, text: Any, **values: Any) -> JsonResponse:
    """The JSON error, its text rendered in the language the request asks for."""
    language = i18n.from_header(request.META.get("HTTP_ACCEPT_LANGUAGE", ""))
    with translation.override(language):
        detail = str(text) % values if values else str(text)
    return JsonResponse(
        {"code": code, "detail": detail}, status=status, headers=i18n.headers_for(language)
    )


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
            return _error(request, "bad_request", 400, NOT_A_LENGTH)
        limit = settings.TONGITS_MAX_BODY_BYTES
        if declared > limit:
            return _error(request, "payload_too_large", 413, TOO_LARGE, limit=limit)
        if _has_control(request.path):  # no resource of ours is named with one
            return _error(request, "not_found", 404, CONTROL_IN_PATH)
        try:
            query = request.GET
        except Exception:  # a query string Django cannot decode
            return _error(request, "bad_request", 400, MALFORMED_QUERY)
        for key, values in query.lists():
            if _has_control(key) or any(_has_control(v) for v in values):
                return _error(request, "bad_request", 400, CONTROL_IN_QUERY)
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
    default_detail = gettext_lazy("The request body is too large.")


class LimitedJSONParser(BaseParser):
    """JSON (orjson) no longer than ``TONGITS_MAX_BODY_BYTES`` and no deeper than
    ``TONGITS_MAX_JSON_DEPTH``: a request of ours never needs more, and deep nesting is how a
    recursive parser or serializer is made to fall over."""

    media_type = "application/json"

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        limit = settings.TONGITS_MAX_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(TOO_LARGE % {"limit": limit})
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise ParseError(clip(_("JSON parse error - %(error)s") % {"error": exc})) from None
        max_depth = settings.TONGITS_MAX_JSON_DEPTH
        if depth(data, max_depth) > max_depth:
            raise ParseError(
                _("JSON parse error - nested deeper than %(depth)s levels.") % {"depth": max_depth}
            )
        return data
