"""The domain error codes of the matchmaking API's operations, for the schema's code enums."""

from __future__ import annotations

from core import api_schema

api_schema.register(
    {
        "matchmaking_tickets_create": {
            400: ("invalid_room", "invalid_rules", "not_a_friend"),
            409: ("already_searching", "already_seated", "insufficient_chips", "chips_owed"),
        },
        "matchmaking_tickets_cancel": {409: ("already_matched",)},
        "matchmaking_tickets_join": {
            400: ("not_a_friend",),
            409: (
                "already_searching",
                "already_seated",
                "insufficient_chips",
                "chips_owed",
                "ticket_closed",
            ),
        },
        "matchmaking_tickets_decline": {409: ("ticket_closed",)},
    }
)
