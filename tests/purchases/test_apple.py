"""App Store purchases with real signatures: the tests' own root CA, intermediate and leaf
(Apple's marker extensions) sign StoreKit 2 transactions and V2 notifications; the server trusts
that root and verifies them with Apple's App Store Server Library."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from chips.models import Entry
from store.models import Payload, Purchase
from tests.chips.support import assert_sound, quick_table
from tests.purchases.appstore import Authority, next_transaction_id

pytestmark = pytest.mark.django_db

TRANSACTIONS = "/api/v1/store/apple/transactions"
NOTIFICATIONS = "/api/v1/store/apple/notifications"


def buy(client, signed: str):
    return client.post(TRANSACTIONS, {"signed_transaction": signed}, format="json")


def notify(api_client, signed: str):
    return api_client.post(NOTIFICATIONS, {"signedPayload": signed}, format="json")


def available(client) -> int:
    """The client's available chips, as the API shows them (opening the wallet if need be)."""
    return client.get("/api/v1/me/wallet").json()["available"]


def purchases() -> list[tuple[str, str]]:
    rows = Entry.objects.filter(cause__in=("purchase", "store_refund", "debt_repaid"))
    return list(rows.order_by("id").values_list("cause", "key"))


def test_a_purchase_is_credited_once_and_replays_answer_the_same_entry(apple, auth_client):
    transaction_id = next_transaction_id()
    signed = apple.transaction(transactionId=transaction_id)
    first = buy(auth_client, signed)
    assert first.status_code == 201, first.content
    body = first.json()
    assert body["store"] == "apple" and body["reference"] == transaction_id
    assert body["chips"] == 1000 and body["replayed"] is False
    assert body["wallet"]["available"] == 2000  # the sign-up grant and the purchase
    entry = Entry.objects.get(pk=body["entry"])
    assert (entry.cause, entry.key) == ("purchase", f"purchase:apple:{transaction_id}")

    again = buy(auth_client, signed)
    assert again.status_code == 200, again.content
    assert again.json()["entry"] == body["entry"] and again.json()["replayed"] is True
    assert available(auth_client) == 2000
    assert purchases() == [("purchase", f"purchase:apple:{transaction_id}")]
    decisions = Payload.objects.filter(reference=transaction_id).values_list("decision", flat=True)
    assert sorted(decisions) == ["credited", "replayed"]
    assert_sound()


def test_the_same_transaction_from_another_account_is_claimed(apple, auth_client_factory):
    owner, thief = auth_client_factory(), auth_client_factory()
    signed = apple.transaction()
    assert buy(owner, signed).status_code == 201
    answer = buy(thief, signed)
    assert answer.status_code == 409 and answer.json()["code"] == "purchase_claimed"
    assert available(thief) == 1000 and available(owner) == 2000
    refused = Payload.objects.get(user=thief.user)
    assert (refused.decision, refused.code) == ("refused", "purchase_claimed")
    assert_sound()


def _forged(apple: Authority) -> str:
    """Signed by a key of the forger's own, under the real chain's x5c."""
    return apple.transaction(key=ec.generate_private_key(ec.SECP256R1()))


def _tampered(apple: Authority) -> str:
    """A real signature over another payload: the product swapped for a dearer one."""
    header, _, signature = apple.transaction().split(".")
    other = apple.transaction(productId="chips_1000", quantity=50).split(".")[1]
    return f"{header}.{other}.{signature}"


@pytest.mark.parametrize(
    ("make", "status", "code"),
    [
        (_forged, 400, "invalid_signed_data"),
        (_tampered, 400, "invalid_signed_data"),
        (lambda apple: Authority.make().transaction(), 400, "invalid_signed_data"),
        (lambda apple: "not.a.jws", 400, "invalid_signed_data"),
        (lambda apple: apple.transaction(bundleId="com.example.other"), 422, "wrong_app"),
        (lambda apple: apple.transaction(environment="Sandbox"), 422, "wrong_environment"),
        (lambda apple: apple.transaction(productId="chips_999999"), 422, "unknown_product"),
        (
            lambda apple: apple.transaction(revocationDate=1, revocationReason=0),
            422,
            "purchase_revoked",
        ),
    ],
    ids=[
        "forged signature",
        "tampered payload",
        "foreign chain",
        "not a JWS",
        "wrong bundle",
        "sandbox on production",
        "unknown product",
        "revoked",
    ],
)
def test_each_invalid_transaction_is_refused_with_its_code_and_credits_nothing(
    apple, auth_client, make, status, code
):
    answer = buy(auth_client, make(apple))
    assert answer.status_code == status, answer.content
    assert answer.json()["code"] == code
    assert available(auth_client) == 1000
    assert purchases() == [] and not Purchase.objects.exists()
    stored = Payload.objects.get(user=auth_client.user)
    assert (stored.decision, stored.code, stored.verified) == ("refused", code, False)
    assert_sound()


def test_a_refund_after_spending_leaves_a_debt_repaid_by_the_next_purchase(
    apple, auth_client, api_client
):
    user = auth_client.user
    signed = apple.transaction()
    reference = buy(auth_client, signed).json()["reference"]
    quick_table(user, 1500)  # 1,500 of the 2,000 chips go into a table's escrow
    assert available(auth_client) == 500

    refunded = notify(api_client, apple.notification("REFUND", signed))
    assert refunded.status_code == 200 and refunded.json() == {"decision": "refunded"}
    wallet = auth_client.get("/api/v1/me/wallet").json()
    assert (wallet["available"], wallet["in_play"], wallet["owed"]) == (0, 1500, 500)
    refund = Entry.objects.get(key=f"store_refund:apple:{reference}")
    assert refund.data["taken"] == 500 and refund.data["owed"] == 500

    # In debt: no buy-in, no bonus.
    table = {"rules": {"preset": "standard"}, "buy_in": 100}
    blocked = [
        auth_client.post("/api/v1/me/wallet/daily"),
        auth_client.post("/api/v1/tables", table, format="json"),
    ]
    for answer in blocked:
        assert answer.status_code == 409 and answer.json()["code"] == "chips_owed", answer.content
        assert answer.json()["owed"] == 500

    repaid = buy(auth_client, apple.transaction())
    assert repaid.status_code == 201
    assert (repaid.json()["wallet"]["available"], repaid.json()["wallet"]["owed"]) == (500, 0)
    assert [cause for cause, _ in purchases()] == [
        "purchase",
        "store_refund",
        "purchase",
        "debt_repaid",
    ]
    assert_sound()


def test_a_debtor_cannot_queue_until_repaid(apple, auth_client, api_client):
    from chips import services as chips

    signed = apple.transaction()
    buy(auth_client, signed)
    chips.adjust(user_id=auth_client.user.pk, amount=-1800, reason="spent", staff_id=None)
    notify(api_client, apple.notification("REFUND", signed))
    rooms = {room["key"]: room for room in auth_client.get("/api/v1/rooms").json()}
    assert rooms["100:5"]["affordable"] is False
    answer = auth_client.post("/api/v1/matchmaking/tickets", {"room": "100:5"}, format="json")
    assert answer.status_code == 409 and answer.json()["code"] == "chips_owed"
    assert answer.json()["owed"] == 800
    # A staff grant is a credit too: it repays first.
    chips.adjust(user_id=auth_client.user.pk, amount=1000, reason="goodwill", staff_id=None)
    wallet = auth_client.get("/api/v1/me/wallet").json()
    assert (wallet["available"], wallet["owed"]) == (200, 0)
    answer = auth_client.post("/api/v1/matchmaking/tickets", {"room": "100:5"}, format="json")
    assert answer.status_code == 201, answer.content
    assert_sound()


def test_a_refund_delivered_twice_and_before_its_purchase_credits_nothing(
    apple, auth_client, api_client
):
    signed = apple.transaction()
    notice = apple.notification("REFUND", signed)
    assert notify(api_client, notice).json() == {"decision": "refund_before_purchase"}
    assert notify(api_client, notice).json() == {"decision": "refund_repeated"}
    answer = buy(auth_client, signed)
    assert answer.status_code == 422 and answer.json()["code"] == "purchase_revoked"
    assert available(auth_client) == 1000 and purchases() == []

    # After its purchase: taken back once, however often it comes.
    bought = apple.transaction()
    assert buy(auth_client, bought).status_code == 201
    revoke = apple.notification("REVOKE", bought)
    decisions = [notify(api_client, revoke).json()["decision"] for _ in range(2)]
    assert decisions == ["refunded", "refund_repeated"]
    assert [cause for cause, _ in purchases()] == ["purchase", "store_refund"]
    assert available(auth_client) == 1000
    assert_sound()


def test_notifications_are_verified_like_transactions(apple, api_client):
    forged = Authority.make().notification("REFUND", apple.transaction())
    answer = notify(api_client, forged)
    assert answer.status_code == 400 and answer.json()["code"] == "invalid_signed_data"
    other = apple.notification("CONSUMPTION_REQUEST", apple.transaction())
    assert notify(api_client, other).json() == {"decision": "ignored"}
    sandbox = apple.notification("REFUND", apple.transaction(), environment="Sandbox")
    answer = notify(api_client, sandbox)
    assert answer.status_code == 422 and answer.json()["code"] == "wrong_environment"


def test_payloads_are_append_only(apple, auth_client):
    from django.db import DatabaseError, transaction

    buy(auth_client, apple.transaction())
    payload = Payload.objects.get()
    with pytest.raises(DatabaseError), transaction.atomic():
        Payload.objects.filter(pk=payload.pk).update(decision="edited")
    with pytest.raises(DatabaseError), transaction.atomic():
        Payload.objects.filter(pk=payload.pk).delete()


def test_a_server_without_the_app_store_set_up_refuses(auth_client, settings, db):
    settings.TONGITS_APPLE_ROOT_CERTIFICATES = []
    answer = buy(auth_client, "a.b.c")
    assert answer.status_code == 409 and answer.json()["code"] == "store_not_configured"


def test_the_admin_shows_a_players_purchases_refunds_and_debt(
    apple, auth_client, api_client, user_factory
):
    from django.test import Client

    from chips import services as chips

    signed = apple.transaction()
    reference = buy(auth_client, signed).json()["reference"]
    chips.adjust(user_id=auth_client.user.pk, amount=-1700, reason="spent", staff_id=None)
    notify(api_client, apple.notification("REFUND", signed))
    client = Client()
    client.force_login(user_factory(is_staff=True, is_superuser=True))
    username = auth_client.user.username
    page = client.get(f"/admin/store/purchase/?q={username}")
    assert page.status_code == 200
    text = page.content.decode()
    assert reference in text and username in text
    assert '<td class="field-owed_now">700</td>' in text  # 1,000 refunded, 300 held
    debts = client.get("/admin/chips/account/?kind__exact=debt").content.decode()
    assert f"debt of {auth_client.user.pk}" in debts and "-700" in debts
    payloads = client.get(f"/admin/store/payload/?q={reference}").content.decode()
    assert "credited" in payloads and "refunded" in payloads
