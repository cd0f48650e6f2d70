"""``verify_ledger``'s checks of the store's entries (``chips.ledger.register_check``).

Each ``purchase`` entry must be one ``Purchase`` of the same store, reference, account and
chips, proved by a stored, verified payload that credited it and names the same reference and
product; each ``store_refund`` entry must be the refund of such a purchase, with the stored
payload that said it was refunded, and take back exactly the purchase's chips. And no purchase
is without its entry.
"""

from __future__ import annotations

from chips.models import Entry, Posting
from store.models import Payload, Purchase, Revocation, Store


def _reference_of(payload: Payload) -> str:
    decoded = payload.decoded or {}
    if payload.store == Store.APPLE:
        found = decoded.get("transactionId") or (decoded.get("transaction") or {}).get(
            "transactionId"
        )
    else:
        found = (decoded.get("answer") or {}).get("orderId") or decoded.get("orderId")
        found = found or (decoded.get("voidedPurchaseNotification") or {}).get("orderId")
    return str(found or "")


def _product_of(payload: Payload) -> str:
    decoded = payload.decoded or {}
    if payload.store == Store.APPLE:
        return str(decoded.get("productId") or "")
    request = decoded.get("request") or {}
    return str((decoded.get("answer") or {}).get("productId") or request.get("product_id") or "")


def problems() -> list[str]:
    out: list[str] = []
    purchases = {(p.store, p.reference): p for p in Purchase.objects.all()}
    by_entry = {p.entry_id: p for p in purchases.values()}
    by_refund = {p.refund_entry_id: p for p in purchases.values() if p.refund_entry_id}
    causes = (Entry.Cause.PURCHASE, Entry.Cause.STORE_REFUND)
    entries = Entry.objects.filter(cause__in=causes).order_by("id")
    credited = {
        p.pk: p for p in Payload.objects.filter(pk__in=[e.data.get("payload") for e in entries])
    }
    wallet_side = dict(
        Posting.objects.filter(
            entry__cause=Entry.Cause.PURCHASE, account__kind="wallet"
        ).values_list("entry_id", "amount")
    )
    taken: dict[int, int] = {}
    for posting in Posting.objects.filter(
        entry__cause=Entry.Cause.STORE_REFUND, account__kind__in=("wallet", "debt")
    ):
        taken[posting.entry_id] = taken.get(posting.entry_id, 0) + posting.amount
    for entry in entries:
        store, reference = entry.data.get("store"), entry.data.get("reference")
        payload = credited.get(entry.data.get("payload"))
        if entry.cause == Entry.Cause.PURCHASE:
            purchase = by_entry.get(entry.pk)
            if purchase is None or (purchase.store, purchase.reference) != (store, reference):
                out.append(f"purchase entry {entry.pk} ({entry.key}) has no purchase of its own")
                continue
            if purchase.user_id != entry.user_id or wallet_side.get(entry.pk) != purchase.chips:
                out.append(
                    f"purchase entry {entry.pk} credits {wallet_side.get(entry.pk)} chips to "
                    f"user {entry.user_id}; the purchase is {purchase.chips} for "
                    f"{purchase.user_id}"
                )
            if (
                payload is None
                or not payload.verified
                or payload.decision != "credited"
                or _reference_of(payload) != reference
                or _product_of(payload) != purchase.product_id
            ):
                out.append(
                    f"purchase entry {entry.pk} ({entry.key}) is not proved by a stored, "
                    "verified store payload"
                )
        else:
            purchase = by_refund.get(entry.pk)
            if purchase is None or (purchase.store, purchase.reference) != (store, reference):
                out.append(f"store refund entry {entry.pk} ({entry.key}) refunds no purchase")
                continue
            if -taken.get(entry.pk, 0) != purchase.chips:
                out.append(
                    f"store refund entry {entry.pk} takes back {-taken.get(entry.pk, 0)} "
                    f"chips; the purchase was {purchase.chips}"
                )
            revoked = Revocation.objects.filter(store=store, reference=reference).first()
            if (
                payload is None
                or revoked is None
                or revoked.payload_id != payload.pk
                or payload.decision != "refunded"
                or _reference_of(payload) != reference
            ):
                out.append(
                    f"store refund entry {entry.pk} ({entry.key}) is not proved by a stored, "
                    "verified store payload"
                )
    posted = {e.pk for e in entries}
    for purchase in purchases.values():
        if purchase.entry_id not in posted:
            out.append(f"purchase {purchase} has no purchase entry")
    return out
