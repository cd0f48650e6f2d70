"""The move's shortcut: ``POST /games/{id}/commands`` answered without Django's handler.

Every step is ``GameCommandsApi``'s, with its own classes and services: its authentication,
permission and throttle classes, ``CommandInputSerializer`` (``quick_command_body`` first, which
gives the same result for the bodies clients send), ``play.submit_command`` with
``presenters.command_answer``, the idempotency key, the ``Idempotent-Replayed`` header. Anything
the view would answer with an error (or that Django's middleware would change) is handed to
Django instead, which answers it as always (``runtime.shortcuts``). A move is the request
players send most; through the handler it cost more web CPU than the move itself.
"""

from __future__ import annotations

import re

from rest_framework.exceptions import APIException

from core.api_errors import idempotency_key
from core.errors import DomainError
from games import play
from games import presenters as present
from games.api.commands import quick_command_body
from games.api.serializers import CommandInputSerializer
from games.api.views import GameCommandsApi
from runtime import shortcuts
from runtime.shortcuts import Answer, ShortRequest

#: The path of ``games-command`` (Django's ``uuid`` converter: lower-case hex only).
COMMANDS = re.compile(
    r"^/api/v1/games/(?P<game_id>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
    r"/commands$"
)
ALLOW = ", ".join(GameCommandsApi().allowed_methods)


def play_command(request: ShortRequest, body: bytes, match: re.Match[str]) -> Answer | None:
    """The view's answer to a command that it would play, or None for Django to answer."""
    view = GameCommandsApi
    if not shortcuts.usable(request, body):
        return None
    data = shortcuts.json_body(body)
    if not isinstance(data, dict) or not shortcuts.authenticate(request, view):
        return None
    try:
        key = idempotency_key(request)
    except APIException:
        return None
    checked = quick_command_body(data)
    if checked is None:  # a body the quick check leaves to the serializer
        serializer = CommandInputSerializer(data=data)
        if not serializer.is_valid():
            return None
        checked = serializer.validated_data
    if shortcuts.throttled(request, view):
        return None
    try:
        written = play.submit_command(
            game_id=match["game_id"],
            user=request.user,
            command=checked["command"],
            expected_version=checked["expected_version"],
            seat=checked.get("seat"),
            idempotency_key=key,
            present=present.command_answer,
            client_seed=checked.get("client_seed"),
        )
    except DomainError:
        return None
    headers = {"Idempotent-Replayed": "true"} if written.replayed else None
    return shortcuts.answer(request, written.body, allow=ALLOW, headers=headers)


SHORTCUTS = [shortcuts.Shortcut("POST", COMMANDS, play_command)]
