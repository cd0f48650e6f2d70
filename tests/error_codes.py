"""Every API error the test suite provokes, checked against the schema's code enums.

``tests/conftest.py`` wraps Django's request handler for the whole session: each JSON error
answer (status >= 400) under ``/api/`` is recorded as (path template, method, status, code). At
the end of the session ``undocumented_errors`` compares them with the live schema; any status an
operation does not declare, or any code missing from that status's enum, fails the run.
"""

from __future__ import annotations

import json
import re
from typing import Any

from django.core.handlers.base import BaseHandler

#: (schema path, method, status, code) of every API error answered during the session.
SEEN: set[tuple[str, str, int, str]] = set()


def _route(request: Any) -> str | None:
    match = getattr(request, "resolver_match", None)
    if match is None or not match.route:
        return None
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", match.route).lstrip("^").rstrip("$")


def record(request: Any, response: Any) -> None:
    if response.status_code < 400 or not request.path.startswith("/api/"):
        return
    if getattr(response, "streaming", False):
        return
    if not response.get("Content-Type", "").startswith("application/json"):
        return
    try:
        code = json.loads(response.content)["code"]
    except (ValueError, KeyError, TypeError):
        return
    route = _route(request)
    if route is not None:
        SEEN.add((route, request.method.lower(), response.status_code, code))


def install() -> None:
    """Record every response of the test client and of in-process servers."""
    if getattr(BaseHandler, "_records_errors", False):
        return
    sync, asynchronous = BaseHandler.get_response, BaseHandler.get_response_async

    def get_response(self, request):
        response = sync(self, request)
        record(request, response)
        return response

    async def get_response_async(self, request):
        response = await asynchronous(self, request)
        record(request, response)
        return response

    BaseHandler.get_response = get_response
    BaseHandler.get_response_async = get_response_async
    BaseHandler._records_errors = True


def live_schema() -> dict[str, Any]:
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def undocumented_errors(seen: set[tuple[str, str, int, str]], schema: dict[str, Any]) -> list[str]:
    """The recorded errors the schema does not declare (on documented operations)."""
    problems = []
    components = schema["components"]["schemas"]
    for path, method, status, code in sorted(seen):
        operation = schema["paths"].get(path, {}).get(method)
        if operation is None:  # an undocumented URL or method (a JSON 404/405)
            continue
        response = operation["responses"].get(str(status))
        if response is None:
            problems.append(f"{method.upper()} {path}: status {status} ({code}) not declared")
            continue
        ref = response["content"]["application/json"]["schema"]["$ref"]
        enum = components[ref.rsplit("/", 1)[1]]["properties"]["code"].get("enum")
        if enum is None or code not in enum:
            problems.append(f"{method.upper()} {path}: {status} code {code!r} not in {enum}")
    return problems
