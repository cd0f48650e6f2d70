"""Writes of the table chat: post, report, hide, mute (HackSoft styleguide; reads in
``chat.selectors``).

A post and a hide take the table's chat lock (a transaction-scoped advisory lock on the game id)
before their row gets its id, so a table's message and hide ids grow in the order they commit:
a live stream that has read up to id N never misses a later-committed smaller id. Both send
``wake-game:<id>`` inside their transaction (delivered on commit), and every web process's open
streams of that table read the news (``chat.live``).
"""

from __future__ import annotations

import unicodedata
import uuid
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from chat import selectors
from chat.errors import (
    AlreadyHidden,
    AlreadyReported,
    CannotMuteSelf,
    ChannelNotAllowed,
    InvalidText,
    OwnMessage,
)
from chat.models import Channel, Hidden, Message, MessageText, Mute, Report
from core import notices
from games.live.listener import WAKE_GAME

#: Unicode categories refused in a message: control (Cc: newlines, tabs, escapes...), format
#: (Cf: bidirectional overrides, zero-width characters...) and lone surrogates (Cs).
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})


def clean_text(text: str) -> str:
    """The text as stored: stripped, 1 to ``TONGITS_CHAT_MAX_LENGTH`` characters, with no
    control or format character anywhere (400 ``invalid`` otherwise)."""
    limit = int(settings.TONGITS_CHAT_MAX_LENGTH)
    for char in text:
        if unicodedata.category(char) in REFUSED_CATEGORIES:
            raise InvalidText(
                _("Control and format characters are not allowed (U+%(code)s).")
                % {"code": f"{ord(char):04X}"}
            )
    text = text.strip()
    if not text:
        raise InvalidText(_("A message needs some text."))
    if len(text) > limit:
        raise InvalidText(
            _("At most %(limit)s characters (%(sent)s sent).") % {"limit": limit, "sent": len(text)}
        )
    return text


def _lock(game_id: uuid.UUID) -> None:
    """The table's chat lock, until the transaction ends (see the module's docstring)."""
    with connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 7))", [f"chat:{game_id}"])


def _wake(game_id: uuid.UUID) -> None:
    notices.send(WAKE_GAME, str(game_id))


def message_post(
    *, game_id: uuid.UUID | str, user: Any, text: str, channel: str = Channel.PLAYERS
) -> dict[str, Any]:
    """POST /games/{id}/chat: the new message, as its readers get it. The caller must be able
    to read the game (403 ``not_a_player``), the match started (409 ``not_started``) and its
    chat not closed (409 ``chat_closed``); players write in the players' channel, spectators in
    the spectators' one when the table allows it (403 ``channel_not_allowed``)."""
    text = clean_text(text)
    who = selectors.reader(game_id=game_id, user=user)
    if who.writes is None or who.writes != channel:
        raise ChannelNotAllowed()
    with transaction.atomic():
        _lock(who.game_id)
        message = Message.objects.create(
            game_id=who.game_id, channel=channel, user_id=user.pk, created_at=timezone.now()
        )
        MessageText.objects.create(message=message, text=text)
        _wake(who.game_id)
    return selectors.as_dicts(
        [selectors.message_get(game_id=who.game_id, message_id=message.pk)], staff=who.staff
    )[0]


def _readable(who: selectors.Reader, message_id: int) -> Message:
    """A message of the table the reader may read (404 otherwise: it is not shown to them)."""
    message = selectors.message_get(game_id=who.game_id, message_id=message_id)
    if message.channel not in who.channels:
        raise selectors.MessageNotFound()
    return message


def message_report(
    *, game_id: uuid.UUID | str, message_id: int, user: Any, reason: str = Report.Reason.OTHER
) -> Report:
    """A reader reports a message they may read, once (409 ``already_reported``), never their
    own (400 ``own_message``)."""
    who = selectors.reader(game_id=game_id, user=user)
    message = _readable(who, message_id)
    if message.user_id == user.pk:
        raise OwnMessage()
    try:
        with transaction.atomic():
            return Report.objects.create(message=message, user_id=user.pk, reason=reason)
    except IntegrityError:
        raise AlreadyReported() from None


def message_hide(
    *, game_id: uuid.UUID | str, message_id: int, by: Any, reason: str = ""
) -> dict[str, Any]:
    """Staff withhold a message from every reader from now on (the log keeps that it was
    hidden, when, by whom and why); once (409 ``already_hidden``). Open streams of the table
    get ``chat_hidden``. The permission (``is_staff``) is the API's, and the admin's."""
    message = selectors.message_get(game_id=game_id, message_id=message_id)
    hide(message, by=by, reason=reason)
    message = selectors.message_get(game_id=game_id, message_id=message_id)
    return selectors.as_dicts([message], staff=True)[0]


def hide(message: Message, *, by: Any, reason: str = "") -> Hidden:
    """Record the hide of ``message`` by ``by`` (the API's and the admin action's write)."""
    try:
        with transaction.atomic():
            _lock(message.game_id)
            hidden = Hidden.objects.create(
                message=message, by_id=by.pk, reason=reason[:200], at=timezone.now()
            )
            _wake(message.game_id)
            return hidden
    except IntegrityError:
        raise AlreadyHidden() from None


def mute(*, user: Any, muted: Any) -> Mute:
    """``user`` no longer receives ``muted``'s messages (on any table, live or read); muting
    again changes nothing."""
    if muted.pk == user.pk:
        raise CannotMuteSelf()
    row, _ = Mute.objects.get_or_create(user_id=user.pk, muted_id=muted.pk)
    return row


def unmute(*, user: Any, muted: Any) -> None:
    """Lift a mute (none: nothing to do)."""
    Mute.objects.filter(user_id=user.pk, muted_id=muted.pk).delete()


def forget_user(user_id: int) -> None:
    """An account's deletion: the texts of its messages go (the log keeps that it wrote them,
    where and when), and its mutes, either way."""
    MessageText.objects.filter(message__user_id=user_id).delete()
    Mute.objects.filter(user_id=user_id).delete()
    Mute.objects.filter(muted_id=user_id).delete()
