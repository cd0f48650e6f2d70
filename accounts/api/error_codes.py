"""The domain error codes of the accounts API's operations, for the schema's code enums
(``core.api_schema.register``; the views import this module)."""

from __future__ import annotations

from typing import Any

from core import api_schema

api_schema.register(
    {
        "auth_register": {400: ("username_taken", "username_reserved")},
        "auth_token": {401: ("invalid_credentials",)},
        "auth_device": {401: ("invalid_credentials",)},
        "auth_apple": {
            401: ("invalid_id_token", "invalid_credentials"),
            409: ("login_method_not_configured",),
            503: ("identity_provider_unavailable",),
        },
        "auth_google": {
            401: ("invalid_id_token", "invalid_credentials"),
            409: ("login_method_not_configured",),
            503: ("identity_provider_unavailable",),
        },
        "me_logins_add": {
            400: ("username_taken", "username_reserved"),
            401: ("invalid_id_token",),
            409: ("login_in_use", "login_exists", "login_method_not_configured"),
            503: ("identity_provider_unavailable",),
        },
        "me_logins_remove": {409: ("last_login",)},
        "me_update": {400: ("display_name_refused",)},
        "me_password": {400: ("wrong_password",)},
        "me_delete": {400: ("wrong_password", "wrong_confirmation")},
        "auth_password_reset_confirm": {400: ("invalid_reset_token",)},
    },
    details={
        "invalid_credentials": "Wrong username or password.",
        "invalid_id_token": "The ID token is not valid: it has expired.",
    },
)


#: The operations a suspended account may still call (``allow_suspended`` views), and the
#: log-ins that refuse it with an appeal-only key.
ANSWERS_SUSPENDED = frozenset(
    {"auth_logout", "auth_logout_all", "me_export", "me_sanctions", "me_appeals_create"}
)
SIGN_INS = ("auth_token", "auth_device", "auth_apple", "auth_google")

api_schema.register(
    {},
    fields={
        "account_suspended": (
            "suspension",
            {
                "type": "object",
                "description": 'code "account_suspended": until when (null: until staff lift '
                "it), the route to appeal at, and, answering a log-in, appeal_token: a key that "
                "opens only GET /me/sanctions, POST /me/appeals and logging out.",
                "properties": {
                    "until": {"type": "string", "format": "date-time", "nullable": True},
                    "appeal": {"type": "string"},
                    "appeal_token": {"type": "string"},
                },
                "required": ["until", "appeal"],
            },
            {"until": "2026-12-31T00:00:00+00:00", "appeal": "/api/v1/me/appeals"},
        )
    },
    details={"account_suspended": "This account is suspended until 2026-12-31 00:00 (UTC)."},
)


def document_suspension(result: dict, generator: Any, request: Any, public: bool) -> dict:
    """drf-spectacular postprocessing hook (before ``core.api_schema.error_codes_hook``): every
    operation a token opens may answer 403 ``account_suspended`` (``accounts.authentication``),
    as do the log-ins, but the few a suspended account may still use."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            operation_id = operation.get("operationId", "")
            secured = any("tokenAuth" in entry for entry in operation.get("security", []))
            if operation_id in ANSWERS_SUSPENDED or not (secured or operation_id in SIGN_INS):
                continue
            responses = operation.setdefault("responses", {})
            responses.setdefault(
                "403",
                {
                    "description": "",
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                    },
                },
            )
            api_schema.register({operation_id: {403: ("account_suspended",)}})
    return result
