"""Thin views of the store API: the catalogue, purchases from the App Store and Google Play,
and the stores' server notifications. Services write (``store.services``), selectors read."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from chips import selectors as chips_selectors
from core.api_errors import error_responses
from store import selectors, services
from store.api import error_codes  # noqa: F401  (the operations' error codes, for the schema)
from store.api.serializers import (
    AppleNotificationSerializer,
    AppleTransactionSerializer,
    CreditedSerializer,
    GooglePurchaseSerializer,
    NotificationResultSerializer,
    ProductQuerySerializer,
    ProductSerializer,
    PubSubPushSerializer,
)

TAGS = ["store"]
CREDIT_TEXT = (
    "201 with the entry and your wallet when credited now; 200 with the same entry when this "
    "account sent the purchase before (nothing new is credited); 409 `purchase_claimed` when "
    "another account did. Every refusal has a code of its own and credits nothing."
)


def _credited(request: Request, credited: services.Credited) -> Response:
    purchase = credited.purchase
    body = {
        "store": purchase.store,
        "reference": purchase.reference,
        "product_id": purchase.product_id,
        "chips": purchase.chips,
        "entry": purchase.entry_id,
        "replayed": credited.replayed,
        "refunded": purchase.refund_entry_id is not None,
        "wallet": chips_selectors.wallet(user_id=request.user.pk),
    }
    code = status.HTTP_200_OK if credited.replayed else status.HTTP_201_CREATED
    return Response(CreditedSerializer(body).data, status=code)


class ProductsApi(APIView):
    @extend_schema(
        operation_id="store_products",
        summary="The chips on sale: each store's active products",
        tags=TAGS,
        parameters=[ProductQuerySerializer],
        responses={200: ProductSerializer(many=True), **error_responses(400, 401)},
    )
    def get(self, request: Request) -> Response:
        query = ProductQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        rows = selectors.products(store=query.validated_data.get("store"))
        return Response(ProductSerializer(rows, many=True).data)


class AppleTransactionsApi(APIView):
    @extend_schema(
        operation_id="store_apple_transactions",
        summary="Credit an App Store purchase (a StoreKit 2 signed transaction)",
        description="The JWS is verified with Apple's App Store Server Library: its chain up "
        "to the configured Apple root, its signature, this app's bundle id and the server's "
        "environment. Its product's chips are credited once per transactionId. " + CREDIT_TEXT,
        tags=TAGS,
        request=AppleTransactionSerializer,
        responses={
            200: CreditedSerializer,
            201: CreditedSerializer,
            **error_responses(400, 401, 409, 413, 415, 422, 503),
        },
    )
    def post(self, request: Request) -> Response:
        data = AppleTransactionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        credited = services.apple_transaction(
            user_id=request.user.pk, signed_transaction=data.validated_data["signed_transaction"]
        )
        return _credited(request, credited)


class GooglePurchasesApi(APIView):
    @extend_schema(
        operation_id="store_google_purchases",
        summary="Credit a Google Play purchase (its product id and purchase token)",
        description="The purchase is read from the Play Developer API (purchases.products.get): "
        "it must be purchased (not pending, not cancelled), of this app and of that product. Its "
        "chips are credited once per orderId, then it is consumed. " + CREDIT_TEXT,
        tags=TAGS,
        request=GooglePurchaseSerializer,
        responses={
            200: CreditedSerializer,
            201: CreditedSerializer,
            **error_responses(400, 401, 409, 413, 415, 422, 503),
        },
    )
    def post(self, request: Request) -> Response:
        data = GooglePurchaseSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        credited = services.google_purchase(user_id=request.user.pk, **data.validated_data)
        return _credited(request, credited)


class AppleNotificationsApi(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="store_apple_notifications",
        summary="App Store Server Notifications V2 (for Apple's servers)",
        description="The signedPayload is verified as a transaction is. REFUND and REVOKE take "
        "the transaction's chips back, once however often they arrive, and before its purchase "
        "they keep it from ever being credited. Answered 200 only once processed, so Apple "
        "sends it again otherwise.",
        tags=TAGS,
        auth=[],
        request=AppleNotificationSerializer,
        responses={
            200: NotificationResultSerializer,
            **error_responses(400, 409, 413, 415, 422, 503),
        },
    )
    def post(self, request: Request) -> Response:
        data = AppleNotificationSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        decision = services.apple_notification(signed_payload=data.validated_data["signedPayload"])
        return Response(NotificationResultSerializer({"decision": decision}).data)


class GoogleNotificationsApi(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="store_google_notifications",
        summary="Google Play real-time developer notifications (a Pub/Sub push)",
        description="Authorization: Bearer <the push subscription's OIDC token>, signed by "
        "Google for the configured audience and service account. A voidedPurchaseNotification "
        "takes the order's chips back, once; other notifications are acknowledged.",
        tags=TAGS,
        auth=[],
        request=PubSubPushSerializer,
        responses={
            200: NotificationResultSerializer,
            **error_responses(400, 401, 409, 413, 415, 503),
        },
    )
    def post(self, request: Request) -> Response:
        services.check_push(authorization=request.headers.get("Authorization", ""))
        raw = request.body.decode("utf-8", "replace")  # kept as received (read before .data)
        data = PubSubPushSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        decision = services.google_notification(body=request.data, raw=raw)
        return Response(NotificationResultSerializer({"decision": decision}).data)
