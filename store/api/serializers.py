"""Serializers of the store API (validation in, plain JSON out; no model writes here)."""

from __future__ import annotations

from rest_framework import serializers

from chips.api.serializers import WalletSerializer
from core.api_fields import (
    QuerySerializer,
    StrictCharField,
    StrictChoiceField,
    StrictRegexField,
)
from store.models import Store

#: A compact JWS: three base64url parts joined by dots.
JWS = r"^[A-Za-z0-9_=-]*\.[A-Za-z0-9_=-]*\.[A-Za-z0-9_=-]*$"
#: Pub/Sub's message data: base64.
BASE64 = r"^[A-Za-z0-9+/=]*$"

#: What a notification's processing decided.
DECISIONS = ["refunded", "refund_repeated", "refund_before_purchase", "ignored"]


class ProductSerializer(serializers.Serializer):
    store = serializers.ChoiceField(choices=Store.values)
    product_id = serializers.CharField(help_text="The store's product identifier.")
    chips = serializers.IntegerField(help_text="Chips one purchase of it credits.")


class ProductQuerySerializer(QuerySerializer):
    store = StrictChoiceField(
        choices=Store.values, required=False, help_text="One store's products (else both)."
    )


class AppleTransactionSerializer(serializers.Serializer):
    signed_transaction = StrictRegexField(
        JWS,
        max_length=16000,
        help_text="StoreKit 2's Transaction.jwsRepresentation: the JWS the App Store signed.",
    )


class GooglePurchaseSerializer(serializers.Serializer):
    product_id = StrictCharField(max_length=150, help_text="The product bought (its SKU).")
    purchase_token = StrictCharField(
        max_length=4096, help_text="Play Billing's Purchase.getPurchaseToken()."
    )


class CreditedSerializer(serializers.Serializer):
    store = serializers.ChoiceField(choices=Store.values)
    reference = serializers.CharField(
        help_text="The App Store's transactionId, Google Play's orderId."
    )
    product_id = serializers.CharField()
    chips = serializers.IntegerField(help_text="Chips the purchase credited.")
    entry = serializers.IntegerField(help_text="The ledger's purchase entry.")
    replayed = serializers.BooleanField(
        help_text="true: credited before (this account sent it already); nothing new."
    )
    refunded = serializers.BooleanField(help_text="The store has refunded it since.")
    wallet = WalletSerializer(help_text="Your chips after it.")


class AppleNotificationSerializer(serializers.Serializer):
    signedPayload = StrictRegexField(  # noqa: N815 (Apple's field name)
        JWS, max_length=48000, help_text="The notification, a JWS the App Store signed."
    )


class PubSubMessageSerializer(serializers.Serializer):
    data = StrictRegexField(
        BASE64, max_length=16000, help_text="The developer notification: JSON, base64-encoded."
    )
    messageId = StrictCharField(required=False, max_length=200)  # noqa: N815
    message_id = StrictCharField(required=False, max_length=200)
    publishTime = StrictCharField(required=False, max_length=100)  # noqa: N815
    publish_time = StrictCharField(required=False, max_length=100)
    attributes = serializers.DictField(child=serializers.CharField(), required=False)


class PubSubPushSerializer(serializers.Serializer):
    message = PubSubMessageSerializer()
    subscription = StrictCharField(required=False, max_length=500)
    deliveryAttempt = serializers.IntegerField(required=False)  # noqa: N815


class NotificationResultSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(
        choices=DECISIONS,
        help_text="refunded: chips taken back now; refund_repeated: known already; "
        "refund_before_purchase: recorded, so the purchase is never credited; ignored: "
        "nothing to do for this type.",
    )
