"""Thin views of the inbox: list (cursor pages, the unread count), mark read (some or all).
Reads and writes are in ``notifications.inbox``; devices are in ``notifications.api.devices``."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api_errors import error_responses
from core.api_pagination import cursor_page
from notifications import inbox, push
from notifications.api.serializers import (
    MarkReadInputSerializer,
    MarkReadOutputSerializer,
    NotificationPageSerializer,
    NotificationQuerySerializer,
)

TAGS = ["notifications"]


class NotificationsApi(APIView):
    @extend_schema(
        operation_id="me_notifications",
        summary="My notifications, newest first (paginated by cursor), and how many are unread",
        description="Your turn, invitations and their answers, matches over, chips settled, "
        "sign-ins from a new device. New ones also arrive on /me/stream as `notification` "
        "events.",
        tags=TAGS,
        parameters=[NotificationQuerySerializer],
        responses={200: NotificationPageSerializer, **error_responses(400, 401)},
    )
    def get(self, request: Request) -> Response:
        query = NotificationQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        rows = inbox.of(request.user, unread=query.validated_data.get("unread", False))
        page = cursor_page(rows, request, self, inbox.as_dict)
        push.with_texts(page["results"])  # in the request's language
        body = {**page, "unread": inbox.unread_count(request.user)}
        return Response(NotificationPageSerializer(body).data)


class NotificationsReadApi(APIView):
    @extend_schema(
        operation_id="me_notifications_read",
        summary="Mark some (ids) or all of my notifications read",
        tags=TAGS,
        request=MarkReadInputSerializer,
        responses={200: MarkReadOutputSerializer, **error_responses(400, 401, 415)},
    )
    def post(self, request: Request) -> Response:
        data = MarkReadInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        ids = None if data.validated_data.get("all") else data.validated_data["ids"]
        marked = inbox.mark_read(request.user, ids)
        body = {"marked": marked, "unread": inbox.unread_count(request.user)}
        return Response(MarkReadOutputSerializer(body).data)
