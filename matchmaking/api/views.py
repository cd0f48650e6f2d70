"""Thin views of the matchmaker: validate, call a service or selector, serialize."""

from __future__ import annotations

import uuid

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api_errors import error_responses
from matchmaking import selectors, services
from matchmaking.api.serializers import MatchTicketInputSerializer, MatchTicketSerializer
from ops.throttling import CommandThrottle

TAGS = ["matchmaking"]


def _ticket(ticket) -> Response:
    return Response(MatchTicketSerializer(selectors.ticket_dict(ticket)).data)


class TicketListApi(APIView):
    throttle_classes = [CommandThrottle]

    @extend_schema(
        operation_id="matchmaking_tickets_create",
        summary="Ask for a table: a ticket in a room (with up to two friends, a party)",
        description="The matcher seats three compatible people (room, rules, rated, a rating "
        "window that widens with the wait; never two where either blocked the other) and starts "
        "the match with the buy-ins escrowed; each gets a `matched` frame on /me/stream and a "
        "`matched` notification. After `bots_after` seconds bots fill the seats left. A party "
        "searches once every friend has joined (POST .../join); they get a `party_invite`.",
        tags=TAGS,
        request=MatchTicketInputSerializer,
        responses={201: MatchTicketSerializer, **error_responses(400, 401, 409, 415)},
    )
    def post(self, request: Request) -> Response:
        data = MatchTicketInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        given = dict(data.validated_data)
        friends = given.pop("with_", [])
        ticket = services.ticket_create(user=request.user, friends=friends, **given)
        body = MatchTicketSerializer(selectors.ticket_dict(ticket)).data
        return Response(body, status=status.HTTP_201_CREATED)


class MyTicketApi(APIView):
    @extend_schema(
        operation_id="me_matchmaking",
        summary="My open ticket (searching, or a party forming); 404 when none",
        tags=TAGS,
        responses={200: MatchTicketSerializer, **error_responses(401, 404)},
    )
    def get(self, request: Request) -> Response:
        return _ticket(selectors.my_ticket(user=request.user))


class TicketApi(APIView):
    throttle_classes = [CommandThrottle]

    @extend_schema(
        operation_id="matchmaking_tickets_retrieve",
        summary="A ticket I am in, or was asked to join",
        tags=TAGS,
        responses={200: MatchTicketSerializer, **error_responses(401, 404)},
    )
    def get(self, request: Request, ticket_id: uuid.UUID) -> Response:
        return _ticket(selectors.ticket_get(user=request.user, ticket_id=ticket_id))

    @extend_schema(
        operation_id="matchmaking_tickets_cancel",
        summary="Leave the queue: the ticket ends for everyone in it (409 once matched)",
        tags=TAGS,
        responses={204: None, **error_responses(401, 404, 409)},
    )
    def delete(self, request: Request, ticket_id: uuid.UUID) -> Response:
        services.ticket_cancel(user=request.user, ticket_id=ticket_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TicketJoinApi(APIView):
    throttle_classes = [CommandThrottle]

    @extend_schema(
        operation_id="matchmaking_tickets_join",
        summary="Join a friend's party; the last to join starts its search",
        tags=TAGS,
        request=None,
        responses={200: MatchTicketSerializer, **error_responses(400, 401, 404, 409)},
    )
    def post(self, request: Request, ticket_id: uuid.UUID) -> Response:
        return _ticket(services.ticket_join(user=request.user, ticket_id=ticket_id))


class TicketDeclineApi(APIView):
    throttle_classes = [CommandThrottle]

    @extend_schema(
        operation_id="matchmaking_tickets_decline",
        summary="Say no to a friend's party (its search is off; its people are told)",
        tags=TAGS,
        request=None,
        responses={204: None, **error_responses(401, 404, 409)},
    )
    def post(self, request: Request, ticket_id: uuid.UUID) -> Response:
        services.ticket_decline(user=request.user, ticket_id=ticket_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
