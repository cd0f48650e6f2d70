"""Writes of the store (services write, selectors read): purchases credited once, refunds
clawed back once, Google Play purchases consumed, and every store payload kept.

A purchase is credited once per (store, reference), the reference being the App Store's
``transactionId`` or Google Play's ``orderId``: the ledger's ``purchase:<store>:<reference>``
entry (``chips.services.credit_purchase``) and the ``Purchase`` row are written in one
transaction, under an advisory lock of the reference, so two requests with one receipt, from
one account or two, credit it once. The same account again gets the same entry (a replay);
another account gets ``PurchaseClaimed``.

A refund or revocation (an App Store notification, a Google Play notification or voided
purchase) is recorded once per reference (``Revocation``): a credited purchase's chips go back
to the house (``chips.services.claw_back``: what was spent becomes a debt), and a purchase not
credited yet never will be.

Every payload, accepted or refused, is stored with its decision (``Payload``, append-only).
A refusal's payload is written in a transaction of its own, so it stays while the refusal
rolls everything else back.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from celery import current_app
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from chips import services as chips
from core.errors import DomainError
from store import apple, google
from store.errors import (
    InvalidNotification,
    InvalidPurchaseToken,
    ProductMismatch,
    PurchaseCancelled,
    PurchaseClaimed,
    PurchaseConsumed,
    PurchasePending,
    PurchaseRevoked,
    StoreUnavailable,
    UnknownProduct,
)
from store.models import Payload, Product, Purchase, Revocation, Store

T = TypeVar("T")

#: Google Play's purchaseState values.
PURCHASED, CANCELLED, PENDING = 0, 1, 2
#: The task that consumes a credited Google Play purchase (queued by name, after the commit).
CONSUME_TASK = "store.tasks.consume_purchase"


@dataclass(frozen=True)
class Credited:
    """A purchase as credited: the row, and whether this request found it credited before."""

    purchase: Purchase
    replayed: bool


# ---------------------------------------------------------------- the catalogue


def parse_products(text: str) -> list[tuple[str, str, int]]:
    """``TONGITS_STORE_PRODUCTS``: "store:product_id:chips,..." as (store, product id, chips)."""
    out = []
    for item in text.split(","):
        if not item.strip():
            continue
        store, product_id, chips_text = item.strip().rsplit(":", 2)[-3:]
        if store not in Store.values or not product_id or int(chips_text) <= 0:
            raise ValueError(f"TONGITS_STORE_PRODUCTS: not store:product_id:chips: {item!r}")
        out.append((store, product_id, int(chips_text)))
    return out


def seed_products() -> int:
    """Add the products of ``TONGITS_STORE_PRODUCTS`` the catalogue lacks (an edited product,
    or one turned off in the admin, is left as it is). Returns how many were added."""
    added = 0
    for store, product_id, amount in parse_products(settings.TONGITS_STORE_PRODUCTS):
        _, created = Product.objects.get_or_create(
            store=store, product_id=product_id, defaults={"chips": amount}
        )
        added += created
    return added


# ---------------------------------------------------------------- the record


def _record(
    *,
    store: str,
    kind: str,
    body: str,
    decision: str,
    reference: str = "",
    user_id: int | None = None,
    decoded: dict[str, Any] | None = None,
    verified: bool = False,
    code: str = "",
) -> Payload:
    return Payload.objects.create(
        store=store,
        kind=kind,
        reference=(reference or "")[:200],
        user_id=user_id,
        body=body,
        decoded=decoded or {},
        verified=verified,
        decision=decision,
        code=code,
    )


def _recorded(refusal: dict[str, Any], work: Callable[[], T]) -> T:
    """``work()``; when it refuses (a domain error), the payload is stored as ``refused`` with
    the error's code in a transaction of its own, and the error raised on."""
    try:
        return work()
    except DomainError as error:
        with transaction.atomic():
            _record(**refusal, decision="refused", code=error.code)
        raise


def _lock(store: str, reference: str) -> None:
    """This transaction's hold on one purchase reference (credit and refund take turns)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"store:{store}:{reference}"])


# ---------------------------------------------------------------- crediting


def _credit(
    *,
    store: str,
    user_id: int,
    reference: str,
    product_id: str,
    quantity: int,
    body: str,
    decoded: dict[str, Any],
    token: str = "",
    consumed: bool = False,
) -> Credited:
    with transaction.atomic():
        _lock(store, reference)
        found = Purchase.objects.filter(store=store, reference=reference).first()
        if found is not None:
            if found.user_id != user_id:
                raise PurchaseClaimed()
            _record(
                store=store,
                kind=Payload.Kind.TRANSACTION if store == Store.APPLE else Payload.Kind.API,
                body=body,
                decision="replayed",
                reference=reference,
                user_id=user_id,
                decoded=decoded,
                verified=True,
            )
            return Credited(found, True)
        if Revocation.objects.filter(store=store, reference=reference).exists():
            raise PurchaseRevoked()
        product = Product.objects.filter(store=store, product_id=product_id, active=True).first()
        if product is None:
            raise UnknownProduct()
        if consumed:  # consumed elsewhere (never by us: we have no purchase of it)
            raise PurchaseConsumed()
        amount = product.chips * max(1, quantity)
        payload = _record(
            store=store,
            kind=Payload.Kind.TRANSACTION if store == Store.APPLE else Payload.Kind.API,
            body=body,
            decision="credited",
            reference=reference,
            user_id=user_id,
            decoded=decoded,
            verified=True,
        )
        posted = chips.credit_purchase(
            user_id=user_id,
            store=store,
            reference=reference,
            chips=amount,
            data={"product_id": product_id, "payload": payload.pk},
        )
        purchase = Purchase.objects.create(
            store=store,
            reference=reference,
            user_id=user_id,
            product_id=product_id,
            chips=amount,
            entry_id=posted.entry_id,
            purchase_token=token,
        )
        if store == Store.GOOGLE:
            transaction.on_commit(
                lambda: current_app.send_task(CONSUME_TASK, args=[purchase.pk]), robust=True
            )
        return Credited(purchase, False)


def apple_transaction(*, user_id: int, signed_transaction: str) -> Credited:
    """A StoreKit 2 transaction the app sends after a purchase: verified (``store.apple``),
    then its product's chips credited once per ``transactionId``. A revoked transaction, an
    unknown product, another app's or environment's, a forged one: refused, nothing credited."""
    apple.verifier()  # StoreNotConfigured before anything is recorded
    refusal: dict[str, Any] = {
        "store": Store.APPLE,
        "kind": Payload.Kind.TRANSACTION,
        "body": signed_transaction,
        "user_id": user_id,
        "reference": str(apple.claims(signed_transaction).get("transactionId", "")),
    }

    def work() -> Credited:
        decoded = apple.transaction(signed_transaction)
        if decoded.get("revocationDate"):
            raise PurchaseRevoked()
        reference = str(decoded.get("transactionId") or "")
        if not reference:
            raise UnknownProduct()
        return _credit(
            store=Store.APPLE,
            user_id=user_id,
            reference=reference,
            product_id=str(decoded.get("productId") or ""),
            quantity=int(decoded.get("quantity") or 1),
            body=signed_transaction,
            decoded=decoded,
        )

    return _recorded(refusal, work)


def google_purchase(*, user_id: int, product_id: str, purchase_token: str) -> Credited:
    """A Google Play purchase the app reports: asked of the Play Developer API
    (``purchases.products.get``), then credited once per ``orderId`` and consumed (by the
    ``consume_purchase`` task, retried until Google takes it)."""
    google.package()  # StoreNotConfigured before anything is recorded
    request = json.dumps({"product_id": product_id, "purchase_token": purchase_token})
    refusal: dict[str, Any] = {
        "store": Store.GOOGLE,
        "kind": Payload.Kind.API,
        "body": request,
        "user_id": user_id,
    }

    def work() -> Credited:
        if not Product.objects.filter(
            store=Store.GOOGLE, product_id=product_id, active=True
        ).exists():
            raise UnknownProduct()
        answer = google.product_purchase(product_id, purchase_token)
        refusal["body"] = answer.text
        refusal["decoded"] = {"request": json.loads(request), "status": answer.status}
        if answer.status in (400, 404, 410):
            raise InvalidPurchaseToken()
        if answer.status != 200:
            raise StoreUnavailable()
        found = answer.body
        refusal["reference"] = str(found.get("orderId") or "")
        refusal["decoded"]["answer"] = found
        if found.get("productId") not in (None, product_id):
            raise ProductMismatch()
        state = found.get("purchaseState", PURCHASED)
        if state == CANCELLED:
            raise PurchaseCancelled()
        if state != PURCHASED:
            raise PurchasePending()
        reference = str(found.get("orderId") or "")
        if not reference:
            raise InvalidPurchaseToken()
        return _credit(
            store=Store.GOOGLE,
            user_id=user_id,
            reference=reference,
            product_id=product_id,
            quantity=int(found.get("quantity") or 1),
            body=answer.text,
            decoded={"request": json.loads(request), "status": 200, "answer": found},
            token=purchase_token,
            consumed=found.get("consumptionState") == 1,
        )

    return _recorded(refusal, work)


def consume(purchase_id: int) -> bool:
    """Consume a credited Google Play purchase (True once Google has it, or had it). A refusal
    of the token (gone, refunded) is recorded and not retried; Google out of reach raises
    ``StoreUnavailable`` (the task retries)."""
    purchase = Purchase.objects.get(pk=purchase_id)
    if purchase.consumed_at is not None or purchase.store != Store.GOOGLE:
        return True
    answer = google.consume(purchase.product_id, purchase.purchase_token)
    ok = 200 <= answer.status < 300
    final = ok or answer.status in (400, 404, 410)
    with transaction.atomic():
        _record(
            store=Store.GOOGLE,
            kind=Payload.Kind.API,
            body=answer.text,
            decision="consumed" if ok else ("consume_refused" if final else "consume_failed"),
            reference=purchase.reference,
            user_id=purchase.user_id,
            decoded={"consume": purchase.product_id, "status": answer.status},
            verified=ok,
            code="" if ok else str(answer.status),
        )
        if ok:
            Purchase.objects.filter(pk=purchase.pk, consumed_at__isnull=True).update(
                consumed_at=timezone.now()
            )
    if not final:
        raise StoreUnavailable()
    return ok


def unconsumed(older_than: timedelta) -> list[int]:
    """Google Play purchases credited but not consumed for longer than ``older_than`` (their
    consume task lost): queued again by the daily poll."""
    cutoff = timezone.now() - older_than
    rows = Purchase.objects.filter(
        store=Store.GOOGLE, consumed_at__isnull=True, created_at__lt=cutoff
    )
    return list(rows.values_list("pk", flat=True))


# ---------------------------------------------------------------- refunds


def _revoke(
    *,
    store: str,
    reference: str,
    reason: str,
    kind: str,
    body: str,
    decoded: dict[str, Any],
) -> str:
    """Record that the store refunded or revoked ``reference``, once, and take a credited
    purchase's chips back. Returns the decision: ``refunded`` (chips taken back now),
    ``refund_repeated`` (known already), ``refund_before_purchase`` (nothing credited: never
    will be)."""
    with transaction.atomic():
        _lock(store, reference)
        purchase = Purchase.objects.filter(store=store, reference=reference).first()
        known = Revocation.objects.filter(store=store, reference=reference).exists()
        if known:
            decision = "refund_repeated"
        elif purchase is None:
            decision = "refund_before_purchase"
        else:
            decision = "refunded"
        payload = _record(
            store=store,
            kind=kind,
            body=body,
            decision=decision,
            reference=reference,
            user_id=purchase.user_id if purchase else None,
            decoded=decoded,
            verified=True,
        )
        if known:
            return decision
        Revocation.objects.create(store=store, reference=reference, reason=reason, payload=payload)
        if purchase is not None and purchase.refund_entry_id is None:
            posted = chips.claw_back(
                user_id=purchase.user_id,
                store=store,
                reference=reference,
                chips=purchase.chips,
                data={"payload": payload.pk, "reason": reason},
            )
            purchase.refund_entry_id = posted.entry_id
            purchase.refunded_at = timezone.now()
            purchase.save(update_fields=["refund_entry_id", "refunded_at"])
        return decision


def apple_notification(*, signed_payload: str) -> str:
    """An App Store Server Notification V2: verified; ``REFUND`` and ``REVOKE`` take the
    transaction's chips back (once, whatever the order or number of deliveries); any other
    type is recorded and ignored. Returns the decision."""
    apple.verifier()
    refusal: dict[str, Any] = {
        "store": Store.APPLE,
        "kind": Payload.Kind.NOTIFICATION,
        "body": signed_payload,
    }

    def work() -> str:
        decoded = apple.notification(signed_payload)
        kind = str(decoded.get("notificationType") or "")
        reference = str((decoded.get("transaction") or {}).get("transactionId") or "")
        return _notified(
            store=Store.APPLE,
            refund=kind if kind in ("REFUND", "REVOKE") else None,
            reference=reference,
            body=signed_payload,
            decoded=decoded,
        )

    return _recorded(refusal, work)


def _notified(
    *, store: str, refund: str | None, reference: str, body: str, decoded: dict[str, Any]
) -> str:
    """A verified store notification: a refund of a known order (``refund`` its reason) takes
    the chips back; anything else is recorded as ignored, so both stores answer alike."""
    if refund is not None and reference:
        return _revoke(
            store=store,
            reference=reference,
            reason=refund,
            kind=Payload.Kind.NOTIFICATION,
            body=body,
            decoded=decoded,
        )
    with transaction.atomic():
        _record(
            store=store,
            kind=Payload.Kind.NOTIFICATION,
            body=body,
            decision="ignored",
            reference=reference,
            decoded=decoded,
            verified=True,
        )
    return "ignored"


def _message(body: Any) -> dict[str, Any]:
    """A Pub/Sub push's developer notification (``message.data``, base64 JSON)."""
    try:
        data = base64.b64decode(body["message"]["data"], validate=True)
        found = json.loads(data)
    except (KeyError, TypeError, ValueError, binascii.Error):
        raise InvalidNotification() from None
    if not isinstance(found, dict):
        raise InvalidNotification()
    return found


def check_push(*, authorization: str) -> None:
    """A Pub/Sub push may be read: Google Play is set up here and its OIDC token is good
    (``store.google.push_identity``)."""
    google.package()
    google.push_identity(authorization)


def google_notification(*, body: Any, raw: str) -> str:
    """A real-time developer notification, pushed by Pub/Sub (its token checked first,
    ``check_push``): a ``voidedPurchaseNotification`` for this app takes the order's chips
    back; anything else is recorded and acknowledged. Returns the decision."""
    refusal: dict[str, Any] = {
        "store": Store.GOOGLE,
        "kind": Payload.Kind.NOTIFICATION,
        "body": raw,
    }

    def work() -> str:
        message = _message(body)
        voided = message.get("voidedPurchaseNotification")
        reference = str((voided or {}).get("orderId") or "") if isinstance(voided, dict) else ""
        ours = message.get("packageName") == settings.TONGITS_GOOGLE_PLAY_PACKAGE
        return _notified(
            store=Store.GOOGLE,
            refund=f"voided:{voided.get('refundType', '')}" if ours and reference else None,
            reference=reference,
            body=raw,
            decoded=message,
        )

    return _recorded(refusal, work)


def poll_voided_purchases(*, days: int | None = None) -> int:
    """Google Play's voided purchases of the last ``days`` (``TONGITS_GOOGLE_VOIDED_DAYS``),
    every page: each one's chips taken back (once). Returns how many were refunded now."""
    google.package()
    days = days or settings.TONGITS_GOOGLE_VOIDED_DAYS
    start = int((timezone.now() - timedelta(days=days)).timestamp() * 1000)
    refunded, page = 0, None
    for _ in range(1000):  # pages of up to 1,000 purchases
        answer = google.voided_purchases(start, page)
        if answer.status != 200:
            raise StoreUnavailable()
        for item in answer.body.get("voidedPurchases") or []:
            reference = str(item.get("orderId") or "") if isinstance(item, dict) else ""
            if not reference:
                continue
            decision = _revoke(
                store=Store.GOOGLE,
                reference=reference,
                reason=f"voided:{item.get('voidedReason', '')}",
                kind=Payload.Kind.API,
                body=json.dumps(item, sort_keys=True),
                decoded=item,
            )
            refunded += decision == "refunded"
        page = (answer.body.get("tokenPagination") or {}).get("nextPageToken")
        if not page:
            break
    return refunded
