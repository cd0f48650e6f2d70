"""Pushes to devices, end to end against a real (local) Web Push service, and the devices API.

The push service is an ``http.server`` on 127.0.0.1 that records each request and answers 201
(or what a test tells it to); the subscription is the test's own (a P-256 key and an auth
secret), so the pushed body is decrypted here as a browser would, and checked: the game's id
and the kind are in it, no card code is.
"""

from __future__ import annotations

import itertools
import json
import re
import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest
from cryptography.hazmat.primitives import serialization
from django.utils import timezone
from py_vapid import Vapid02

from notifications import devices, push
from notifications.models import Device, Kind, Notification, PushAttempt, PushDelivery, Status
from tests.notifications.support import CARD_TOKEN, Browser, PushService, b64url, unb64url

pytestmark = pytest.mark.django_db

NEVER = lambda user_id: False  # noqa: E731  (no stream open)


@pytest.fixture
def service(monkeypatch) -> Iterator[PushService]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    running = PushService()
    yield running
    running.close()


@pytest.fixture
def vapid(settings) -> Vapid02:
    """A VAPID key of the test's, as the setting's base64url raw form."""
    key = Vapid02()
    key.generate_keys()
    scalar = key.private_key.private_numbers().private_value.to_bytes(32, "big")
    settings.TONGITS_WEBPUSH_VAPID_PRIVATE_KEY = b64url(scalar)
    settings.TONGITS_WEBPUSH_VAPID_SUBJECT = "mailto:ops@example.com"
    settings.TONGITS_PUSH_KINDS = frozenset({"your_turn", "invited", "match_over", "new_sign_in"})
    settings.TONGITS_PUSH_MAX_ATTEMPTS = 5
    settings.TONGITS_DELIVERY_TIMEOUT_SECONDS = 5.0
    return key


@pytest.fixture
def browser() -> Browser:
    return Browser()


@pytest.fixture
def device(user_factory, auth_client_factory, service, browser):
    client = auth_client_factory()
    return Device.objects.create(
        user=client.user,
        session=client.auth_session,
        kind=Device.Kind.WEBPUSH,
        token=f"http://127.0.0.1:{service.port}/push/abc",
        p256dh=browser.p256dh,
        auth=browser.auth,
    )


_seq = itertools.count(1)


def notify(user, kind: str = Kind.YOUR_TURN, game_id: uuid.UUID | None = None, **data):
    game_id = game_id or uuid.uuid4()
    return Notification.objects.create(
        user=user,
        kind=kind,
        cause=f"{kind}:{game_id}:{next(_seq)}",
        game_id=game_id,
        data={"game_id": str(game_id), **data},
        created_at=timezone.now(),
    )


def queued(notification) -> PushDelivery:
    assert push.record(notification) == 1
    return PushDelivery.objects.get(notification=notification)


# --- keys ----------------------------------------------------------------------------------------


def test_public_key_is_the_uncompressed_point_of_the_configured_key(vapid, settings):
    expected = vapid.public_key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    assert push.webpush_enabled()
    assert unb64url(push.vapid_public_key()) == expected
    assert len(expected) == 65 and expected[0] == 4
    # The same key as PEM.
    settings.TONGITS_WEBPUSH_VAPID_PRIVATE_KEY = vapid.private_pem().decode()
    assert unb64url(push.vapid_public_key()) == expected


def test_no_key_no_webpush(settings):
    settings.TONGITS_WEBPUSH_VAPID_PRIVATE_KEY = ""
    assert not push.webpush_enabled()
    assert push.vapid_public_key() == ""


# --- delivery end to end -------------------------------------------------------------------------


def test_a_turn_is_pushed_encrypted_signed_and_without_cards(vapid, service, browser, device):
    game = uuid.uuid4()
    notification = notify(device.user, game_id=game, by=device.user.username)
    delivery = queued(notification)
    assert delivery.status == Status.PENDING
    assert delivery.target == f"127.0.0.1:{service.port}"
    assert delivery.device_kind == "webpush"

    assert push.deliver(delivery.pk, streams_open=NEVER) == "sent"

    [request] = service.requests
    assert request["path"] == "/push/abc"
    headers = {k.lower(): v for k, v in request["headers"].items()}
    assert headers["content-encoding"] == "aes128gcm"
    assert headers["topic"] == game.hex
    assert headers["urgency"] == "high"
    assert int(headers["ttl"]) > 0
    # VAPID (RFC 8292): "vapid t=<JWT>,k=<public key>", the JWT signed by the server's key.
    auth = headers["authorization"]
    assert re.fullmatch(r"vapid t=[\w.-]+,k=[\w-]+", auth)
    assert Vapid02.verify(auth)
    parts = dict(item.split("=", 1) for item in auth.split(" ", 1)[1].split(","))
    assert parts["k"] == push.vapid_public_key()
    claims = json.loads(unb64url(parts["t"].split(".")[1]))
    assert claims["aud"] == f"http://127.0.0.1:{service.port}"
    assert claims["sub"] == "mailto:ops@example.com"

    payload = browser.read(request["body"])
    assert payload["kind"] == "your_turn"
    assert payload["game_id"] == str(game)
    assert payload["notification_id"] == notification.pk
    assert payload["title"] == "Your turn"
    assert game.hex[:8] in payload["body"]
    text = json.dumps(payload)
    assert not CARD_TOKEN.search(text), text

    delivery.refresh_from_db()
    assert delivery.status == Status.SENT
    assert delivery.attempts == 1 and delivery.finished_at is not None
    [attempt] = PushAttempt.objects.filter(delivery=delivery)
    assert attempt.status_code == 201


def test_the_card_scan_would_catch_a_card():
    assert CARD_TOKEN.search('{"body": "you drew 10H"}')
    assert CARD_TOKEN.search('{"body": "KD"}')
    assert not CARD_TOKEN.search('{"body": "Your turn at table 4ad5ff3c"}')


def test_no_card_from_data_reaches_a_payload(db, user_factory):
    user = user_factory()
    for kind in Kind.values:
        n = notify(user, kind=kind, by="AS", hand=["KD", "10H"], card="7C", winner="QS")
        text = json.dumps(push.payload_for(n))
        assert not CARD_TOKEN.search(text), (kind, text)


def test_a_gone_target_is_dropped_after_one_try(vapid, service, device):
    service.answers = [410]
    delivery = queued(notify(device.user))
    assert push.deliver(delivery.pk, streams_open=NEVER) == "dropped"
    delivery.refresh_from_db()
    assert delivery.status == Status.DROPPED
    assert delivery.attempts == 1
    assert PushAttempt.objects.filter(delivery=delivery).count() == 1
    assert not Device.objects.filter(pk=device.pk).exists()
    assert len(service.requests) == 1
    # Nothing further: the delivery is finished.
    assert push.due(timezone.now() + timedelta(days=1)) == []


def test_a_server_error_is_retried_then_sent(vapid, service, device):
    service.answers = [500]
    delivery = queued(notify(device.user))
    now = timezone.now()
    assert push.deliver(delivery.pk, now=now, streams_open=NEVER) == "retry in 5 s"
    delivery.refresh_from_db()
    assert delivery.status == Status.PENDING and delivery.attempts == 1
    assert delivery.next_attempt_at == now + timedelta(seconds=5)
    assert push.due(now) == []
    # Not due yet: nothing is sent.
    assert push.deliver(delivery.pk, now=now + timedelta(seconds=1), streams_open=NEVER) == (
        "not due"
    )
    later = now + timedelta(seconds=6)
    assert push.due(later) == [delivery.pk]
    assert push.deliver(delivery.pk, now=later, streams_open=NEVER) == "sent"
    delivery.refresh_from_db()
    assert delivery.status == Status.SENT and delivery.attempts == 2
    codes = list(
        PushAttempt.objects.filter(delivery=delivery).values_list("status_code", flat=True)
    )
    assert codes == [500, 201]
    assert len(service.requests) == 2


def test_retries_give_up_after_the_most_attempts(vapid, service, device, settings):
    settings.TONGITS_PUSH_MAX_ATTEMPTS = 2
    service.answers = [503, 429]
    delivery = queued(notify(device.user))
    now = timezone.now()
    assert push.deliver(delivery.pk, now=now, streams_open=NEVER).startswith("retry")
    assert push.deliver(delivery.pk, now=now + timedelta(minutes=1), streams_open=NEVER) == (
        "failed"
    )
    delivery.refresh_from_db()
    assert delivery.status == Status.FAILED and delivery.attempts == 2
    assert "gave up after 2 tries" in delivery.detail


def test_an_unreachable_service_is_retried(vapid, device, service):
    device.token = "http://127.0.0.1:9/push/abc"  # the discard port: connection refused
    device.save()
    delivery = queued(notify(device.user))
    assert push.deliver(delivery.pk, streams_open=NEVER).startswith("retry")
    delivery.refresh_from_db()
    assert delivery.status == Status.PENDING
    [attempt] = PushAttempt.objects.filter(delivery=delivery)
    assert attempt.status_code is None and "network error" in attempt.error
    assert "/push/abc" not in attempt.error


def test_a_client_error_fails_at_once(vapid, service, device):
    service.answers = [400]
    delivery = queued(notify(device.user))
    assert push.deliver(delivery.pk, streams_open=NEVER) == "failed"
    assert Device.objects.filter(pk=device.pk).exists()


def test_nothing_is_sent_while_a_stream_is_open(vapid, service, device):
    delivery = queued(notify(device.user))
    seen = []

    def watching(user_id: int) -> bool:
        seen.append(user_id)
        return True

    result = push.deliver(delivery.pk, streams_open=watching)
    assert result.startswith("skipped")
    assert seen == [device.user_id]
    assert service.requests == []
    delivery.refresh_from_db()
    assert delivery.status == Status.SKIPPED
    assert "stream" in delivery.detail
    assert delivery.attempts == 0
    assert not PushAttempt.objects.filter(delivery=delivery).exists()


def test_the_default_stream_check_reads_the_stream_slots(vapid, service, device, settings):
    from ops import stream_slots

    settings.TONGITS_MAX_STREAMS_PER_USER = 3
    slot = stream_slots.take(device.user_id)
    try:
        delivery = queued(notify(device.user))
        assert push.deliver(delivery.pk).startswith("skipped")
    finally:
        stream_slots.release(slot)
    assert service.requests == []


def test_an_older_turn_of_the_same_game_is_skipped(vapid, service, device, browser):
    game = uuid.uuid4()
    older = queued(notify(device.user, game_id=game))
    newer = queued(notify(device.user, game_id=game))
    other_game = queued(notify(device.user))
    assert push.deliver(older.pk, streams_open=NEVER).startswith("skipped: a newer your_turn")
    assert push.deliver(newer.pk, streams_open=NEVER) == "sent"
    assert push.deliver(other_game.pk, streams_open=NEVER) == "sent"
    assert len(service.requests) == 2
    assert browser.read(service.requests[0]["body"])["notification_id"] == newer.notification_id


def test_a_removed_device_is_skipped(vapid, service, device):
    delivery = queued(notify(device.user))
    device.delete()
    assert push.deliver(delivery.pk, streams_open=NEVER) == "skipped: the device was removed"
    assert service.requests == []


def test_a_claimed_delivery_is_not_taken_twice(vapid, service, device):
    delivery = queued(notify(device.user))
    assert push.deliver(delivery.pk, streams_open=NEVER) == "sent"
    assert push.deliver(delivery.pk, streams_open=NEVER) == "not due"
    assert len(service.requests) == 1


def test_devices_of_an_unconfigured_kind_cost_no_delivery(vapid, service, device):
    for kind in ("fcm", "apns"):  # registered while FCM and APNs were configured
        Device.objects.create(
            user=device.user, session=device.session, kind=kind, token=f"{kind}-token-1234567"
        )
    n = notify(device.user)
    assert push.record(n) == 1  # the Web Push device only
    assert list(PushDelivery.objects.values_list("device_kind", flat=True)) == ["webpush"]
    # One recorded before its kind was turned off is skipped, never tried.
    fcm = Device.objects.get(kind="fcm")
    late = PushDelivery.objects.create(
        notification=n,
        device_id=fcm.pk,
        device_kind="fcm",
        target="fcm",
        next_attempt_at=timezone.now(),
        created_at=timezone.now(),
    )
    assert push.deliver(late.pk, streams_open=NEVER) == "skipped: fcm is not configured"
    late.refresh_from_db()
    assert late.status == Status.SKIPPED and late.attempts == 0
    assert not PushAttempt.objects.filter(delivery=late).exists()


def test_a_batch_is_delivered_in_a_constant_number_of_statements(
    vapid, service, device, auth_client_factory, browser
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def statements(users: int) -> int:
        ids = []
        for _ in range(users):
            client = auth_client_factory()
            Device.objects.create(
                user=client.user,
                session=client.auth_session,
                kind=Device.Kind.WEBPUSH,
                token=f"http://127.0.0.1:{service.port}/push/{uuid.uuid4().hex}",
                p256dh=browser.p256dh,
                auth=browser.auth,
            )
            ids.append(queued(notify(client.user, by=client.user.username)).pk)
        with CaptureQueriesContext(connection) as queries:
            outcomes = push.deliver_many(ids, streams_open=NEVER)
        assert set(outcomes.values()) == {"sent"}
        return len(queries)

    assert statements(1) == statements(6)


# --- record and due ------------------------------------------------------------------------------


def test_record_only_for_push_kinds_and_once(vapid, device, settings):
    settings.TONGITS_PUSH_KINDS = frozenset({"your_turn"})
    assert push.record(notify(device.user, kind=Kind.CHIPS_SETTLED)) == 0
    assert push.record(notify(device.user, kind=Kind.MATCH_OVER)) == 0
    turn = notify(device.user)
    assert push.record(turn) == 1
    assert push.record(turn) == 0
    assert PushDelivery.objects.count() == 1
    delivery = PushDelivery.objects.get()
    assert delivery.device_id == device.pk
    assert delivery.next_attempt_at is not None and delivery.created_at is not None
    assert push.due() == [delivery.pk]
    assert push.due(limit=0) == []


def test_record_without_devices_records_nothing(vapid, user_factory):
    assert push.record(notify(user_factory())) == 0


def test_payload_texts(db, user_factory):
    user = user_factory()
    game = uuid.uuid4()
    host = user_factory(username="maria")
    invited = push.payload_for(notify(user, kind=Kind.INVITED, game_id=game, by_user_id=host.pk))
    assert invited["body"] == f"maria invited you to table {game.hex[:8]}"
    assert invited["url"] == f"/#/table/{game}"
    assert invited["game_id"] == str(game)
    answered = notify(host, kind=Kind.INVITATION_ANSWERED, user_id=user.pk, accepted=False)
    assert push.payload_for(answered)["body"].startswith(f"{user.username} declined")
    won = push.payload_for(notify(user, kind=Kind.MATCH_OVER, won=True, aborted=False))
    assert won["title"] == "Match over" and won["body"].startswith("You won the match")
    settled = push.payload_for(notify(user, kind=Kind.CHIPS_SETTLED, amount=250, balance=999))
    assert "250" not in json.dumps(settled) and "999" not in json.dumps(settled)
    sign_in = push.payload_for(notify(user, kind=Kind.NEW_SIGN_IN, device="<script>"))
    assert "<script>" not in json.dumps(sign_in)
    assert set(sign_in) == {"kind", "notification_id", "game_id", "title", "body", "url"}


# --- the devices API -----------------------------------------------------------------------------

DEVICES = "/api/v1/me/devices"


def subscription(browser: Browser, endpoint: str = "https://push.example.com/wpush/v2/abc"):
    return {
        "kind": "webpush",
        "endpoint": endpoint,
        "expirationTime": None,
        "keys": {"p256dh": browser.p256dh, "auth": browser.auth},
    }


@pytest.fixture
def mobile(settings) -> None:
    """FCM and APNs configured (registering a token reads neither file; sending is
    test_mobile_push's)."""
    settings.TONGITS_FCM_CREDENTIALS = "/etc/tongits/service-account.json"
    settings.TONGITS_APNS_KEY_FILE = "/etc/tongits/AuthKey_KEY1234567.p8"


def test_register_list_and_remove(vapid, mobile, auth_client_factory, browser):
    client = auth_client_factory()
    answer = client.post(DEVICES, subscription(browser), format="json")
    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert body["kind"] == "webpush"
    assert body["endpoint_host"] == "push.example.com"
    assert body["session"] == str(client.auth_session.pk)
    assert body["current"] is True and body["deliverable"] is True
    fcm = client.post(DEVICES, {"kind": "fcm", "token": "f" * 40 + ":APA91b"}, format="json")
    assert fcm.status_code == 201 and fcm.json()["endpoint_host"] is None

    listing = client.get(DEVICES)
    assert listing.status_code == 200
    assert [d["id"] for d in listing.json()] == [body["id"], fcm.json()["id"]]
    text = listing.content.decode()
    for secret in (browser.p256dh, browser.auth, "/wpush/v2/abc", "APA91b"):
        assert secret not in text
    assert {"p256dh", "auth", "token", "keys", "endpoint"}.isdisjoint(listing.json()[0])

    assert client.delete(f"{DEVICES}/{body['id']}").status_code == 204
    assert [d["id"] for d in client.get(DEVICES).json()] == [fcm.json()["id"]]
    gone = client.delete(f"{DEVICES}/{body['id']}")
    assert gone.status_code == 404 and gone.json()["code"] == "not_found"


def test_the_same_target_moves_to_the_new_session_or_owner(
    vapid, auth_client_factory, browser, user_factory
):
    first = auth_client_factory()
    device_id = first.post(DEVICES, subscription(browser), format="json").json()["id"]
    # Another log-in of the same user on this browser: the device moves, keeping its id.
    second = auth_client_factory(first.user)
    other_keys = Browser()
    moved = second.post(DEVICES, subscription(other_keys), format="json")
    assert moved.status_code == 200
    assert moved.json()["id"] == device_id
    assert moved.json()["session"] == str(second.auth_session.pk)
    assert Device.objects.get(pk=device_id).p256dh == other_keys.p256dh
    # Another user: the device changed hands, under a new id.
    stranger = auth_client_factory()
    taken = stranger.post(DEVICES, subscription(browser), format="json")
    assert taken.status_code == 201
    assert taken.json()["id"] != device_id
    assert first.get(DEVICES).json() == []
    assert Device.objects.count() == 1


def test_another_users_device_is_not_found(vapid, auth_client_factory, browser):
    owner = auth_client_factory()
    device_id = owner.post(DEVICES, subscription(browser), format="json").json()["id"]
    stranger = auth_client_factory()
    answer = stranger.delete(f"{DEVICES}/{device_id}")
    assert answer.status_code == 404 and answer.json()["code"] == "not_found"
    assert Device.objects.filter(pk=device_id).exists()
    assert stranger.get(DEVICES).json() == []


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "kind"),
        ({"kind": "carrier-pigeon", "token": "x" * 40}, "kind"),
        ({"kind": "webpush"}, "endpoint"),
        ({"kind": "webpush", "endpoint": "https://push.example.com/a"}, "keys"),
        ({"kind": "webpush", "endpoint": "http://push.example.com/a", "keys": "KEYS"}, "endpoint"),
        ({"kind": "webpush", "endpoint": "https://127.0.0.1/a", "keys": "KEYS"}, "endpoint"),
        ({"kind": "webpush", "endpoint": "https://localhost/a", "keys": "KEYS"}, "endpoint"),
        ({"kind": "webpush", "endpoint": 7, "keys": "KEYS"}, "endpoint"),
        ({"kind": "webpush", "endpoint": "https://push.example.com/a", "keys": {}}, "keys.p256dh"),
        (
            {
                "kind": "webpush",
                "endpoint": "https://push.example.com/a",
                "keys": {"p256dh": "bm90IGEga2V5", "auth": "AAAAAAAAAAAAAAAAAAAAAA"},
            },
            "keys.p256dh",
        ),
        (
            {"kind": "webpush", "endpoint": "https://push.example.com/a", "keys": "BADAUTH"},
            "keys.auth",
        ),
        ({"kind": "fcm"}, "token"),
        ({"kind": "fcm", "token": "short"}, "token"),
        (
            {"kind": "apns", "token": "not hex at all, not at all, not at all, no no no no no"},
            "token",
        ),
        ({"kind": "fcm", "token": "f" * 40, "endpoint": "https://push.example.com/a"}, "endpoint"),
    ],
)
def test_bad_bodies_are_400(vapid, auth_client, browser, body, field):
    body = dict(body)
    if body.get("keys") == "KEYS":
        body["keys"] = {"p256dh": browser.p256dh, "auth": browser.auth}
    elif body.get("keys") == "BADAUTH":
        body["keys"] = {"p256dh": browser.p256dh, "auth": b64url(b"short")}
    answer = auth_client.post(DEVICES, body, format="json")
    assert answer.status_code == 400, answer.json()
    error = answer.json()
    assert error["code"] == "invalid"
    assert field in error["fields"], error
    assert not Device.objects.exists()


def test_webpush_without_a_key_is_refused(settings, auth_client, browser):
    settings.TONGITS_WEBPUSH_VAPID_PRIVATE_KEY = ""
    settings.TONGITS_APNS_KEY_FILE = "/etc/tongits/AuthKey_KEY1234567.p8"
    answer = auth_client.post(DEVICES, subscription(browser), format="json")
    assert answer.status_code == 409
    body = answer.json()
    assert body["code"] == "webpush_not_configured"
    # It names only what this server sends to: never a kind that would not be served.
    assert body["configured"] == ["apns"]
    assert "apns" in body["detail"] and "fcm" not in body["detail"]
    settings.TONGITS_APNS_KEY_FILE = ""
    answer = auth_client.post(DEVICES, subscription(browser), format="json")
    assert answer.json()["configured"] == []
    assert answer.json()["detail"] == "This server sends no pushes at all."
    fcm = auth_client.post(DEVICES, {"kind": "fcm", "token": "t" * 40}, format="json")
    assert fcm.status_code == 409 and fcm.json()["code"] == "push_not_configured"
    assert not Device.objects.exists()
    config = auth_client.get("/api/v1/push/config")
    assert config.status_code == 200 and config.json() == {"kinds": [], "webpush": None}


def test_push_config_gives_the_application_server_key(vapid, auth_client, api_client):
    answer = auth_client.get("/api/v1/push/config")
    assert answer.status_code == 200
    assert answer.json() == {
        "kinds": ["webpush"],
        "webpush": {"application_server_key": push.vapid_public_key()},
    }
    assert api_client.get("/api/v1/push/config").status_code == 401


def test_devices_need_a_session(api_client):
    assert api_client.get(DEVICES).status_code == 401
    assert api_client.post(
        DEVICES, {"kind": "fcm", "token": "t" * 40}, format="json"
    ).status_code == (401)


def test_logging_out_removes_the_sessions_devices(vapid, mobile, auth_client_factory, browser):
    client = auth_client_factory()
    other = auth_client_factory(client.user)
    client.post(DEVICES, subscription(browser), format="json")
    kept = other.post(DEVICES, {"kind": "fcm", "token": "k" * 40}, format="json").json()["id"]
    assert Device.objects.filter(user=client.user).count() == 2
    assert client.post("/api/v1/auth/logout").status_code == 204
    assert list(Device.objects.values_list("id", flat=True)) == [uuid.UUID(kept)]
    # Ending a session from another device (DELETE /me/sessions/{id}) does the same.
    third = auth_client_factory(client.user)
    third.post(DEVICES, {"kind": "apns", "token": "ab" * 32}, format="json")
    assert other.delete(f"/api/v1/me/sessions/{third.auth_session.pk}").status_code == 204
    assert list(Device.objects.values_list("id", flat=True)) == [uuid.UUID(kept)]


def test_a_user_keeps_at_most_so_many_devices(vapid, mobile, auth_client_factory, monkeypatch):
    monkeypatch.setattr(devices, "MAX_DEVICES_PER_USER", 2)
    client = auth_client_factory()
    made = [
        devices.device_register(client.user, client.auth_session, "fcm", f"token-{i:020d}")[0]
        for i in range(3)
    ]
    assert {d.pk for d in devices.devices_of(client.user)} == {made[1].pk, made[2].pk}
