"""Reads of the store (selectors read, services write): the catalogue, a player's purchases."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from store.models import Product, Purchase


def products(*, store: str | None = None) -> list[dict[str, Any]]:
    """The active products (of one store, or all), as the apps list them."""
    rows = Product.objects.filter(active=True)
    if store:
        rows = rows.filter(store=store)
    return list(
        rows.order_by("store", "chips", "product_id").values("store", "product_id", "chips")
    )


def purchases_of(user_id: int) -> QuerySet[Purchase]:
    """A player's purchases, newest first (with their refunds)."""
    return Purchase.objects.filter(user_id=user_id).order_by("-id")
