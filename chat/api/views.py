"""Thin views of the table chat: validate the request, call a service or selector, answer.

Posting has a throttle of its own (scope ``chat``, per user: ``TONGITS_RATE_CHAT``), on top of
the limits of the text itself (``chat.services.clean_text``).
"""

from __future__ import annotations

import uuid
from typing import Any

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import status
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import selectors as account_selectors
from chat import selectors, services
from chat.api import error_codes  # noqa: F401  (the codes of these operations, for the schema)
from chat.api.serializers import (
    ChatPageSerializer,
    ChatQuerySerializer,
    HideInputSerializer,
    MessagePostInputSerializer,
    MessageSerializer,
    MuteListSerializer,
    MuteSerializer,
    ReportInputSerializer,
    ReportSerializer,
)
from core.api_errors import error_responses
from ops.throttling import CommandThrottle, ReadThrottle

TAGS = ["chat"]


class ChatThrottle(CommandThrottle):
    """Chat messages per user (``TONGITS_THROTTLE_RATES["chat"]``); reads are not counted."""

    scope = "chat"

    def get_key(self, request: Request, view: Any) -> str | None:
        return super().get_key(request, view) if request.method == "POST" else None


class ChatApi(APIView):
    throttle_classes = [ReadThrottle, ChatThrottle]

    @extend_schema(
        operation_id="games_chat_list",
        summary="The table's chat: the messages you may read, oldest first",
        description="Players read the players' channel; spectators the spectators' one when "
        "the table allows spectator chat; staff both. Messages of users you mute and hidden "
        "ones are left out. Readable from the start until TONGITS_CHAT_KEEP_SECONDS after the "
        "match ended (then 409 `chat_closed`). New messages also arrive on the game's stream "
        "as `chat` events, and `chat_hidden` takes one back.",
        tags=TAGS,
        parameters=[ChatQuerySerializer],
        responses={200: ChatPageSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def get(self, request: Request, game_id: uuid.UUID) -> Response:
        query = ChatQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = selectors.message_list(
            game_id=game_id, user=request.user, after=query.validated_data["after"]
        )
        return Response(ChatPageSerializer(page).data)

    @extend_schema(
        operation_id="games_chat_post",
        summary="Write a message at the table",
        description="1 to 200 characters (TONGITS_CHAT_MAX_LENGTH) once stripped, no control "
        "or format character (400 `invalid`). Players write in `players` while seated; readers "
        "without a seat in `spectators` when the table allows it (403 `channel_not_allowed`). "
        "Its own rate limit per user (TONGITS_RATE_CHAT, 429 `throttled`). Messages are not "
        "game events: they change nothing and are not in the game's hash chain.",
        tags=TAGS,
        request=MessagePostInputSerializer,
        examples=[
            OpenApiExample("to the players", value={"text": "Good luck!"}, request_only=True),
        ],
        responses={201: MessageSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request: Request, game_id: uuid.UUID) -> Response:
        data = MessagePostInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        message = services.message_post(game_id=game_id, user=request.user, **data.validated_data)
        return Response(MessageSerializer(message).data, status=status.HTTP_201_CREATED)


class ChatReportApi(APIView):
    throttle_classes = [CommandThrottle]

    @extend_schema(
        operation_id="games_chat_report",
        summary="Report a message to the moderators",
        description="Once per message (409 `already_reported`), never your own (400 "
        "`own_message`); a message you may not read is 404.",
        tags=TAGS,
        request=ReportInputSerializer,
        responses={201: ReportSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request: Request, game_id: uuid.UUID, message_id: int) -> Response:
        data = ReportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        report = services.message_report(
            game_id=game_id, message_id=message_id, user=request.user, **data.validated_data
        )
        return Response(ReportSerializer(report).data, status=status.HTTP_201_CREATED)


class ChatHideApi(APIView):
    permission_classes = [IsAdminUser]
    throttle_classes = [CommandThrottle]

    @extend_schema(
        operation_id="games_chat_hide",
        summary="Staff: hide a message from every reader from now on",
        description="The log keeps the message, and that it was hidden, when, by whom and why; "
        "open streams of the table get `chat_hidden`. Once (409 `already_hidden`). Staff only "
        "(403 `permission_denied`).",
        tags=TAGS,
        request=HideInputSerializer,
        responses={200: MessageSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request: Request, game_id: uuid.UUID, message_id: int) -> Response:
        data = HideInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        message = services.message_hide(
            game_id=game_id, message_id=message_id, by=request.user, **data.validated_data
        )
        return Response(MessageSerializer(message).data)


class MutesApi(APIView):
    @extend_schema(
        operation_id="me_mutes",
        summary="The players I mute",
        tags=TAGS,
        responses={200: MuteListSerializer, **error_responses(401)},
    )
    def get(self, request: Request) -> Response:
        return Response(
            MuteListSerializer({"results": selectors.mute_list(user=request.user)}).data
        )


class MuteApi(APIView):
    throttle_classes = [CommandThrottle]

    @extend_schema(
        operation_id="me_mutes_put",
        summary="Mute a player: their messages no longer reach me, anywhere",
        description="Neither in chat lists nor on streams, at every table; muting again changes "
        "nothing. They are not told. 400 `cannot_mute_self`.",
        tags=TAGS,
        request=None,
        responses={200: MuteSerializer, **error_responses(400, 401, 404)},
    )
    def put(self, request: Request, username: str) -> Response:
        muted = account_selectors.player_get(username=username)
        row = services.mute(user=request.user, muted=muted)
        return Response(
            MuteSerializer({"username": muted.username, "created_at": row.created_at}).data
        )

    @extend_schema(
        operation_id="me_mutes_delete",
        summary="Unmute a player",
        description="204 whether or not they were muted.",
        tags=TAGS,
        request=None,
        responses={204: None, **error_responses(401, 404)},
    )
    def delete(self, request: Request, username: str) -> Response:
        muted = account_selectors.player_get(username=username)
        services.unmute(user=request.user, muted=muted)
        return Response(status=status.HTTP_204_NO_CONTENT)
