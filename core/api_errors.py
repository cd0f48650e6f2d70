"""One shape for every API error: JSON ``{"code": "...", "detail": "..."}``.

``code`` is a stable, machine-readable snake_case string; ``detail`` is text for people.
Validation errors (code ``invalid``) also carry ``fields``: ``{field: [message, ...]}``.

Services and selectors raise domain errors (``core.errors``), which know no HTTP; this
module alone maps their kinds to statuses, in ``HTTP_STATUS``. A view may raise ``ApiError`` for
what only HTTP knows (a malformed header)::

    raise ApiError("Bad header.", code="invalid_idempotency_key")            # 400
    raise ApiError("Not your table.", code="not_seated", status_code=403)

DRF's own exceptions (``NotFound``, ``PermissionDenied(code=...)``, ``ValidationError``) and
Django's ``Http404``, ``PermissionDenied`` and ``ValidationError`` come out in the same shape.

``exception_handler`` is DRF's ``EXCEPTION_HANDLER``; ``not_found``, ``bad_request``,
``permission_denied`` and ``server_error`` are Django's ``handler404/400/403/500`` and answer in
JSON under ``/api/`` (plain Django pages elsewhere); ``api_not_found`` is the catch-all route
that makes unknown ``/api/`` URLs a JSON 404 even when ``DEBUG`` is on.

Every ``detail`` is rendered here, in the answer's language (``runtime.i18n``): the domain
errors' and this module's texts are marked for translation, DRF's and Django's are listed in
``core.framework_texts``; the codes this module answers with a text of its own are registered in
``core.error_texts``.
"""

from __future__ import annotations

import math
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, serializers
from rest_framework.response import Response
from rest_framework.views import set_rollback

from core import error_texts, errors, framework_texts  # noqa: F401  (DRF's and Django's texts)
from core.errors import clip

API_PREFIX = "/api/"
#: What a lost or refused database connection raises (a restart, a failover, a pooler's).
DatabaseUnreachable = (OperationalError, InterfaceError)

# The texts of the codes this module answers by itself (rendered when an answer is written).
DATABASE_UNAVAILABLE = gettext_lazy("The database is unavailable: retry.")
PAYLOAD_TOO_LARGE = gettext_lazy("The request body is too large.")
MALFORMED = gettext_lazy("The request was malformed.")
NO_PERMISSION = gettext_lazy("You do not have permission to do this.")
SERVER_ERROR = gettext_lazy("Internal server error.")
TOO_MANY_REQUESTS = gettext_lazy("Too many requests.")
IDEMPOTENCY_KEY_MALFORMED = gettext_lazy(
    "%(header)s must be 1 to %(max)s printable ASCII characters."
)
error_texts.register("database_unavailable", DATABASE_UNAVAILABLE)
error_texts.register("payload_too_large", PAYLOAD_TOO_LARGE)
error_texts.register("bad_request", MALFORMED)
error_texts.register("permission_denied", NO_PERMISSION)
error_texts.register("server_error", SERVER_ERROR)
error_texts.register("throttled", TOO_MANY_REQUESTS)
error_texts.register("invalid_idempotency_key", IDEMPOTENCY_KEY_MALFORMED)


#: The one table from domain error kinds to HTTP statuses (the most specific class wins).
HTTP_STATUS: dict[type[errors.DomainError], int] = {
    errors.Invalid: 400,
    errors.Unauthenticated: 401,
    errors.NotAllowed: 403,
    errors.NotFound: 404,
    errors.Conflict: 409,
    errors.Refused: 422,
    errors.Throttled: 429,
    errors.Unavailable: 503,
    errors.DomainError: 400,
}


def http_status(exc: errors.DomainError) -> int:
    """The HTTP status of a domain error: its nearest kind in ``HTTP_STATUS``."""
    for cls in type(exc).__mro__:
        if cls in HTTP_STATUS:
            return HTTP_STATUS[cls]
    return 400


class ApiError(exceptions.APIException):
    """An error with a machine-readable ``code``; 400 unless a subclass or caller says otherwise.

    ``extra`` adds keys to the response body (never ``code`` or ``detail``).
    """

    status_code = 400
    default_code = "error"
    default_detail = gettext_lazy("The request could not be processed.")

    def __init__(
        self,
        detail: str | None = None,
        code: str | None = None,
        *,
        status_code: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.code = code or self.default_code
        super().__init__(detail, self.code)
        if status_code is not None:
            self.status_code = status_code
        self.extra = dict(extra or {})


class Conflict(ApiError):
    status_code = 409
    default_code = "conflict"
    default_detail = gettext_lazy("The request conflicts with the current state of the resource.")


class ErrorSerializer(serializers.Serializer):
    """The body of every error response (for the OpenAPI schema)."""

    code = serializers.CharField(help_text="Stable machine-readable error code (snake_case).")
    detail = serializers.CharField(help_text="Human-readable explanation.")
    retry_after = serializers.IntegerField(
        required=False,
        allow_null=True,
        help_text='429 (codes "throttled", "too_many_streams") only: seconds to wait, as the '
        "Retry-After header.",
    )
    fields = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text='Validation errors only (code "invalid"): messages per input field.',
    )


IDEMPOTENCY_HEADER = "Idempotency-Key"
IDEMPOTENCY_MAX = 255


def idempotency_key(request: Any) -> str | None:
    """The request's ``Idempotency-Key`` header (None without one), or 400
    ``invalid_idempotency_key`` for one that is not 1 to 255 printable ASCII characters."""
    key = request.headers.get(IDEMPOTENCY_HEADER)
    if key is None:
        return None
    if not 1 <= len(key) <= IDEMPOTENCY_MAX or not all(" " <= ch <= "~" for ch in key):
        raise ApiError(
            IDEMPOTENCY_KEY_MALFORMED % {"header": IDEMPOTENCY_HEADER, "max": IDEMPOTENCY_MAX},
            code="invalid_idempotency_key",
        )
    return key


def error_responses(*statuses: int) -> dict[int, type[serializers.Serializer]]:
    """``extend_schema(responses={..., **error_responses(400, 401)})``."""
    return {status: ErrorSerializer for status in statuses}


def _messages(detail: Any, path: str = "") -> list[str]:
    """Flatten DRF error details into "field: message" lines."""
    if isinstance(detail, dict):
        out: list[str] = []
        for key, value in detail.items():
            sub = "" if key in ("non_field_errors", "__all__") else str(key)
            out += _messages(value, f"{path}.{sub}" if path and sub else path or sub)
        return out
    if isinstance(detail, list):
        out = []
        for index, value in enumerate(detail):
            # Lists of messages keep the path; lists of nested objects get an index.
            sub = f"{path}[{index}]" if isinstance(value, dict | list) else path
            out += _messages(value, sub)
        return out
    return [clip(f"{path}: {detail}" if path else str(detail))]


def _fields(detail: Any, path: str = "", out: dict[str, list[str]] | None = None) -> dict:
    """Validation errors as ``{field: [message, ...]}``; nested fields get dotted paths
    (``seats.1.kind``), so the documented shape holds for nested serializers too."""
    out = {} if out is None else out
    if isinstance(detail, dict):
        for key, value in detail.items():
            sub = "" if key in ("non_field_errors", "__all__") else str(key)
            _fields(value, f"{path}.{sub}" if path and sub else path or sub, out)
    elif isinstance(detail, list) and any(isinstance(v, dict | list) for v in detail):
        for index, value in enumerate(detail):
            _fields(value, f"{path}[{index}]" if isinstance(value, dict | list) else path, out)
    elif isinstance(detail, list):
        out.setdefault(path or "non_field_errors", []).extend(clip(str(v)) for v in detail)
    else:
        out.setdefault(path or "non_field_errors", []).append(clip(str(detail)))
    return out


def _body(exc: exceptions.APIException) -> dict[str, Any]:
    if isinstance(exc, exceptions.ValidationError):
        body: dict[str, Any] = {
            "code": "invalid",
            "detail": clip(" ".join(_messages(exc.detail)) or _("Invalid input."), 400),
        }
        if isinstance(exc.detail, dict):
            body["fields"] = _fields(exc.detail)
        return body
    if isinstance(exc, ApiError):
        return {**exc.extra, "code": exc.code, "detail": clip(str(exc.detail))}
    if isinstance(exc, exceptions.Throttled):
        retry_after = math.ceil(exc.wait) if exc.wait is not None else None
        detail = (
            _("Too many requests: try again in %(seconds)s s.") % {"seconds": retry_after}
            if retry_after
            else None
        )
        return {
            "code": "throttled",
            "detail": detail or str(TOO_MANY_REQUESTS),
            "retry_after": retry_after,
        }
    code = getattr(exc.detail, "code", None) or exc.default_code
    detail = exc.detail
    if isinstance(detail, dict | list):
        detail = " ".join(_messages(detail))
    # An exception of DRF's own kinds may carry body keys too (accounts' account_suspended).
    return {**getattr(exc, "extra", {}), "code": str(code), "detail": clip(str(detail))}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF ``EXCEPTION_HANDLER``: every known error as ``{"code", "detail"}``.

    Returns None for anything else, which DRF re-raises and Django answers with ``server_error``.
    """
    if isinstance(exc, errors.DomainError):
        headers = {"WWW-Authenticate": "Token"} if isinstance(exc, errors.Unauthenticated) else {}
        set_rollback()
        body = {**exc.extra, "code": exc.code, "detail": clip(str(exc.detail))}
        if isinstance(exc, errors.Throttled):
            headers["Retry-After"] = str(exc.extra["retry_after"])
        elif isinstance(exc, errors.Unavailable):
            headers["Retry-After"] = "5"
        return Response(body, status=http_status(exc), headers=headers)
    if isinstance(exc, DatabaseUnreachable):
        # The database (or its pooler) is away or restarting: nothing was answered, and a
        # command sent with an Idempotency-Key may be sent again as it is (docs/operations.md).
        set_rollback()
        body = {"code": "database_unavailable", "detail": str(DATABASE_UNAVAILABLE)}
        return Response(body, status=503, headers={"Retry-After": "1"})
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(serializers.as_serializer_error(exc))
    elif isinstance(exc, RequestDataTooBig):
        exc = ApiError(str(PAYLOAD_TOO_LARGE), "payload_too_large", status_code=413)
    elif isinstance(exc, SuspiciousOperation):
        exc = ApiError(str(MALFORMED), "bad_request")

    if not isinstance(exc, exceptions.APIException):
        return None

    headers = {}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    if getattr(exc, "wait", None):
        headers["Retry-After"] = str(math.ceil(exc.wait))
    set_rollback()
    return Response(_body(exc), status=exc.status_code, headers=headers)


# --- Django-level handlers (errors raised outside DRF views) ---------------------------------


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def _json(code: str, detail: str, status: int) -> JsonResponse:
    return JsonResponse({"code": code, "detail": detail}, status=status)


@csrf_exempt  # a JSON 404 for any method; CSRF's HTML 403 would hide it on POST
def api_not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    return _json("not_found", _("No API endpoint at %(path)s.") % {"path": clip(request.path)}, 404)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return _json("not_found", _("Not found."), 404)
    return defaults.page_not_found(request, exception)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return _json("bad_request", str(MALFORMED), 400)
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return _json("permission_denied", str(NO_PERMISSION), 403)
    return defaults.permission_denied(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return _json("server_error", str(SERVER_ERROR), 500)
    return defaults.server_error(request)
