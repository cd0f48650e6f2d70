"""The language of an answer: the account's, else the request's ``Accept-Language``, else English.

``LanguageMiddleware`` activates the ``Accept-Language`` choice for the request (Django's
gettext then translates every text it reads: error details, validation messages), and stamps the
answer with ``Content-Language`` (and ``Vary: Accept-Language``) in whatever language is active
when it leaves: the account's, when the token authentication found one (``use_account``). It
reads no cookie and no URL prefix, so the API's answer depends only on its headers and the
account, and ``runtime.shortcuts`` can give the same headers without Django (``headers_for``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.translation.trans_real import parse_accept_lang_header


@functools.lru_cache(maxsize=512)
def from_header(accept_language: str) -> str:
    """The supported language an ``Accept-Language`` header asks for first (``fil-PH`` and
    ``tl`` give ``fil``, ``es-419`` gives ``es``), else ``LANGUAGE_CODE``."""
    for code, _quality in parse_accept_lang_header(accept_language[:255]):
        if code == "*":
            break
        if code.partition("-")[0] == "tl":  # Tagalog: what Filipino phones often say
            code = "fil"
        try:
            return translation.get_supported_language_variant(code)
        except LookupError:
            continue
    return settings.LANGUAGE_CODE


def supported(code: str | None) -> str | None:
    """``code`` if it is one of ``LANGUAGES`` (an account's ``language``), else None."""
    if code and code in dict(settings.LANGUAGES):
        return code
    return None


def language_for(user: Any, accept_language: str) -> str:
    """The language of an answer to ``user`` (None or anonymous: the header's choice)."""
    return supported(getattr(user, "language", None)) or from_header(accept_language)


def use_account(user: Any) -> None:
    """Answer this request in the account's language, if it has chosen one."""
    language = supported(getattr(user, "language", None))
    if language is not None:
        translation.activate(language)


def headers_for(language: str) -> dict[str, str]:
    """The headers an answer in ``language`` carries (as the middleware sets them)."""
    return {"Content-Language": language, "Vary": "Accept-Language"}


class LanguageMiddleware:
    """Activate the ``Accept-Language`` choice; stamp ``Content-Language`` on the way out."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        language = from_header(request.META.get("HTTP_ACCEPT_LANGUAGE", ""))
        translation.activate(language)
        request.LANGUAGE_CODE = language
        try:
            response = self.get_response(request)
            patch_vary_headers(response, ("Accept-Language",))
            response.headers.setdefault("Content-Language", translation.get_language())
        finally:
            # The thread serves other requests next (and shortcuts, which pass no middleware).
            translation.deactivate()
        return response
