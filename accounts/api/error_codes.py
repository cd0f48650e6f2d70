"""The domain error codes of the accounts API's operations, for the schema's code enums
(``core.api_schema.register``; the views import this module)."""

from __future__ import annotations

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
