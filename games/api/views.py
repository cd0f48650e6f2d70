"""Thin views of the games API: validate the request, call a service or selector, answer.

One APIView per operation, each with ``extend_schema`` so ``/api/schema/`` documents its request,
answers and errors. Table ids and game ids are the same UUID.
"""

from __future__ import annotations

import uuid

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api_errors import (
    IDEMPOTENCY_HEADER,
    error_responses,
    idempotency_key,
)
from games import lobby, play, rematch, selectors
from games import presenters as present
from games.api.serializers import (
    AuditSerializer,
    CommandInputSerializer,
    CommandResultSerializer,
    ExportSerializer,
    GamePayloadSerializer,
    InvitationInputSerializer,
    PublicKeysSerializer,
    RematchAnswerInputSerializer,
    RematchSerializer,
    ReplayQuerySerializer,
    ReplaySerializer,
    RoomSerializer,
    SeedInputSerializer,
    TableCreateInputSerializer,
    TableJoinInputSerializer,
    TableListQuerySerializer,
    TableOptionsSerializer,
    TableOutputSerializer,
)
from ops.throttling import CommandThrottle

TABLES = ["tables"]
GAMES = ["games"]

IDEMPOTENCY_PARAMETER = OpenApiParameter(
    IDEMPOTENCY_HEADER,
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=False,
    description="Any unique string up to 255 printable ASCII characters. Sending the same "
    "request again with the same key returns the first answer and appends nothing.",
)


def _example(name: str, value: dict) -> OpenApiExample:
    return OpenApiExample(name, value=value, request_only=True)


COMMAND_EXAMPLES = [
    _example("draw", {"command": {"type": "draw"}, "expected_version": 4}),
    _example("discard", {"command": {"type": "discard", "card": "7H"}, "expected_version": 5}),
    _example(
        "meld", {"command": {"type": "meld", "cards": ["5S", "6S", "7S"]}, "expected_version": 6}
    ),
    _example(
        "lay_off",
        {"command": {"type": "lay_off", "card": "8S", "meld_id": 1}, "expected_version": 7},
    ),
    _example(
        "take discard into a meld",
        {"command": {"type": "take_discard", "cards": ["QD", "QS"]}, "expected_version": 9},
    ),
]
TABLE_EXAMPLES = [
    _example(
        "quick play against two bots",
        {
            "rules": "standard",
            "seats": [
                {"kind": "user"},
                {"kind": "bot", "level": "normal"},
                {"kind": "bot", "level": "hard"},
            ],
        },
    ),
    _example("a table waiting for two players", {"rules": {"preset": "h19", "stake": 10}}),
]


def _table(game_id: uuid.UUID) -> dict:
    game = selectors.table_get(game_id=game_id)
    counts = selectors.spectator_counts([game])
    return TableOutputSerializer(present.table_dict(game, counts[game.pk])).data


class TablesApi(APIView):
    @extend_schema(
        operation_id="tables_create",
        summary="Create a table (rules preset or options; seats: you, open, users or bots)",
        description=(
            "A table of you and bots only (no open seat, no other user) starts at once: the "
            'answer has `"status": "active"` and the server plays the bots. Any other table '
            "waits for its players and `start`. 409 `too_many_waiting_tables`: you already "
            "have `TONGITS_MAX_WAITING_TABLES` (3) tables waiting."
        ),
        tags=TABLES,
        request=TableCreateInputSerializer,
        examples=TABLE_EXAMPLES,
        responses={201: TableOutputSerializer, **error_responses(400, 401, 409, 415)},
    )
    def post(self, request: Request) -> Response:
        data = TableCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        game = lobby.table_create(user=request.user, **data.validated_data)
        return Response(_table(game.pk), status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="tables_list",
        summary="List tables, newest first (default: open tables waiting for players)",
        description="`?watch=1`: the running public tables to watch instead, with their "
        '`spectators` (docs/live.md "Spectators").',
        tags=TABLES,
        parameters=[TableListQuerySerializer],
        responses={200: TableOutputSerializer(many=True), **error_responses(400, 401)},
    )
    def get(self, request: Request) -> Response:
        query = TableListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        games = selectors.table_list(**query.validated_data)
        counts = selectors.spectator_counts(games)
        tables = [present.table_dict(game, counts[game.pk]) for game in games]
        return Response(TableOutputSerializer(tables, many=True).data)


class TableOptionsApi(APIView):
    @extend_schema(
        operation_id="tables_options",
        summary="What a new table may have: rule presets, and bot levels with their ratings",
        description="Each bot level carries the openskill rating it earned against the other "
        "levels (docs/bots.md), on the scale of players' own ratings.",
        tags=TABLES,
        responses={200: TableOptionsSerializer, **error_responses(401)},
    )
    def get(self, request: Request) -> Response:
        return Response(TableOptionsSerializer(selectors.table_options()).data)


class RoomsApi(APIView):
    @extend_schema(
        operation_id="rooms_list",
        summary="Quick play's rooms: a buy-in and its stake, and whether you can sit there",
        description="Create a room's table with its `buy_in` and `rules.stake` (any preset): "
        '`{"rules": {"preset": "standard", "stake": 5}, "buy_in": 100, "seats": [...]}`.',
        tags=TABLES,
        responses={200: RoomSerializer(many=True), **error_responses(401)},
    )
    def get(self, request: Request) -> Response:
        return Response(RoomSerializer(lobby.rooms(user=request.user), many=True).data)


class TableDetailApi(APIView):
    @extend_schema(
        operation_id="tables_retrieve",
        summary="One table: rules, seats, status",
        tags=TABLES,
        responses={200: TableOutputSerializer, **error_responses(401, 404)},
    )
    def get(self, request: Request, game_id: uuid.UUID) -> Response:
        return Response(_table(game_id))


class TableJoinApi(APIView):
    @extend_schema(
        operation_id="tables_join",
        summary="Take an open seat at a table that has not started",
        tags=TABLES,
        request=TableJoinInputSerializer,
        responses={200: TableOutputSerializer, **error_responses(400, 401, 404, 409, 415)},
    )
    def post(self, request: Request, game_id: uuid.UUID) -> Response:
        data = TableJoinInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        seat = data.validated_data.get("seat")
        lobby.table_join(game_id=game_id, user=request.user, seat=seat)
        return Response(_table(game_id))


class TableLeaveApi(APIView):
    @extend_schema(
        operation_id="tables_leave",
        summary="Give up your seat before the start",
        tags=TABLES,
        request=None,
        responses={200: TableOutputSerializer, **error_responses(401, 403, 404, 409)},
    )
    def post(self, request: Request, game_id: uuid.UUID) -> Response:
        lobby.table_leave(game_id=game_id, user=request.user)
        return Response(_table(game_id))


class TableInvitationApi(APIView):
    @extend_schema(
        operation_id="tables_invitation",
        summary="Accept or decline your invitation to a table",
        description="A seat given to you by name is an invitation: the table starts only once "
        "every invited player has accepted. Declining frees the seat. 409 `no_invitation` if "
        "you have no open invitation there (it may have lapsed).",
        tags=TABLES,
        request=InvitationInputSerializer,
        responses={200: TableOutputSerializer, **error_responses(400, 401, 404, 409, 415)},
    )
    def post(self, request: Request, game_id: uuid.UUID) -> Response:
        data = InvitationInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        accept = data.validated_data["answer"] == "accept"
        lobby.table_respond(game_id=game_id, user=request.user, accept=accept)
        return Response(_table(game_id))


class TableStartApi(APIView):
    @extend_schema(
        operation_id="tables_start",
        summary="Start the match (every seat taken, every invitation accepted): deals",
        tags=TABLES,
        request=None,
        responses={200: TableOutputSerializer, **error_responses(401, 403, 404, 409)},
    )
    def post(self, request: Request, game_id: uuid.UUID) -> Response:
        lobby.table_start(game_id=game_id, user=request.user)
        return Response(_table(game_id))


class GameApi(APIView):
    @extend_schema(
        operation_id="games_retrieve",
        summary="Your view of a game: hand, table, counts, turn, version, deadline, legal commands",
        tags=GAMES,
        responses={200: GamePayloadSerializer, **error_responses(401, 403, 404, 409)},
    )
    def get(self, request: Request, game_id: uuid.UUID) -> Response:
        payload = selectors.game_view(game_id=game_id, user=request.user)
        payload["server_time"] = present.iso(timezone.now())  # for the client's clock skew
        return Response(payload)


class GameCommandsApi(APIView):
    throttle_classes = [CommandThrottle]

    @extend_schema(
        operation_id="games_command",
        summary="Play a command for your seat",
        description=(
            "Body: the command and the version your view showed. Errors: 400 malformed body, "
            "403 `not_a_player` / `not_your_seat`, 404, 409 `stale_version` (the body carries "
            "the current `version`) or `not_started`, 422 a move the rules refuse (the rules "
            "core's code: `not_your_turn`, `card_not_in_hand`, `invalid_meld`, ...) or "
            "`idempotency_key_reused`."
        ),
        tags=GAMES,
        parameters=[IDEMPOTENCY_PARAMETER],
        request=CommandInputSerializer,
        examples=COMMAND_EXAMPLES,
        responses={
            200: CommandResultSerializer,
            **error_responses(400, 401, 403, 404, 409, 415, 422),
        },
    )
    def post(self, request: Request, game_id: uuid.UUID) -> Response:
        key = idempotency_key(request)
        data = CommandInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        written = play.submit_command(
            game_id=game_id,
            user=request.user,
            command=data.validated_data["command"],
            expected_version=data.validated_data["expected_version"],
            seat=data.validated_data.get("seat"),
            idempotency_key=key,
            present=present.command_answer,
            client_seed=data.validated_data.get("client_seed"),
        )
        headers = {"Idempotent-Replayed": "true"} if written.replayed else None
        return Response(written.body, headers=headers)


class GameResignApi(APIView):
    throttle_classes = [CommandThrottle]

    @extend_schema(
        operation_id="games_resign",
        summary="Resign a started match: the server plays your seat from now on",
        description=(
            "Appends `resigned`; from then on the server plays your seat at once by the "
            "time-out rule whenever it is to act (no deadline is waited for), so the other two "
            "finish the match. You are placed last in the result and your history records the "
            "resignation. The answer is a command's (the events and your view). 409 "
            "`not_active` (not started, over or aborted), `already_resigned`."
        ),
        tags=GAMES,
        request=None,
        responses={200: CommandResultSerializer, **error_responses(401, 403, 404, 409)},
    )
    def post(self, request: Request, game_id: uuid.UUID) -> Response:
        written = play.resign(game_id, request.user.pk, present=present.command_answer)
        return Response(written.body)


class GameReplayApi(APIView):
    @extend_schema(
        operation_id="games_replay",
        summary="The game at step N: your view during play, everything after the match",
        tags=GAMES,
        parameters=[ReplayQuerySerializer],
        responses={200: ReplaySerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def get(self, request: Request, game_id: uuid.UUID) -> Response:
        query = ReplayQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(
            selectors.replay(game_id=game_id, user=request.user, at=query.validated_data.get("at"))
        )


class GameAuditApi(APIView):
    @extend_schema(
        operation_id="games_audit",
        summary="Verify the hash chain, every deal's commitment and the snapshot",
        tags=GAMES,
        responses={200: AuditSerializer, **error_responses(401, 403, 404, 409)},
    )
    def get(self, request: Request, game_id: uuid.UUID) -> Response:
        return Response(selectors.audit(game_id=game_id, user=request.user))


class GameExportApi(APIView):
    @extend_schema(
        operation_id="games_export",
        summary="The game as one self-contained document for the offline verifier",
        description=(
            "After the match: the rules, the seats, every event whole (seq, actor, recorded_at, "
            "prev_hash, hash, nonce), the deals, the seal and the public keys; check it with "
            "`python -m games.verify export.json` (docs/verifying.md). While the match runs: "
            "what the feed gives you, unsealed."
        ),
        tags=GAMES,
        responses={200: ExportSerializer, **error_responses(401, 403, 404, 409)},
    )
    def get(self, request: Request, game_id: uuid.UUID) -> Response:
        return Response(selectors.export(game_id=game_id, user=request.user))


class PublicKeysApi(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="keys_list",
        summary="The server's Ed25519 seal keys, the retired ones too",
        tags=GAMES,
        auth=[],
        responses={200: PublicKeysSerializer},
    )
    def get(self, request: Request) -> Response:
        return Response(PublicKeysSerializer({"keys": selectors.public_keys()}).data)


class GameSeedApi(APIView):
    @extend_schema(
        operation_id="games_seed",
        summary="Send your seed for the next deal's shuffle",
        description=(
            "Appends `client_seed_set` for your seat; the latest seed each seat sent since the "
            "last deal is mixed into the next one with the server seed committed in "
            "`game_started` (round 1) or `round_ended` (`next_server_seed_hash`). Sent after "
            "that commitment, it proves the server could not choose the deck knowing it. "
            "Errors: 400, 403 `not_a_player`, 404, 409 `stale_version` / `not_started`, 422 "
            "`wrong_phase` (the match is over)."
        ),
        tags=GAMES,
        request=SeedInputSerializer,
        responses={
            200: CommandResultSerializer,
            **error_responses(400, 401, 403, 404, 409, 415, 422),
        },
    )
    def post(self, request: Request, game_id: uuid.UUID) -> Response:
        data = SeedInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        written = play.submit_seed(
            game_id=game_id,
            user=request.user,
            client_seed=data.validated_data["client_seed"],
            expected_version=data.validated_data.get("expected_version"),
            present=present.command_answer,
        )
        return Response(written.body)


REMATCH_CONFLICTS = (
    "`match_not_over` (not finished, or called off), `rematch_open` (already proposed), "
    "`rematch_closed` (it started, was declined or lapsed), `no_rematch`, `already_answered`, "
    "`player_unavailable` (a player's account is gone), `insufficient_chips` (with `seat`)"
)


class GameRematchApi(APIView):
    @extend_schema(
        operation_id="games_rematch_propose",
        summary="Propose to play this finished match again: same seats, rules and stakes",
        description=(
            "One of the match's people proposes; the others accept or decline "
            "(`POST /games/{id}/rematch/answer`) within `TONGITS_REMATCH_SECONDS` (300). When "
            "everyone has accepted, a new table with the same seats at the same indexes (bots "
            "too), the same rules, rated and buy-in starts at once, the seat after this "
            "match's first dealer dealing first; `next_game_id` names it, and its table's "
            "`rematch_of` names this match. A match of you and two bots starts again at once. "
            "Each change reaches the people's `/me/stream` as a `rematch` frame. 409: "
            + REMATCH_CONFLICTS
            + "."
        ),
        tags=GAMES,
        request=None,
        responses={201: RematchSerializer, **error_responses(401, 403, 404, 409)},
    )
    def post(self, request: Request, game_id: uuid.UUID) -> Response:
        proposal = rematch.rematch_propose(game_id=game_id, user=request.user)
        return Response(RematchSerializer(proposal).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        operation_id="games_rematch_retrieve",
        summary="This match's rematch: who answered what, or the next game",
        tags=GAMES,
        responses={200: RematchSerializer, **error_responses(401, 403, 404, 409)},
    )
    def get(self, request: Request, game_id: uuid.UUID) -> Response:
        proposal = rematch.rematch_get(game_id=game_id, user=request.user)
        return Response(RematchSerializer(proposal).data)


class GameRematchAnswerApi(APIView):
    @extend_schema(
        operation_id="games_rematch_answer",
        summary="Accept or decline the proposed rematch of this match",
        description=(
            "The last acceptance starts the next match (`status` started, `next_game_id`); "
            "one decline closes the proposal. Accepting asks, as an invitation does, that your "
            "wallet covers the buy-in. 409: " + REMATCH_CONFLICTS + "."
        ),
        tags=GAMES,
        request=RematchAnswerInputSerializer,
        responses={200: RematchSerializer, **error_responses(400, 401, 403, 404, 409, 415)},
    )
    def post(self, request: Request, game_id: uuid.UUID) -> Response:
        data = RematchAnswerInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        accept = data.validated_data["answer"] == "accept"
        answered = rematch.rematch_answer(game_id=game_id, user=request.user, accept=accept)
        return Response(RematchSerializer(answered).data)
