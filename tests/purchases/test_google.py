"""Google Play purchases against a stand-in of the Play Developer API and its OAuth token
endpoint (a real HTTP server on 127.0.0.1, reached through google-auth), and Pub/Sub pushes
whose OIDC tokens a stand-in of Google's key endpoint signs."""

from __future__ import annotations

import base64
import json
import time
import uuid

import pytest

from chips.models import Entry
from store import services
from store.models import Payload, Purchase
from store.tasks import consume_purchase, poll_voided_purchases
from tests.accounts.keyserver import GOOGLE_ISSUER
from tests.chips.support import assert_sound
from tests.purchases.conftest import AUDIENCE, PACKAGE, PUSHER

pytestmark = pytest.mark.django_db

PURCHASES = "/api/v1/store/google/purchases"
NOTIFICATIONS = "/api/v1/store/google/notifications"


def buy(client, token: str, product_id: str = "chips_1000"):
    body = {"product_id": product_id, "purchase_token": token}
    return client.post(PURCHASES, body, format="json")


def available(client) -> int:
    return client.get("/api/v1/me/wallet").json()["available"]


def store_entries() -> list[str]:
    rows = Entry.objects.filter(cause__in=("purchase", "store_refund", "debt_repaid"))
    return list(rows.order_by("id").values_list("cause", flat=True))


def new_token() -> str:
    return f"token-{uuid.uuid4().hex}"


def test_a_purchased_token_is_credited_once_per_order_then_consumed(play, auth_client_factory):
    me, other = auth_client_factory(), auth_client_factory()
    token = new_token()
    order = play.add_purchase(token)["orderId"]
    first = buy(me, token)
    assert first.status_code == 201, first.content
    assert first.json()["reference"] == order and first.json()["wallet"]["available"] == 2000
    entry = Entry.objects.get(pk=first.json()["entry"])
    assert entry.key == f"purchase:google:{order}"

    again = buy(me, token)
    assert again.status_code == 200 and again.json()["entry"] == entry.pk
    claimed = buy(other, token)
    assert claimed.status_code == 409 and claimed.json()["code"] == "purchase_claimed"
    assert available(other) == 1000

    purchase = Purchase.objects.get(reference=order)
    assert consume_purchase.apply(args=[purchase.pk]).get() is True
    purchase.refresh_from_db()
    assert purchase.consumed_at is not None and play.consumed[-1] == token
    # Consumed by us: the app may send it again and still gets its entry.
    assert buy(me, token).status_code == 200
    assert store_entries() == ["purchase"]
    assert_sound()


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"purchaseState": 2}, "purchase_pending"),
        ({"purchaseState": 1}, "purchase_cancelled"),
        ({"consumptionState": 1}, "purchase_consumed"),
    ],
    ids=["pending", "cancelled", "consumed elsewhere"],
)
def test_each_purchase_state_but_purchased_is_refused(play, auth_client, fields, code):
    token = new_token()
    play.add_purchase(token, **fields)
    answer = buy(auth_client, token)
    assert answer.status_code == 422 and answer.json()["code"] == code, answer.content
    assert available(auth_client) == 1000 and store_entries() == []
    stored = Payload.objects.get(user=auth_client.user)
    assert (stored.decision, stored.code) == ("refused", code)
    assert stored.decoded["answer"]["purchaseState"] == fields.get("purchaseState", 0)


def test_a_pending_purchase_is_credited_once_paid(play, auth_client):
    token = new_token()
    purchase = play.add_purchase(token, purchaseState=2)
    assert buy(auth_client, token).json()["code"] == "purchase_pending"
    purchase["purchaseState"] = 0
    assert buy(auth_client, token).status_code == 201


def test_unknown_tokens_products_and_apps_are_refused(play, auth_client, settings):
    answer = buy(auth_client, "no-such-token")
    assert answer.status_code == 422 and answer.json()["code"] == "invalid_purchase_token"
    token = new_token()
    play.add_purchase(token)
    answer = buy(auth_client, token, product_id="chips_999999")
    assert answer.status_code == 422 and answer.json()["code"] == "unknown_product"
    settings.TONGITS_GOOGLE_PLAY_PACKAGE = "com.example.other"  # another app's purchase
    answer = buy(auth_client, token)
    assert answer.status_code == 422 and answer.json()["code"] == "invalid_purchase_token"
    assert store_entries() == []


def test_the_play_api_out_of_reach_is_503_and_credits_nothing(play, auth_client, settings):
    settings.TONGITS_GOOGLE_PLAY_API_URL = "http://127.0.0.1:9"  # nothing listens
    token = new_token()
    play.add_purchase(token)
    answer = buy(auth_client, token)
    assert answer.status_code == 503 and answer.json()["code"] == "store_unavailable"
    assert store_entries() == []


def test_a_consume_failing_twice_is_retried_until_it_succeeds(play, auth_client):
    token = new_token()
    order = play.add_purchase(token)["orderId"]
    assert buy(auth_client, token).status_code == 201
    purchase = Purchase.objects.get(reference=order)
    play.consume_failures = 2
    assert consume_purchase.apply(args=[purchase.pk]).get() is True
    decisions = Payload.objects.filter(reference=order, decoded__consume="chips_1000")
    assert list(decisions.order_by("id").values_list("decision", flat=True)) == [
        "consume_failed",
        "consume_failed",
        "consumed",
    ]
    purchase.refresh_from_db()
    assert purchase.consumed_at is not None and play.purchases[token]["consumptionState"] == 1


def test_the_voided_purchases_poll_takes_refunded_chips_back(play, auth_client):
    tokens = [new_token() for _ in range(3)]
    orders = [play.add_purchase(token)["orderId"] for token in tokens]
    for token in tokens:
        assert buy(auth_client, token).status_code == 201
    assert available(auth_client) == 4000
    play.voided.clear()
    for order, token in zip(orders, tokens, strict=True):
        play.void(order, token)
    play.void("GPA.not-ours", "token-elsewhere")  # voided, never credited here
    assert poll_voided_purchases.apply().get() == 3
    assert available(auth_client) == 1000
    assert services.poll_voided_purchases() == 0  # the next day's poll: nothing twice
    assert store_entries().count("store_refund") == 3
    # A voided order never credited is never credited later either.
    play.add_purchase("token-elsewhere", orderId="GPA.not-ours")
    answer = buy(auth_client, "token-elsewhere")
    assert answer.status_code == 422 and answer.json()["code"] == "purchase_revoked"
    assert_sound()


def _push(key_server, key, message: dict, **claims) -> dict:
    wanted = {"iss": GOOGLE_ISSUER, "aud": AUDIENCE, "email": PUSHER, "email_verified": True}
    token = key_server.token(key, **{**wanted, **claims})
    data = base64.b64encode(json.dumps(message).encode()).decode()
    body = {
        "message": {"data": data, "messageId": uuid.uuid4().hex},
        "subscription": "projects/tongits-tests/subscriptions/play",
    }
    return {"data": body, "HTTP_AUTHORIZATION": f"Bearer {token}"}


def _voided(order: str, token: str) -> dict:
    return {
        "version": "1.0",
        "packageName": PACKAGE,
        "eventTimeMillis": str(int(time.time() * 1000)),
        "voidedPurchaseNotification": {
            "purchaseToken": token,
            "orderId": order,
            "productType": 2,
            "refundType": 1,
        },
    }


def test_a_voided_purchase_notification_takes_the_chips_back_once(
    play, key_server, auth_client, api_client
):
    key = key_server.add_key("RS256")
    token = new_token()
    order = play.add_purchase(token)["orderId"]
    assert buy(auth_client, token).status_code == 201
    push = _push(key_server, key, _voided(order, token))
    for expected in ("refunded", "refund_repeated"):
        answer = api_client.post(
            NOTIFICATIONS,
            push["data"],
            format="json",
            HTTP_AUTHORIZATION=push["HTTP_AUTHORIZATION"],
        )
        assert answer.status_code == 200, answer.content
        assert answer.json() == {"decision": expected}
    assert available(auth_client) == 1000
    test = {"version": "1.0", "packageName": PACKAGE, "testNotification": {"version": "1.0"}}
    push = _push(key_server, key, test)
    answer = api_client.post(
        NOTIFICATIONS, push["data"], format="json", HTTP_AUTHORIZATION=push["HTTP_AUTHORIZATION"]
    )
    assert answer.json() == {"decision": "ignored"}
    assert_sound()


@pytest.mark.parametrize(
    "claims",
    [{"aud": "https://elsewhere.example"}, {"email": "someone@example.com"}, {"exp": 1}],
    ids=["another audience", "another account", "expired"],
)
def test_a_push_without_googles_token_for_this_subscription_is_refused(
    play, key_server, api_client, claims
):
    key = key_server.add_key("RS256")
    push = _push(key_server, key, _voided("GPA.1", "t"), **claims)
    answer = api_client.post(
        NOTIFICATIONS, push["data"], format="json", HTTP_AUTHORIZATION=push["HTTP_AUTHORIZATION"]
    )
    assert answer.status_code == 401 and answer.json()["code"] == "invalid_push_token"
    answer = api_client.post(NOTIFICATIONS, push["data"], format="json")
    assert answer.status_code == 401 and answer.json()["code"] == "invalid_push_token"
    assert not Payload.objects.exists()
