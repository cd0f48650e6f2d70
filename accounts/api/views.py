"""Thin views: validate input, call a service or selector, serialize the output."""

import uuid

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.pagination import CursorPagination
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import login_throttle, selectors, services
from accounts.api.serializers import (
    LeaderboardPageSerializer,
    LeaderboardParamsSerializer,
    MatchDetailSerializer,
    PlayerMatchesParamsSerializer,
    PlayerMatchesQuerySerializer,
    PlayerMatchPageSerializer,
    PlayerStatsSerializer,
    RegisterInputSerializer,
    RegisterOutputSerializer,
    TokenInputSerializer,
    TokenOutputSerializer,
    UserOutputSerializer,
)
from tongits_site.api_errors import error_responses
from tongits_site.throttling import RegisterThrottle

TAGS = ["accounts"]
#: No authentication on log-in, register and public reads: a stale or revoked token in the
#: Authorization header is ignored there, never a 401.
PUBLIC: list = []
PLAYERS = ["players"]


class RegisterApi(APIView):
    authentication_classes = PUBLIC
    permission_classes = [AllowAny]
    throttle_classes = [RegisterThrottle]

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
    authentication_classes = PUBLIC
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
        # Blocked attempts are refused before the password is hashed (accounts.login_throttle).
        with login_throttle.guard(request, data.validated_data["username"]):
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


# ---------------------------------------------------------------- players (public)


class HistoryPagination(CursorPagination):
    """Newest first; a cursor stays right while new matches arrive, and costs the same deep in a
    long history as on the first page (no OFFSET, no COUNT)."""

    ordering = ("-ended_at", "-id")
    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 100


FILTERS = set(PlayerMatchesQuerySerializer().fields)


class PlayerMatchesApi(APIView):
    authentication_classes = PUBLIC
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="players_matches",
        summary="A player's finished matches, newest first (paginated by cursor)",
        description="Public. Each match links to its detail and to the game's replay. "
        "Bots have histories too: bot-easy, bot-normal, bot-hard.",
        tags=PLAYERS,
        parameters=[PlayerMatchesParamsSerializer],
        responses={200: PlayerMatchPageSerializer, **error_responses(400, 404)},
    )
    def get(self, request: Request, username: str) -> Response:
        params = PlayerMatchesParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        filters = {k: v for k, v in params.validated_data.items() if k in FILTERS}
        player = selectors.player_get(username=username)
        rows = selectors.player_match_list(player=player, **filters)
        paginator = HistoryPagination()  # reads cursor and page_size itself
        page = paginator.paginate_queryset(rows, request, view=self)
        body = {
            "next": paginator.get_next_link(),
            "previous": paginator.get_previous_link(),
            "results": [selectors.history_item(row) for row in page],
        }
        return Response(PlayerMatchPageSerializer(body).data)


class PlayerStatsApi(APIView):
    authentication_classes = PUBLIC
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="players_stats",
        summary="A player's totals over finished matches, and their rating",
        tags=PLAYERS,
        responses={200: PlayerStatsSerializer, **error_responses(404)},
    )
    def get(self, request: Request, username: str) -> Response:
        player = selectors.player_get(username=username)
        return Response(PlayerStatsSerializer(selectors.player_stats(player=player)).data)


class LeaderboardApi(APIView):
    authentication_classes = PUBLIC
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="leaderboard",
        summary="Players and bots by conservative rating (mu - 3 sigma), best first",
        tags=PLAYERS,
        parameters=[LeaderboardParamsSerializer],
        responses={200: LeaderboardPageSerializer, **error_responses(400)},
    )
    def get(self, request: Request) -> Response:
        query = LeaderboardParamsSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        limit, offset = query.validated_data["limit"], query.validated_data["offset"]
        board = selectors.leaderboard(min_games=query.validated_data["min_games"])
        entries = [
            selectors.leaderboard_entry(stats, offset + index + 1)
            for index, stats in enumerate(board[offset : offset + limit])
        ]
        body = {"count": board.count(), "results": entries}
        return Response(LeaderboardPageSerializer(body).data)


class MatchDetailApi(APIView):
    authentication_classes = PUBLIC
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="matches_retrieve",
        summary="A finished match: seats, placements, chips, ratings, rounds; replay link",
        tags=PLAYERS,
        responses={200: MatchDetailSerializer, **error_responses(404)},
    )
    def get(self, request: Request, game_id: uuid.UUID) -> Response:
        return Response(MatchDetailSerializer(selectors.match_detail(game_id=game_id)).data)
