"""The domain error codes of the chips API's operations, for the schema's code enums
(``core.api_schema.register``; the views import this module)."""

from __future__ import annotations

from core import api_schema

api_schema.register(
    {
        "me_wallet_daily": {
            409: ("already_claimed", "no_daily_bonus", "wallet_closed", "chips_owed")
        },
        "wallets_adjust": {
            400: ("invalid_adjustment", "invalid_idempotency_key"),
            409: ("insufficient_chips", "wallet_closed"),
            422: ("idempotency_key_reused",),
        },
    },
    fields={
        "chips_owed": (
            "owed",
            {
                "type": "integer",
                "description": 'code "chips_owed": the chips still owed from a refunded purchase.',
            },
            150,
        ),
        "already_claimed": (
            "next_at",
            {
                "type": "string",
                "format": "date-time",
                "description": 'code "already_claimed": when the next daily bonus may be claimed.',
            },
            "2026-12-03T00:00:00Z",
        ),
    },
    details={
        "chips_owed": "You owe 150 chips from a refunded purchase: buy or win them back first.",
        "already_claimed": "Today's bonus is claimed; the next one from 2026-12-03T00:00:00Z.",
    },
)
