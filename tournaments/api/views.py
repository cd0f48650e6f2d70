"""Thin views of the tournaments: validate, call a service or selector, serialize."""

from __future__ import annotations

import uuid

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.permissions import IsAdminUser, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api_errors import error_responses
from ops.throttling import CommandThrottle
from tournaments import seasons, selectors, services
from tournaments.api.serializers import (
    RegistrationInputSerializer,
    TournamentDetailSerializer,
    TournamentExportSerializer,
    TournamentInputSerializer,
    TournamentListSerializer,
    WeeklyBoardSerializer,
)
from tournaments.errors import InvalidTournament
from tournaments.models import Tournament

TAGS = ["tournaments"]


def _detail(request: Request, tournament_id: uuid.UUID, code: int = 200) -> Response:
    body = selectors.tournament_detail(tournament_id=tournament_id, user=request.user)
    return Response(TournamentDetailSerializer(body).data, status=code)


class TournamentListApi(APIView):
    throttle_classes = [CommandThrottle]

    def get_permissions(self):
        return [IsAdminUser()] if self.request.method == "POST" else [IsAuthenticated()]

    @extend_schema(
        operation_id="tournaments_list",
        summary="Tournaments, by status (registering, running, finished, cancelled)",
        tags=TAGS,
        parameters=[
            OpenApiParameter("status", str, enum=Tournament.Status.values, required=False),
        ],
        responses={200: TournamentListSerializer, **error_responses(400, 401)},
    )
    def get(self, request: Request) -> Response:
        wanted = request.query_params.get("status")
        if wanted is not None and wanted not in Tournament.Status.values:
            raise InvalidTournament()
        found = selectors.tournament_list(status=wanted)
        body = {"results": selectors.summaries(found, request.user)}
        return Response(TournamentListSerializer(body).data)

    @extend_schema(
        operation_id="tournaments_create",
        summary="Create a tournament (staff): a sit-and-go, or scheduled at starts_at",
        description="Entrants are drawn onto tables of three; each table's winner goes on, the "
        "final table's match ranks its three. The seating seed's commitment is published now; "
        "the manifest (entrants and their seeds) is fixed at the start.",
        tags=TAGS,
        request=TournamentInputSerializer,
        responses={201: TournamentDetailSerializer, **error_responses(400, 401, 403, 415)},
    )
    def post(self, request: Request) -> Response:
        data = TournamentInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        given = dict(data.validated_data)
        tournament = services.tournament_create(user=request.user, **given)
        return _detail(request, tournament.pk, status.HTTP_201_CREATED)


class TournamentApi(APIView):
    @extend_schema(
        operation_id="tournaments_retrieve",
        summary="One tournament: entrants, stages, tables with their games, standings, prizes",
        tags=TAGS,
        responses={200: TournamentDetailSerializer, **error_responses(401, 404)},
    )
    def get(self, request: Request, tournament_id: uuid.UUID) -> Response:
        return _detail(request, tournament_id)


class TournamentRegistrationApi(APIView):
    throttle_classes = [CommandThrottle]

    @extend_schema(
        operation_id="tournaments_register",
        summary="Register: the buy-in goes to the tournament's escrow, the fee to the house",
        tags=TAGS,
        request=RegistrationInputSerializer,
        responses={201: TournamentDetailSerializer, **error_responses(400, 401, 404, 409)},
    )
    def post(self, request: Request, tournament_id: uuid.UUID) -> Response:
        data = RegistrationInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.register(
            user=request.user, tournament_id=tournament_id, seed=data.validated_data.get("seed")
        )
        return _detail(request, tournament_id, status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="tournaments_unregister",
        summary="Unregister before the start: the buy-in and the fee come back",
        tags=TAGS,
        responses={204: None, **error_responses(401, 404, 409)},
    )
    def delete(self, request: Request, tournament_id: uuid.UUID) -> Response:
        services.unregister(user=request.user, tournament_id=tournament_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TournamentCancelApi(APIView):
    permission_classes = [IsAdminUser]
    throttle_classes = [CommandThrottle]

    @extend_schema(
        operation_id="tournaments_cancel",
        summary="Cancel (staff): every buy-in and fee refunded once",
        tags=TAGS,
        request=None,
        responses={200: TournamentDetailSerializer, **error_responses(401, 403, 404, 409)},
    )
    def post(self, request: Request, tournament_id: uuid.UUID) -> Response:
        services.cancel(tournament_id=tournament_id)
        return _detail(request, tournament_id)


class TournamentExportApi(APIView):
    @extend_schema(
        operation_id="tournaments_export",
        summary="A finished tournament as one sealed document for the offline verifier",
        description="The manifest, the revealed seed, every table with its match's export, "
        "the standings, the prize entries, the tournament seal and the server's keys: "
        "`python -m games.verify export.json` checks it with no server.",
        tags=TAGS,
        responses={200: TournamentExportSerializer, **error_responses(401, 404, 409)},
    )
    def get(self, request: Request, tournament_id: uuid.UUID) -> Response:
        return Response(selectors.export(tournament_id=tournament_id, user=request.user))


class WeeklyLeaderboardApi(APIView):
    @extend_schema(
        operation_id="leaderboards_weekly",
        summary="A room's weekly leaderboard: this week's, or a past week's by its date",
        description="Rated matches people finished at the room's tables this week: 3 points a "
        "match won, 1 a round won (ties: net chips). A finished week is archived with its final "
        "standings and its rewards paid once (`past_weeks` lists them).",
        tags=["leaderboards"],
        parameters=[
            OpenApiParameter("room", str, required=False, description='"buy_in:stake"'),
            OpenApiParameter("week", str, required=False, description="YYYY-MM-DD"),
        ],
        responses={200: WeeklyBoardSerializer, **error_responses(400, 401, 404)},
    )
    def get(self, request: Request) -> Response:
        body = seasons.weekly(
            room=request.query_params.get("room"), week=request.query_params.get("week")
        )
        return Response(WeeklyBoardSerializer(body).data)
