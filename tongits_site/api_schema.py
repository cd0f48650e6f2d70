"""The error codes of every operation, in the OpenAPI schema (a drf-spectacular postprocessing
hook, ``SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]``).

Views declare which statuses an operation answers (``error_responses(400, 401, ...)``); this
module says which ``code`` each status carries there: ``STATUS_CODES`` for every operation that
answers that status, plus ``OPERATION_CODES`` for the codes only some operations send (domain
errors). ``error_codes_hook`` turns each error response into a component of its own,
``<Operation><status>Error``, whose ``code`` is an enum of exactly those codes, with the extra
fields some codes carry (``fields`` for ``invalid``, ``version`` for ``stale_version``,
``retry_after`` for ``throttled``) and an example. A new code is a line here; the test suite
records every error it provokes and fails if the schema does not list its code
(tests/conftest.py, ``undocumented_errors``).
"""

from __future__ import annotations

from typing import Any

from games.rules.errors import CODES as RULES_CODES

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
}

_TABLE_CONFLICTS = ("already_started", "table_closed", "table_full", "seat_taken")

#: Domain codes per operation id and status, on top of STATUS_CODES.
OPERATION_CODES: dict[str, dict[int, tuple[str, ...]]] = {
    "auth_register": {400: ("username_taken", "username_reserved")},
    "auth_token": {401: ("invalid_credentials",)},
    "tables_create": {
        400: ("invalid_rules", "invalid_seats", "unknown_user", "invalid_buy_in"),
        409: ("too_many_waiting_tables", "insufficient_chips"),
    },
    "tables_invitation": {409: (*_TABLE_CONFLICTS, "no_invitation", "insufficient_chips")},
    "tables_join": {409: (*_TABLE_CONFLICTS, "already_seated", "insufficient_chips")},
    "tables_leave": {403: ("not_a_player",), 409: _TABLE_CONFLICTS},
    "tables_start": {
        403: ("not_a_player",),
        409: (*_TABLE_CONFLICTS, "table_not_full", "invitations_pending", "insufficient_chips"),
    },
    "me_wallet_daily": {409: ("already_claimed", "no_daily_bonus", "wallet_closed")},
    "wallets_adjust": {
        400: ("invalid_adjustment", "invalid_idempotency_key"),
        409: ("insufficient_chips", "wallet_closed"),
        422: ("idempotency_key_reused",),
    },
    "games_retrieve": {403: ("not_a_player",), 409: ("not_started",)},
    "games_command": {
        400: ("invalid_idempotency_key",),
        403: ("not_a_player", "not_your_seat"),
        409: ("stale_version", "not_started"),
        422: (*RULES_CODES, "idempotency_key_reused"),
    },
    "games_resign": {
        403: ("not_a_player",),
        409: ("not_started", "not_active", "already_resigned", "stale_version"),
    },
    "games_events": {403: ("not_a_player",), 409: ("not_started",)},
    "games_replay": {403: ("not_a_player",), 409: ("not_started",)},
    "games_audit": {403: ("not_a_player",), 409: ("not_started",)},
    "games_export": {403: ("not_a_player",), 409: ("not_started",)},
    "games_seed": {
        403: ("not_a_player", "not_your_seat"),
        409: ("stale_version", "not_started"),
        422: ("bad_command", "wrong_phase"),
    },
    "games_stream": {
        400: ("invalid_last_event_id",),
        401: ("invalid_ticket",),
        403: ("not_a_player",),
        409: ("not_started",),
    },
    "games_stream_ticket": {403: ("not_a_player",), 409: ("not_started",)},
    "me_stream": {401: ("invalid_ticket",)},
    "me_password": {400: ("wrong_password",)},
    "me_delete": {400: ("wrong_password",)},
    "auth_password_reset_confirm": {400: ("invalid_reset_token",)},
}

#: Fields an error body carries besides code and detail, and the code that brings each.
EXTRA_FIELDS: dict[str, tuple[str, dict[str, Any]]] = {
    "invalid": (
        "fields",
        {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
            "description": 'code "invalid": messages per input field (dotted paths when nested).',
        },
    ),
    "stale_version": (
        "version",
        {"type": "integer", "description": 'code "stale_version": the game\'s current version.'},
    ),
    "throttled": (
        "retry_after",
        {"type": "integer", "description": 'code "throttled": seconds to wait (Retry-After).'},
    ),
    "insufficient_chips": (
        "seat",
        {
            "type": "integer",
            "description": 'code "insufficient_chips" at a table: the seat (0-2) whose wallet '
            "cannot cover the buy-in (absent for an adjustment).",
        },
    ),
    "already_claimed": (
        "next_at",
        {
            "type": "string",
            "format": "date-time",
            "description": 'code "already_claimed": when the next daily bonus may be claimed.',
        },
    ),
}

EXAMPLE_DETAIL = {
    "invalid": "command.card: This field is required.",
    "stale_version": "The game has moved on: fetch it and try again.",
    "not_authenticated": "Authentication credentials were not provided.",
    "not_found": "Not found.",
    "not_a_player": "You are not playing at this table.",
    "invalid_credentials": "Wrong username or password.",
    "insufficient_chips": "Seat 1 cannot cover the buy-in of 100 chips.",
    "already_claimed": "Today's bonus is claimed; the next one from 2026-12-03T00:00:00Z.",
}


def codes_for(operation_id: str, status: int) -> tuple[str, ...]:
    """Every code ``operation_id`` may answer with ``status``, as the schema lists them."""
    extra = OPERATION_CODES.get(operation_id, {}).get(status, ())
    return tuple(dict.fromkeys((*STATUS_CODES.get(status, ()), *extra)))


def _camel(operation_id: str) -> str:
    return "".join(part.capitalize() for part in operation_id.split("_"))


def _example(code: str, status: int) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "detail": EXAMPLE_DETAIL.get(code, f"{code} ({status})")}
    if code == "invalid":
        body["fields"] = {"command.card": ["This field is required."]}
    elif code == "stale_version":
        body["version"] = 42
    elif code == "throttled":
        body["retry_after"] = 3
    elif code == "insufficient_chips":
        body["seat"] = 1
    elif code == "already_claimed":
        body["next_at"] = "2026-12-03T00:00:00Z"
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
                        name, schema = EXTRA_FIELDS[code]
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
