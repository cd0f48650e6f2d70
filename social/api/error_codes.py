"""The domain error codes of the friends and blocks API's operations, for the schema's code enums
(``core.api_schema.register``; the views import this module)."""

from __future__ import annotations

from core import api_schema

api_schema.register(
    {
        "me_friends_add": {
            400: ("unknown_user", "cannot_befriend_self"),
            409: ("too_many_friends", "too_many_friend_requests"),
        },
        "me_blocks_add": {400: ("unknown_user", "cannot_block_self")},
    },
    details={
        "too_many_friends": "Too many friends: remove one before adding another.",
        "too_many_friend_requests": "Too many friend requests are waiting for an answer.",
    },
)
