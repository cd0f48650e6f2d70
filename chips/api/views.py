"""Thin views of the chips API: a player's wallet, its statement and daily bonus; staff
adjustments. Services write (``chips.services``), selectors read (``chips.selectors``)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from chips import selectors, services
from chips.api.serializers import (
    AdjustmentInputSerializer,
    AdjustmentOutputSerializer,
    DailyBonusOutputSerializer,
    HouseQuerySerializer,
    HouseSerializer,
    StaffWalletSerializer,
    StatementPageSerializer,
    StatementQuerySerializer,
    WalletSerializer,
    WalletUpdateSerializer,
)
from chips.errors import WalletNotFound
from chips.models import Entry
from core.api_errors import IDEMPOTENCY_HEADER, error_responses, idempotency_key
from core.api_pagination import cursor_page

TAGS = ["chips"]


class WalletApi(APIView):
    @extend_schema(
        operation_id="me_wallet",
        summary="My chips: available, in play, and the daily bonus",
        tags=TAGS,
        responses={200: WalletSerializer, **error_responses(401)},
    )
    def get(self, request: Request) -> Response:
        return Response(WalletSerializer(selectors.wallet(user_id=request.user.pk)).data)

    @extend_schema(
        operation_id="me_wallet_update",
        summary="Show or hide my balance on the chips leaderboard",
        tags=TAGS,
        request=WalletUpdateSerializer,
        responses={200: WalletSerializer, **error_responses(400, 401, 415)},
    )
    def patch(self, request: Request) -> Response:
        data = WalletUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.set_listed(user_id=request.user.pk, listed=data.validated_data["listed"])
        return Response(WalletSerializer(selectors.wallet(user_id=request.user.pk)).data)


class WalletEntriesApi(APIView):
    @extend_schema(
        operation_id="me_wallet_entries",
        summary="My wallet's entries, newest first (paginated by cursor)",
        description="Each ledger entry that moved chips into or out of my wallet: its cause "
        "(signup_grant, daily_bonus, buy_in, payout, refund, adjustment, account_deleted), "
        "the amount, the balance after it, and the match it concerns.",
        tags=TAGS,
        parameters=[StatementQuerySerializer],
        responses={200: StatementPageSerializer, **error_responses(400, 401)},
    )
    def get(self, request: Request) -> Response:
        query = StatementQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        rows = selectors.statement(user_id=request.user.pk)
        body = cursor_page(rows, request, self, selectors.statement_item)
        return Response(StatementPageSerializer(body).data)


class DailyBonusApi(APIView):
    @extend_schema(
        operation_id="me_wallet_daily",
        summary="Claim today's bonus (once per UTC day)",
        description="201 with the entry and the wallet after it. Claimed already today: 409 "
        "`already_claimed` with `next_at` (the next UTC midnight); nothing is paid twice, "
        "however many requests race.",
        tags=TAGS,
        request=None,
        responses={201: DailyBonusOutputSerializer, **error_responses(401, 409)},
    )
    def post(self, request: Request) -> Response:
        posted = services.daily_bonus_claim(user_id=request.user.pk)
        posting = selectors.statement(user_id=request.user.pk).get(entry_id=posted.entry_id)
        wallet = selectors.wallet(user_id=request.user.pk)
        body = {"entry": selectors.statement_item(posting), "wallet": wallet}
        return Response(DailyBonusOutputSerializer(body).data, status=status.HTTP_201_CREATED)


def _player(username: str):
    user = get_user_model().objects.filter(username__iexact=username, is_bot=False).first()
    if user is None:
        raise WalletNotFound()
    return user


class StaffWalletApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="wallets_retrieve",
        summary="Staff: a player's chips",
        tags=TAGS,
        responses={200: StaffWalletSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request: Request, username: str) -> Response:
        user = _player(username)
        body = {**selectors.wallet(user_id=user.pk), "username": user.username}
        return Response(StaffWalletSerializer(body).data)


class StaffAdjustmentApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="wallets_adjust",
        summary="Staff: grant or correct a player's chips (an adjustment entry, with a reason)",
        description="Posts an `adjustment` entry between the player's wallet and the house: "
        "never an edit of an entry. A negative amount the wallet cannot cover is 409 "
        "`insufficient_chips`. With an Idempotency-Key, a retry returns the first adjustment "
        "(`replayed`); the same key with another body is 422 `idempotency_key_reused`.",
        tags=TAGS,
        request=AdjustmentInputSerializer,
        parameters=[
            OpenApiParameter(
                IDEMPOTENCY_HEADER,
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                required=False,
                description="Up to 255 printable ASCII characters; a retry posts nothing more.",
            )
        ],
        responses={
            201: AdjustmentOutputSerializer,
            **error_responses(400, 401, 403, 404, 409, 415, 422),
        },
    )
    def post(self, request: Request, username: str) -> Response:
        key = idempotency_key(request)
        data = AdjustmentInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = _player(username)
        posted, balance = services.adjust(
            user_id=user.pk, staff_id=request.user.pk, key=key, **data.validated_data
        )
        amount = Entry.objects.get(pk=posted.entry_id).data.get("amount")
        body = {
            "entry": posted.entry_id,
            "username": user.username,
            "amount": amount,
            "balance_after": balance,
            "replayed": not posted.created,
        }
        return Response(AdjustmentOutputSerializer(body).data, status=status.HTTP_201_CREATED)


class HouseApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="house_retrieve",
        summary="Staff: the house's chips now and day by day",
        description="The house's balance (minus every chip it handed out: grants, bonuses, "
        "purchases; plus what it took in: service fees, store refunds, deleted accounts' "
        "chips), and per UTC day what each cause moved and the balance at the day's end.",
        tags=TAGS,
        parameters=[HouseQuerySerializer],
        responses={200: HouseSerializer, **error_responses(400, 401, 403)},
    )
    def get(self, request: Request) -> Response:
        query = HouseQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        body = selectors.house(days=query.validated_data.get("days", 30))
        return Response(HouseSerializer(body).data)
