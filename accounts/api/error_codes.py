"""The domain error codes of the accounts API's operations, for the schema's code enums
(``core.api_schema.register``; the views import this module)."""

from __future__ import annotations

from core import api_schema

api_schema.register(
    {
        "auth_register": {400: ("username_taken", "username_reserved")},
        "auth_token": {401: ("invalid_credentials",)},
        "me_password": {400: ("wrong_password",)},
        "me_delete": {400: ("wrong_password",)},
        "auth_password_reset_confirm": {400: ("invalid_reset_token",)},
    },
    details={"invalid_credentials": "Wrong username or password."},
)
