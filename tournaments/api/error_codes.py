"""The domain error codes of the tournaments API's operations, for the schema's code enums."""

from __future__ import annotations

from core import api_schema

api_schema.register(
    {
        "tournaments_list": {400: ("invalid_tournament",)},
        "leaderboards_weekly": {400: ("invalid_room", "invalid_week")},
        "tournaments_create": {400: ("invalid_tournament", "invalid_rules")},
        "tournaments_register": {
            409: (
                "insufficient_chips",
                "chips_owed",
                "tournament_full",
                "registration_closed",
                "already_registered",
            ),
        },
        "tournaments_unregister": {409: ("registration_closed", "not_registered")},
        "tournaments_cancel": {409: ("tournament_over",)},
        "tournaments_export": {409: ("tournament_not_finished",)},
    }
)
