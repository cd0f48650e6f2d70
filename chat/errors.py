"""The chat's domain errors: plain exceptions with a stable ``code`` (no HTTP here)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy

from core.errors import Conflict, Invalid, NotAllowed, NotFound


class InvalidText(Invalid):
    """The text is empty, too long or holds control or format characters (400 ``invalid``,
    with ``fields`` like a validation error)."""

    code = "invalid"

    def __init__(self, detail: str) -> None:
        super().__init__(f"text: {detail}", extra={"fields": {"text": [detail]}})


class ChannelNotAllowed(NotAllowed):
    code = "channel_not_allowed"
    detail = gettext_lazy(
        "You may not write in this channel: players write in the players' channel, "
        "spectators in the spectators' one when the table allows it."
    )


class ChatClosed(Conflict):
    code = "chat_closed"
    detail = gettext_lazy(
        "This table's chat is closed: the match ended longer ago than chat is kept."
    )


class MessageNotFound(NotFound):
    detail = gettext_lazy("No such message at this table.")


class AlreadyReported(Conflict):
    code = "already_reported"
    detail = gettext_lazy("You have reported this message already.")


class OwnMessage(Invalid):
    code = "own_message"
    detail = gettext_lazy("You cannot report your own message.")


class AlreadyHidden(Conflict):
    code = "already_hidden"
    detail = gettext_lazy("This message is hidden already.")


class CannotMuteSelf(Invalid):
    code = "cannot_mute_self"
    detail = gettext_lazy("You cannot mute yourself.")
