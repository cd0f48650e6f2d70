"""Django's browser middleware (sessions, CSRF, log-in, messages, clickjacking) for pages only.

The REST API under ``/api/v1/`` authenticates by token in the ``Authorization`` header
(``CachedTokenAuthentication``), never by cookie: a session, a CSRF check of a cookie, a user
from the session, flash messages and ``X-Frame-Options`` on JSON do nothing there, yet cost
every request a good part of its CPU (docs/scaling.md, "The web process's choices"). So for
that prefix these subclasses pass the request straight on; the admin,
the browser table, the schema pages and everything else keep Django's behaviour. Each class
is a subclass of Django's own, so Django's checks (``admin.E408``-``E410``) still find them.

Only the synchronous path (the REST API under the WSGI bridge) skips; an asynchronous request
(a live stream) runs them all, as before.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import middleware as auth
from django.contrib.messages import middleware as messages
from django.contrib.sessions import middleware as sessions
from django.http import HttpRequest, HttpResponseBase
from django.middleware import clickjacking, csrf

#: The token-authenticated REST API (its schema and docs pages are outside it).
API_PREFIX = "/api/v1/"


def is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


class _PagesOnly:
    get_response: Any

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if is_api(request):
            return self.get_response(request)
        return super().__call__(request)  # type: ignore[misc]


class SessionMiddleware(_PagesOnly, sessions.SessionMiddleware):
    pass


class CsrfViewMiddleware(_PagesOnly, csrf.CsrfViewMiddleware):
    def process_view(
        self, request: HttpRequest, callback: Any, callback_args: Any, callback_kwargs: Any
    ) -> HttpResponseBase | None:
        if is_api(request):  # no cookie is read there, so no cross-site request can use one
            return None
        return super().process_view(request, callback, callback_args, callback_kwargs)


class AuthenticationMiddleware(_PagesOnly, auth.AuthenticationMiddleware):
    pass


class MessageMiddleware(_PagesOnly, messages.MessageMiddleware):
    pass


class XFrameOptionsMiddleware(_PagesOnly, clickjacking.XFrameOptionsMiddleware):
    pass
