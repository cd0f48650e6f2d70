"""The domain error codes of the games API's operations, for the schema's code enums
(``core.api_schema.register``; the views import this module, so the codes are there whenever
the routes are)."""

from __future__ import annotations

from core import api_schema
from games.rules.errors import CODES as RULES_CODES

_TABLE_CONFLICTS = ("already_started", "table_closed", "table_full", "seat_taken")
# Proposing and accepting a rematch: closed, a player gone, a wallet short of the buy-in.
_REMATCH_CONFLICTS = ("rematch_closed", "player_unavailable", "insufficient_chips", "chips_owed")

api_schema.register(
    {
        "tables_create": {
            400: (
                "invalid_rules",
                "invalid_seats",
                "unknown_user",
                "invalid_buy_in",
                "invalid_spectators",
            ),
            409: ("too_many_waiting_tables", "insufficient_chips", "chips_owed"),
        },
        "tables_invitation": {
            409: (*_TABLE_CONFLICTS, "no_invitation", "insufficient_chips", "chips_owed")
        },
        "tables_join": {
            409: (*_TABLE_CONFLICTS, "already_seated", "insufficient_chips", "chips_owed")
        },
        "tables_leave": {403: ("not_a_player",), 409: _TABLE_CONFLICTS},
        "tables_start": {
            403: ("not_a_player",),
            409: (
                *_TABLE_CONFLICTS,
                "table_not_full",
                "invitations_pending",
                "insufficient_chips",
                "chips_owed",
            ),
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
        "games_rematch_propose": {
            403: ("not_a_player",),
            409: (*_REMATCH_CONFLICTS, "match_not_over", "rematch_open"),
        },
        "games_rematch_retrieve": {403: ("not_a_player",), 409: ("no_rematch",)},
        "games_rematch_answer": {
            403: ("not_a_player",),
            409: (*_REMATCH_CONFLICTS, "no_rematch", "already_answered"),
        },
        # A spectator reads the whole stream only once the match is over (409 not_finished).
        "games_replay": {403: ("not_a_player",), 409: ("not_started", "not_finished")},
        "games_audit": {403: ("not_a_player",), 409: ("not_started", "not_finished")},
        "games_export": {403: ("not_a_player",), 409: ("not_started", "not_finished")},
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
            429: ("too_many_streams",),
        },
        "games_stream_ticket": {403: ("not_a_player",), 409: ("not_started",)},
        "me_stream": {401: ("invalid_ticket",), 429: ("too_many_streams",)},
    },
    fields={
        "stale_version": (
            "version",
            {
                "type": "integer",
                "description": 'code "stale_version": the game\'s current version.',
            },
            42,
        ),
        "insufficient_chips": (
            "seat",
            {
                "type": "integer",
                "description": 'code "insufficient_chips" at a table: the seat (0-2) whose wallet '
                "cannot cover the buy-in (absent for an adjustment).",
            },
            1,
        ),
        "too_many_streams": (
            "retry_after",
            {
                "type": "integer",
                "description": 'codes "throttled" and "too_many_streams": seconds to wait (the '
                "Retry-After header).",
            },
            5,
        ),
    },
    details={
        "stale_version": "The game has moved on: fetch it and try again.",
        "not_a_player": "You are not playing at this table.",
        "not_finished": "A spectator may read this once the match is over.",
        "insufficient_chips": "Seat 1 cannot cover the buy-in of 100 chips.",
        "too_many_streams": "You already hold 10 live streams open, the most one account may: "
        "close one you no longer read, then try again.",
    },
)
