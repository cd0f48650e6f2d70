"""The domain errors of friends and blocks: plain exceptions with a stable ``code`` (no HTTP).

A person who is not there, is a bot, blocked the caller or was blocked by them is answered with
the games' ``UnknownUser`` (400 ``unknown_user``), the lobby's answer for a name it does not
know, so nobody learns that they were blocked.
"""

from __future__ import annotations

from django.utils.translation import gettext_lazy

from core.errors import Conflict, Invalid


class CannotBefriendSelf(Invalid):
    code = "cannot_befriend_self"
    detail = gettext_lazy("You cannot send a friend request to yourself.")


class CannotBlockSelf(Invalid):
    code = "cannot_block_self"
    detail = gettext_lazy("You cannot block yourself.")


class TooManyFriends(Conflict):
    code = "too_many_friends"
    detail = gettext_lazy("Too many friends: remove one before adding another.")


class TooManyFriendRequests(Conflict):
    code = "too_many_friend_requests"
    detail = gettext_lazy("Too many friend requests are waiting for an answer.")
