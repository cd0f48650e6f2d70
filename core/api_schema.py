"""The error codes of every operation, in the OpenAPI schema (a drf-spectacular postprocessing
hook, ``SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]``).

Views declare which statuses an operation answers (``error_responses(400, 401, ...)``); this
module says which ``code`` each status carries there: ``STATUS_CODES`` for every operation that
answers that status, plus ``OPERATION_CODES`` for the codes only some operations send (domain
errors). ``error_codes_hook`` turns each error response into a component of its own,
``<Operation><status>Error``, whose ``code`` is an enum of exactly those codes, with the extra
fields some codes carry (``fields`` for ``invalid``, ``version`` for ``stale_version``,
``retry_after`` for ``throttled``) and an example. Each app's API registers its operations'
codes (``register``, in its ``api/error_codes.py``): a new code is a line there. The test
suite records every error it provokes and fails if the schema does not list its code
(tests/conftest.py, ``undocumented_errors``).
"""

from __future__ import annotations

from typing import Any

#: Codes any operation that answers the status may send (DRF's and Django's own errors).
STATUS_CODES: dict[int, tuple[str, ...]] = {
    400: ("invalid", "parse_error", "bad_request"),
    401: ("not_authenticated", "authentication_failed", "token_expired"),
    403: ("permission_denied",),
    404: ("not_found",),
    409: (),
    413: ("payload_too_large",),
    415: ("unsupported_media_type",),
    422: (),
    429: ("throttled",),
    503: ("database_unavailable",),
}

#: Domain codes per operation id and status, on top of STATUS_CODES: each app's API registers
#: its own (``register``, from its ``api/error_codes.py``).
OPERATION_CODES: dict[str, dict[int, tuple[str, ...]]] = {}

#: Fields an error body carries besides code and detail: the code that brings each, its schema
#: and an example value.
EXTRA_FIELDS: dict[str, tuple[str, dict[str, Any], Any]] = {
    "invalid": (
        "fields",
        {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
            "description": 'code "invalid": messages per input field (dotted paths when nested).',
        },
        {"command.card": ["This field is required."]},
    ),
    "throttled": (
        "retry_after",
        {"type": "integer", "description": 'code "throttled": seconds to wait (Retry-After).'},
        3,
    ),
}

EXAMPLE_DETAIL = {
    "invalid": "command.card: This field is required.",
    "not_authenticated": "Authentication credentials were not provided.",
    "not_found": "Not found.",
}


def register(
    operations: dict[str, dict[int, tuple[str, ...]]],
    *,
    fields: dict[str, tuple[str, dict[str, Any], Any]] | None = None,
    details: dict[str, str] | None = None,
) -> None:
    """An app's API declares the domain codes its operations answer per status, the extra body
    fields some codes bring (name, schema, example) and example details. Called once per app,
    from a module its views import; the codes then show in the schema's enums."""
    for operation_id, statuses in operations.items():
        merged = OPERATION_CODES.setdefault(operation_id, {})
        for status, codes in statuses.items():
            merged[status] = tuple(dict.fromkeys((*merged.get(status, ()), *codes)))
    EXTRA_FIELDS.update(fields or {})
    EXAMPLE_DETAIL.update(details or {})


def codes_for(operation_id: str, status: int) -> tuple[str, ...]:
    """Every code ``operation_id`` may answer with ``status``, as the schema lists them."""
    extra = OPERATION_CODES.get(operation_id, {}).get(status, ())
    return tuple(dict.fromkeys((*STATUS_CODES.get(status, ()), *extra)))


def document_unavailable(result: dict, generator: Any, request: Any, public: bool) -> dict:
    """drf-spectacular postprocessing hook: every operation may answer 503
    ``database_unavailable`` (the database or its pooler restarting, a failover), with
    ``Retry-After``; a command sent again with its Idempotency-Key is safe
    (``core.api_errors``)."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.get("responses") if isinstance(operation, dict) else None
            if responses is None or "503" in responses:
                continue
            responses["503"] = {
                "description": 'The database is unavailable for a moment: code "database_'
                'unavailable"; retry after Retry-After seconds.',
                "headers": {
                    "Retry-After": {
                        "schema": {"type": "integer"},
                        "description": "Seconds to wait before trying again.",
                    }
                },
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            }
    return result


def _camel(operation_id: str) -> str:
    return "".join(part.capitalize() for part in operation_id.split("_"))


def _example(code: str, status: int) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "detail": EXAMPLE_DETAIL.get(code, f"{code} ({status})")}
    if code in EXTRA_FIELDS:
        name, _, value = EXTRA_FIELDS[code]
        body[name] = value
    return body


def error_codes_hook(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Give each operation's error responses a component with its ``code`` enum."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for methods in result.get("paths", {}).values():
        for operation in methods.values():
            operation_id = operation.get("operationId", "")
            for status_text, response in operation.get("responses", {}).items():
                if not status_text.isdigit() or int(status_text) < 400:
                    continue
                media = response.get("content", {}).get("application/json")
                if not media or media.get("schema") != {"$ref": "#/components/schemas/Error"}:
                    continue
                status = int(status_text)
                codes = codes_for(operation_id, status)
                if not codes:
                    raise ValueError(f"{operation_id} {status}: no error codes listed")
                properties: dict[str, Any] = {
                    "code": {"type": "string", "enum": list(codes)},
                    "detail": {"type": "string", "description": "Human-readable explanation."},
                }
                for code in codes:
                    if code in EXTRA_FIELDS:
                        name, schema, _ = EXTRA_FIELDS[code]
                        properties[name] = schema
                name = f"{_camel(operation_id)}Error{status}"
                schemas[name] = {
                    "type": "object",
                    "description": f"An error of {operation_id} with status {status}.",
                    "properties": properties,
                    "required": ["code", "detail"],
                }
                media["schema"] = {"$ref": f"#/components/schemas/{name}"}
                main = "stale_version" if "stale_version" in codes else codes[-1]
                media["examples"] = {main: {"value": _example(main, status)}}
                if not response.get("description"):
                    response["description"] = "Codes: " + ", ".join(codes) + "."
    return result
