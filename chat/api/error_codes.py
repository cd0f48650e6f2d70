"""The domain error codes of the chat API's operations, for the schema's code enums
(``core.api_schema.register``; the views import this module)."""

from __future__ import annotations

from core import api_schema

_READ = {403: ("not_a_player",), 409: ("not_started", "chat_closed")}

api_schema.register(
    {
        "games_chat_list": _READ,
        "games_chat_post": {
            403: ("not_a_player", "channel_not_allowed"),
            409: ("not_started", "chat_closed"),
        },
        "games_chat_report": {
            400: ("own_message",),
            403: ("not_a_player",),
            409: ("not_started", "chat_closed", "already_reported"),
        },
        "games_chat_hide": {409: ("already_hidden",)},
        "me_mutes_put": {400: ("cannot_mute_self",)},
    },
    details={
        "chat_closed": "This table's chat is closed: the match ended longer ago than chat is kept.",
        "channel_not_allowed": "You may not write in this channel.",
    },
)
