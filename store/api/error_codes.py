"""The domain error codes of the store API's operations, for the schema's code enums
(``core.api_schema.register``; the views import this module)."""

from __future__ import annotations

from core import api_schema

_CREDIT = ("unknown_product", "purchase_revoked", "wrong_app")

api_schema.register(
    {
        "store_apple_transactions": {
            400: ("invalid_signed_data",),
            409: ("store_not_configured", "purchase_claimed", "wallet_closed"),
            422: (*_CREDIT, "wrong_environment"),
            503: ("store_unavailable",),
        },
        "store_apple_notifications": {
            400: ("invalid_signed_data",),
            409: ("store_not_configured",),
            422: ("wrong_app", "wrong_environment"),
            503: ("store_unavailable",),
        },
        "store_google_purchases": {
            409: ("store_not_configured", "purchase_claimed", "wallet_closed"),
            422: (
                *_CREDIT,
                "product_mismatch",
                "purchase_pending",
                "purchase_cancelled",
                "purchase_consumed",
                "invalid_purchase_token",
            ),
            503: ("store_unavailable",),
        },
        "store_google_notifications": {
            400: ("invalid_notification",),
            401: ("invalid_push_token",),
            409: ("store_not_configured",),
            503: ("store_unavailable",),
        },
    },
    details={
        "purchase_claimed": "This purchase was credited to another account.",
        "store_not_configured": "Purchases from this store are not set up on this server.",
    },
)
