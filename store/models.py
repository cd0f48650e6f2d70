"""The store's tables: the catalogue, the purchases credited, the refunds, and every payload.

- ``Product``: what the apps sell (a store, its product id, the chips it gives), edited in the
  admin, seeded from ``TONGITS_STORE_PRODUCTS``.
- ``Purchase``: one store purchase credited to one account, unique per (store, reference): the
  App Store's ``transactionId``, Google Play's ``orderId``. Its ``entry_id`` is the ledger's
  ``purchase`` entry, its ``refund_entry_id`` the ``store_refund`` entry once refunded.
- ``Revocation``: a store said a purchase was refunded or revoked, unique per (store,
  reference); kept even when the purchase was never credited here, so it never will be.
- ``Payload``: everything a store sent or answered (a signed transaction, a notification, an
  API answer) with what was decided, append-only (triggers in migration 0002): the record of a
  dispute, and what ``verify_ledger`` holds each purchase and refund entry against.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Store(models.TextChoices):
    APPLE = "apple", "App Store"
    GOOGLE = "google", "Google Play"


class Product(models.Model):
    """A product the apps sell: its store's product id and the chips one unit gives."""

    store = models.CharField(max_length=8, choices=Store.choices)
    product_id = models.CharField(max_length=100, help_text="The store's product identifier.")
    chips = models.PositiveBigIntegerField(help_text="Chips one purchase of it credits.")
    active = models.BooleanField(default=True, help_text="Listed and honoured.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["store", "product_id"], name="store_product_once"),
            models.CheckConstraint(condition=models.Q(chips__gt=0), name="store_product_chips"),
        ]
        ordering = ["store", "chips", "product_id"]

    def __str__(self) -> str:
        return f"{self.store}:{self.product_id} ({self.chips} chips)"


class Purchase(models.Model):
    """A store purchase credited to an account, once per (store, reference)."""

    id = models.BigAutoField(primary_key=True)
    store = models.CharField(max_length=8, choices=Store.choices)
    reference = models.CharField(
        max_length=200, help_text="App Store transactionId, Google Play orderId."
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="store_purchases"
    )
    product_id = models.CharField(max_length=100)
    chips = models.PositiveBigIntegerField()
    entry_id = models.BigIntegerField(help_text="The ledger's purchase entry.")
    purchase_token = models.TextField(blank=True, default="", help_text="Google Play's token.")
    consumed_at = models.DateTimeField(
        null=True, blank=True, help_text="Google Play: consumed (so it can be bought again)."
    )
    refund_entry_id = models.BigIntegerField(
        null=True, blank=True, help_text="The ledger's store_refund entry, once refunded."
    )
    refunded_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["store", "reference"], name="store_purchase_once"),
        ]
        indexes = [
            models.Index(
                fields=["created_at"],
                name="store_purchase_unconsumed",
                condition=models.Q(store="google", consumed_at__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.store}:{self.reference}"


class Revocation(models.Model):
    """A store refunded or revoked a purchase (whether or not it was credited here)."""

    id = models.BigAutoField(primary_key=True)
    store = models.CharField(max_length=8, choices=Store.choices)
    reference = models.CharField(max_length=200)
    reason = models.CharField(max_length=64, blank=True, default="")
    payload = models.ForeignKey(
        "Payload", on_delete=models.PROTECT, related_name="+", help_text="What said so."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["store", "reference"], name="store_revocation_once"),
        ]

    def __str__(self) -> str:
        return f"{self.store}:{self.reference} revoked"


class Payload(models.Model):
    """One thing a store sent or answered, as received, with what this server decided."""

    class Kind(models.TextChoices):
        TRANSACTION = "transaction", "a signed transaction an app sent"
        NOTIFICATION = "notification", "a store's server notification"
        API = "api", "an answer of the store's API"

    id = models.BigAutoField(primary_key=True)
    store = models.CharField(max_length=8, choices=Store.choices)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    reference = models.CharField(max_length=200, blank=True, default="")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The account that sent it (none for a notification).",
    )
    body = models.TextField(help_text="Exactly as received.")
    decoded = models.JSONField(
        default=dict, blank=True, help_text="What it says once verified (empty if it was not)."
    )
    verified = models.BooleanField(default=False)
    decision = models.CharField(max_length=32, help_text="credited, replayed, refused, ...")
    code = models.CharField(max_length=64, blank=True, default="", help_text="A refusal's code.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["store", "reference"], name="store_payload_reference")]

    def __str__(self) -> str:
        return f"#{self.id} {self.store} {self.kind} {self.reference}: {self.decision}"
