"""The domain error codes of the fair-play API's operations, for the schema's code enums
(``core.api_schema.register``; the views import this module)."""

from __future__ import annotations

from core import api_schema

api_schema.register(
    {
        "games_report": {
            400: ("own_seat", "seat_not_a_person"),
            403: ("not_a_player",),
            404: ("not_found",),
            409: ("game_not_finished", "already_reported"),
        },
        "staff_case": {404: ("case_not_found",)},
        "staff_case_decision": {
            400: ("invalid_decision", "invalid_until", "unknown_account"),
            404: ("case_not_found",),
            409: ("case_decided",),
        },
        "staff_suspensions_create": {400: ("invalid_decision", "invalid_until", "unknown_account")},
        "staff_suspension_lift": {
            400: ("invalid_decision",),
            404: ("suspension_not_found",),
            409: ("already_lifted",),
        },
        "me_appeals_create": {409: ("not_suspended", "already_appealed")},
    },
)
