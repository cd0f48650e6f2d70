"""Thin views of friends and blocks: validate the request, call a service or selector, answer.

Writes count as commands (``TONGITS_RATE_COMMANDS`` per user), reads as reads.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api_errors import error_responses
from ops.throttling import CommandThrottle, ReadThrottle
from social import selectors, services
from social.api import error_codes  # noqa: F401  (the codes of these operations, for the schema)
from social.api.serializers import (
    BlockListSerializer,
    BlockSerializer,
    FriendListSerializer,
    FriendSerializer,
    UsernameInputSerializer,
)

TAGS = ["friends"]
NOT_AVAILABLE = (
    "A name nobody has, a bot, or a person either of you blocked: 400 `unknown_user`, the same "
    "answer."
)


class WriteThrottle(CommandThrottle):
    """Friend and block changes per user, as commands; reads are not counted here."""

    def get_key(self, request: Request, view: Any) -> str | None:
        return None if request.method in ("GET", "HEAD") else super().get_key(request, view)


def _created(changed: bool) -> int:
    return status.HTTP_201_CREATED if changed else status.HTTP_200_OK


class FriendsApi(APIView):
    throttle_classes = [ReadThrottle, WriteThrottle]

    @extend_schema(
        operation_id="me_friends",
        summary="My friends (with their presence) and the friend requests either way",
        description="Friends show their presence (playing, online, or offline with when they "
        "were last seen) unless they hide it; changes arrive on /me/stream as `presence` "
        "frames (docs/friends.md).",
        tags=TAGS,
        responses={200: FriendListSerializer, **error_responses(401)},
    )
    def get(self, request: Request) -> Response:
        return Response(FriendListSerializer(selectors.friend_list(user=request.user)).data)

    @extend_schema(
        operation_id="me_friends_add",
        summary="Ask someone to be friends, or accept their request",
        description="201 when a request was sent (they get a `friend_request` notification) or "
        "their request accepted; 200 with the state when nothing changed (a friend already, "
        f"or asked already). {NOT_AVAILABLE} Yourself: 400 `cannot_befriend_self`. At most "
        "TONGITS_MAX_FRIENDS (500) friends and TONGITS_MAX_FRIEND_REQUESTS (100) requests "
        "waiting, sent or received: 409 `too_many_friends` / `too_many_friend_requests`.",
        tags=TAGS,
        request=UsernameInputSerializer,
        examples=[OpenApiExample("ask", value={"username": "ben"}, request_only=True)],
        responses={
            200: FriendSerializer,
            201: FriendSerializer,
            **error_responses(400, 401, 409, 415),
        },
    )
    def post(self, request: Request) -> Response:
        data = UsernameInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        entry, changed = services.friend_add(user=request.user, **data.validated_data)
        return Response(FriendSerializer(entry).data, status=_created(changed))


class FriendApi(APIView):
    throttle_classes = [WriteThrottle]

    @extend_schema(
        operation_id="me_friends_remove",
        summary="End a friendship, withdraw my request or decline theirs",
        description="204 whether or not there was one; 404 for a name nobody has.",
        tags=TAGS,
        request=None,
        responses={204: None, **error_responses(401, 404)},
    )
    def delete(self, request: Request, username: str) -> Response:
        services.friend_remove(user=request.user, username=username)
        return Response(status=status.HTTP_204_NO_CONTENT)


class BlocksApi(APIView):
    throttle_classes = [ReadThrottle, WriteThrottle]

    @extend_schema(
        operation_id="me_blocks",
        summary="The people I block",
        tags=TAGS,
        responses={200: BlockListSerializer, **error_responses(401)},
    )
    def get(self, request: Request) -> Response:
        return Response(
            BlockListSerializer({"results": selectors.block_list(user=request.user)}).data
        )

    @extend_schema(
        operation_id="me_blocks_add",
        summary="Block someone: no friendship, chat, invitations or tables together",
        description="Ends your friendship or requests with them; from then on neither of you "
        "reads the other's chat, invites the other, asks the other to be friends or is matched "
        "with the other, and they are not told (they get the answer a name nobody has gets). "
        "201 for a new block, 200 when you block them already. A name nobody has or a bot: 400 "
        "`unknown_user`; yourself: 400 `cannot_block_self`. Mutes (chat only) are apart.",
        tags=TAGS,
        request=UsernameInputSerializer,
        examples=[OpenApiExample("block", value={"username": "ben"}, request_only=True)],
        responses={200: BlockSerializer, 201: BlockSerializer, **error_responses(400, 401, 415)},
    )
    def post(self, request: Request) -> Response:
        data = UsernameInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        entry, created = services.block_add(user=request.user, **data.validated_data)
        return Response(BlockSerializer(entry).data, status=_created(created))


class BlockApi(APIView):
    throttle_classes = [WriteThrottle]

    @extend_schema(
        operation_id="me_blocks_remove",
        summary="Unblock someone",
        description="204 whether or not you blocked them (what the block ended stays ended); "
        "404 for a name nobody has.",
        tags=TAGS,
        request=None,
        responses={204: None, **error_responses(401, 404)},
    )
    def delete(self, request: Request, username: str) -> Response:
        services.block_remove(user=request.user, username=username)
        return Response(status=status.HTTP_204_NO_CONTENT)
