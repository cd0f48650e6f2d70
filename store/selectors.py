"""Reads of the store (selectors read, services write): the catalogue, a player's purchases."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from store.models import Payload, Product, Purchase


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


def _sources(store: str, decoded: dict[str, Any]) -> set[str]:
    """The payment identities a verified payload names: the App Store's original transaction
    and app account token, Google Play's obfuscated account and profile ids (set by the app
    at purchase) and its purchase token."""
    out: set[str] = set()
    if store == "apple":
        found = decoded.get("transaction") if isinstance(decoded.get("transaction"), dict) else {}
        for source in (decoded, found):
            for name in ("originalTransactionId", "appAccountToken"):
                if source.get(name):
                    out.add(f"apple:{name}:{source[name]}")
    else:
        answer = decoded.get("answer") if isinstance(decoded.get("answer"), dict) else {}
        for name in ("obfuscatedExternalAccountId", "obfuscatedExternalProfileId"):
            if answer.get(name):
                out.add(f"google:{name}:{answer[name]}")
        token = (decoded.get("request") or {}).get("purchase_token")
        if token:
            out.add(f"google:purchaseToken:{token}")
    return out


def shared_payment_sources(user_ids: list[int]) -> list[tuple[int, int, str]]:
    """(one of ``user_ids``, another account, the payment source they share), from every
    verified payload an account sent (a purchase another account had claimed included): the
    store's own identities of who paid, which fair play shows as links between accounts."""
    rows = Payload.objects.filter(verified=True, user_id__isnull=False).values_list(
        "user_id", "store", "decoded"
    )
    holders: dict[str, set[int]] = {}
    for user_id, store, decoded in rows.iterator():
        for source in _sources(store, decoded or {}):
            holders.setdefault(source, set()).add(user_id)
    wanted = set(user_ids)
    out = []
    for source, users in sorted(holders.items()):
        for mine in sorted(users & wanted):
            out += [(mine, other, source) for other in sorted(users - {mine})]
    return out
