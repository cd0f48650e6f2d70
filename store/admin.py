"""Admin: the catalogue (edited here), and the purchases, refunds and payloads read-only.

A player's purchases, refunds and debt: *Store > Purchases* filtered by the player (search
their username) shows each purchase, its chips, whether it was refunded, and what the player
owes now; each payload a store sent is under *Store > Payloads*, as received, with what was
decided."""

from __future__ import annotations

from django.contrib import admin

from chips import services as chips
from core.admin import ReadOnlyAdmin
from store.models import Payload, Product, Purchase, Revocation


@admin.register(Product)
class ProductAdmin(admin.ModelAdmin):
    list_display = ("store", "product_id", "chips", "active")
    list_filter = ("store", "active")
    search_fields = ("product_id",)

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # purchases name products: turn one off (active) instead


@admin.register(Purchase)
class PurchaseAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "store",
        "reference",
        "user",
        "product_id",
        "chips",
        "created_at",
        "consumed_at",
        "refunded_at",
        "owed_now",
    )
    list_filter = ("store", ("refunded_at", admin.EmptyFieldListFilter))
    search_fields = ("user__username", "reference")
    list_select_related = ("user",)

    @admin.display(description="the player owes now")
    def owed_now(self, obj: Purchase) -> int:
        return chips.owes(obj.user_id)


@admin.register(Revocation)
class RevocationAdmin(ReadOnlyAdmin):
    list_display = ("id", "store", "reference", "reason", "created_at")
    list_filter = ("store",)
    search_fields = ("reference",)


@admin.register(Payload)
class PayloadAdmin(ReadOnlyAdmin):
    list_display = ("id", "store", "kind", "reference", "user", "decision", "code", "created_at")
    list_filter = ("store", "kind", "decision")
    search_fields = ("reference", "user__username")
    list_select_related = ("user",)
