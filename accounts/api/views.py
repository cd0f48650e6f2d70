"""Thin views: validate input, call a service or selector, serialize the output."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import services
from accounts.api.serializers import (
    RegisterInputSerializer,
    RegisterOutputSerializer,
    TokenInputSerializer,
    TokenOutputSerializer,
    UserOutputSerializer,
)
from tongits_site.api_errors import error_responses

TAGS = ["accounts"]


class RegisterApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="auth_register",
        summary="Create an account and its API token",
        tags=TAGS,
        request=RegisterInputSerializer,
        responses={201: RegisterOutputSerializer, **error_responses(400, 415)},
    )
    def post(self, request: Request) -> Response:
        data = RegisterInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user, token = services.user_register(**data.validated_data)
        body = RegisterOutputSerializer({"user": user, "token": token.key}).data
        return Response(body, status=status.HTTP_201_CREATED)


class TokenApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="auth_token",
        summary="Log in: exchange username and password for the API token",
        tags=TAGS,
        request=TokenInputSerializer,
        responses={200: TokenOutputSerializer, **error_responses(400, 401, 415)},
    )
    def post(self, request: Request) -> Response:
        data = TokenInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        token = services.token_obtain(**data.validated_data)
        return Response(TokenOutputSerializer({"token": token.key}).data)


class LogoutApi(APIView):
    @extend_schema(
        operation_id="auth_logout",
        summary="Log out: revoke the API token",
        tags=TAGS,
        request=None,
        responses={204: None, **error_responses(401)},
    )
    def post(self, request: Request) -> Response:
        services.token_revoke(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeApi(APIView):
    @extend_schema(
        operation_id="me",
        summary="The authenticated user",
        tags=TAGS,
        responses={200: UserOutputSerializer, **error_responses(401)},
    )
    def get(self, request: Request) -> Response:
        return Response(UserOutputSerializer(request.user).data)
