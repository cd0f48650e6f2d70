"""The store's domain errors: plain exceptions with a stable ``code`` (no HTTP here).

Each refusal of a purchase has a code of its own, so an app can tell a player what happened
(and support can find it among the stored payloads)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy

from core.errors import Conflict, Invalid, Refused, Unauthenticated, Unavailable


class StoreNotConfigured(Conflict):
    code = "store_not_configured"
    detail = gettext_lazy("Purchases from this store are not set up on this server.")


class InvalidSignedData(Invalid):
    """The JWS does not verify: a bad signature, a chain that does not end at a configured
    root, a malformed token."""

    code = "invalid_signed_data"
    detail = gettext_lazy("The store's signed data does not verify.")


class WrongApp(Refused):
    code = "wrong_app"
    detail = gettext_lazy("The purchase was made in another app.")


class WrongEnvironment(Refused):
    code = "wrong_environment"
    detail = gettext_lazy("The purchase was made in another store environment (sandbox).")


class UnknownProduct(Refused):
    code = "unknown_product"
    detail = gettext_lazy("This product is not sold here.")


class ProductMismatch(Refused):
    code = "product_mismatch"
    detail = gettext_lazy("The purchase is of another product.")


class PurchaseRevoked(Refused):
    code = "purchase_revoked"
    detail = gettext_lazy("The store refunded or revoked this purchase.")


class PurchasePending(Refused):
    code = "purchase_pending"
    detail = gettext_lazy("The purchase is not paid yet: try again once it is.")


class PurchaseCancelled(Refused):
    code = "purchase_cancelled"
    detail = gettext_lazy("The purchase was cancelled.")


class PurchaseConsumed(Refused):
    code = "purchase_consumed"
    detail = gettext_lazy("The purchase was consumed already and was not credited here.")


class InvalidPurchaseToken(Refused):
    code = "invalid_purchase_token"
    detail = gettext_lazy("The store knows no such purchase of this app.")


class PurchaseClaimed(Conflict):
    code = "purchase_claimed"
    detail = gettext_lazy("This purchase was credited to another account.")


class StoreUnavailable(Unavailable):
    code = "store_unavailable"
    detail = gettext_lazy("The store cannot be reached now: try again.")


class InvalidPushToken(Unauthenticated):
    code = "invalid_push_token"
    detail = gettext_lazy("The notification's token is not valid.")


class InvalidNotification(Invalid):
    code = "invalid_notification"
    detail = gettext_lazy("The notification's message cannot be read.")
