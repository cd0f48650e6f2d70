"""Pushes to Android (FCM HTTP v1) and iOS (APNs over HTTP/2), end to end against stand-ins of
both services (``tests.notifications.standins``: real servers on 127.0.0.1, shared by this
module's tests), reached through the real clients (google-auth; ``notifications.http2``).

Each stand-in checks what a real service checks: the OAuth assertion's signature against the
test service account's public key and the bearer it issued; the provider JWT's ES256 signature
against the team key, and every APNs header. A request it found wrong is recorded with its
problems, and every test here asserts there were none.
"""

from __future__ import annotations

import itertools
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.utils import timezone

from notifications import push
from notifications.models import Device, Kind, Notification, PushAttempt, PushDelivery, Status
from notifications.projector import Projector
from tests.api.games_support import start_game
from tests.chips.support import play_to_the_end
from tests.notifications.standins import Answer, ApnsStandIn, FcmStandIn, fcm_error
from tests.notifications.support import CARD_TOKEN

pytestmark = pytest.mark.django_db

NEVER = lambda user_id: False  # noqa: E731  (no stream open)
DEVICES = "/api/v1/me/devices"
BAD_TOKEN = fcm_error(400, "INVALID_ARGUMENT", token_field=True)
RULES = {"preset": "standard", "wins_to_match": 1, "turn_seconds": 0}
_tokens = itertools.count(1)


@pytest.fixture(scope="module")
def standins(tmp_path_factory) -> Iterator[tuple[FcmStandIn, ApnsStandIn, Path]]:
    directory = tmp_path_factory.mktemp("push-standins")
    fcm, apns = FcmStandIn(), ApnsStandIn(directory)
    yield fcm, apns, directory
    fcm.close()
    apns.close()


@pytest.fixture
def fcm(standins) -> FcmStandIn:
    return standins[0]


@pytest.fixture
def apns(standins) -> ApnsStandIn:
    return standins[1]


@pytest.fixture(autouse=True)
def configured(standins, settings, monkeypatch) -> None:
    """FCM and APNs pointed at the stand-ins (Web Push off), as an operator's settings would."""
    fcm, apns, directory = standins
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.TONGITS_WEBPUSH_VAPID_PRIVATE_KEY = ""
    settings.TONGITS_FCM_CREDENTIALS = fcm.service_account(directory / "service-account.json")
    settings.TONGITS_FCM_ENDPOINT = fcm.base
    settings.TONGITS_APNS_KEY_FILE = apns.key_file(directory / "AuthKey_KEY1234567.p8")
    settings.TONGITS_APNS_KEY_ID = apns.key_id
    settings.TONGITS_APNS_TEAM_ID = apns.team_id
    settings.TONGITS_APNS_TOPIC = apns.topic
    settings.TONGITS_APNS_HOST = apns.url
    settings.TONGITS_APNS_CA_FILE = str(apns.ca_file)
    settings.TONGITS_PUSH_KINDS = frozenset({"your_turn", "invited", "match_over", "new_sign_in"})
    settings.TONGITS_PUSH_MAX_ATTEMPTS = 5
    settings.TONGITS_DELIVERY_TIMEOUT_SECONDS = 5.0
    settings.TONGITS_MAX_STREAMS_PER_USER = 0  # no stream is ever seen open: every push goes
    yield
    for standin in (fcm, apns):
        assert not [r.problems for r in standin.requests if r.problems]
        standin.clear()
    apns.expired.clear()


def android_token() -> str:
    return f"fcm{next(_tokens):05d}:APA91b{uuid.uuid4().hex}"


def ios_token() -> str:
    return uuid.uuid4().hex + uuid.uuid4().hex


def phone(client, kind: str) -> tuple[str, str]:
    """Register a device of ``kind`` through the API: (device id, its token)."""
    token = android_token() if kind == "fcm" else ios_token()
    answer = client.post(DEVICES, {"kind": kind, "token": token}, format="json")
    assert answer.status_code == 201, answer.json()
    assert answer.json()["deliverable"] is True
    return answer.json()["id"], token


def notify(user, kind: str = Kind.YOUR_TURN, game_id: uuid.UUID | None = None) -> Notification:
    game_id = game_id or uuid.uuid4()
    return Notification.objects.create(
        user=user,
        kind=kind,
        cause=f"{kind}:{game_id}:{uuid.uuid4().hex}",
        game_id=game_id,
        data={"game_id": str(game_id), "version": 7, "seat": 1, "draw_answer": False},
        created_at=timezone.now(),
    )


def deliveries(notification) -> dict[str, PushDelivery]:
    push.record(notification)
    return {d.device_kind: d for d in PushDelivery.objects.filter(notification=notification)}


# --- a played match ------------------------------------------------------------------------------


def test_a_played_matchs_turns_reach_the_players_android_and_iphone(auth_client_factory, fcm, apns):
    clients = [auth_client_factory() for _ in range(3)]
    player = clients[1]
    android_id, android = phone(player, "fcm")
    iphone_id, iphone = phone(player, "apns")
    game_id = start_game(clients, rules=RULES)
    play_to_the_end(game_id, {i: c.user for i, c in enumerate(clients)}, seed=5)

    Projector().run_all()  # the notifier's step: the inbox and its pushes
    turns = Notification.objects.filter(user=player.user, kind=Kind.YOUR_TURN, game_id=game_id)
    assert turns.exists()
    due = push.due(limit=10_000)
    assert len(due) == PushDelivery.objects.count()
    outcomes = push.deliver_many(due)
    assert set(outcomes.values()) <= {"sent"} | {
        f"skipped: a newer {kind} of this game replaced it" for kind in Kind.values
    }

    # The newest turn (older ones were replaced before they went) and the match's end, each to
    # both phones, and nothing of a hand in any of them.
    [to_android] = [r for r in fcm.to(android) if r.body["message"]["data"]["kind"] == "your_turn"]
    message = to_android.body["message"]
    newest = turns.order_by("-id").first()
    assert message["data"] == {
        "kind": "your_turn",
        "notification_id": str(newest.pk),
        "game_id": game_id,
        "url": f"/#/table/{game_id}",
    }
    assert message["notification"]["title"] == "Your turn"
    assert game_id.replace("-", "")[:8] in message["notification"]["body"]
    assert message["android"] == {"ttl": "43200s", "priority": "high", "collapse_key": game_id}
    [to_iphone] = [r for r in apns.to(iphone) if r.body["kind"] == "your_turn"]
    assert to_iphone.body["aps"]["alert"] == message["notification"]
    assert to_iphone.body["notification_id"] == newest.pk
    assert to_iphone.headers["apns-priority"] == "10"
    assert to_iphone.headers["apns-collapse-id"] == game_id
    assert to_iphone.headers["apns-push-type"] == "alert"
    assert to_iphone.headers["apns-topic"] == apns.topic
    kinds = {"invited", "your_turn", "match_over"}  # the invitation came with the table
    assert {r.body["message"]["data"]["kind"] for r in fcm.to(android)} == kinds
    assert {r.body["kind"] for r in apns.to(iphone)} == kinds
    [over] = [r for r in apns.to(iphone) if r.body["kind"] == "match_over"]
    assert over.headers["apns-priority"] == "5"
    for request in [*fcm.to(android), *apns.to(iphone)]:
        text = json.dumps(request.body)
        assert not CARD_TOKEN.search(text), text
    sent = PushDelivery.objects.filter(status=Status.SENT)
    assert {str(d.device_id) for d in sent} == {android_id, iphone_id}
    assert all(d.attempts == 1 for d in sent)
    assert apns.connections == 1  # every stream over one HTTP/2 connection


def test_pushes_speak_the_accounts_language(auth_client_factory, fcm, apns):
    client = auth_client_factory()
    client.user.language = "es"
    client.user.save(update_fields=["language"])
    _, android = phone(client, "fcm")
    _, iphone = phone(client, "apns")
    n = notify(client.user)
    for delivery in deliveries(n).values():
        assert push.deliver(delivery.pk, streams_open=NEVER) == "sent"
    [to_android] = fcm.to(android)
    [to_iphone] = apns.to(iphone)
    assert to_android.body["message"]["notification"]["title"] == "Tu turno"
    assert to_iphone.body["aps"]["alert"]["title"] == "Tu turno"


# --- what each answer does -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind, answer, status, kept",
    [
        ("fcm", Answer(404, fcm_error(404, "UNREGISTERED")), Status.DROPPED, False),
        ("fcm", Answer(400, BAD_TOKEN), Status.DROPPED, False),
        ("fcm", Answer(403, fcm_error(403, "SENDER_ID_MISMATCH")), Status.DROPPED, False),
        ("fcm", Answer(400, fcm_error(400, "INVALID_ARGUMENT")), Status.FAILED, True),
        ("fcm", Answer(429, fcm_error(429, "QUOTA_EXCEEDED")), Status.PENDING, True),
        ("fcm", Answer(503, fcm_error(503, "UNAVAILABLE")), Status.PENDING, True),
        ("fcm", Answer(500, fcm_error(500, "INTERNAL")), Status.PENDING, True),
        ("apns", Answer(410, {"reason": "Unregistered", "timestamp": 1}), Status.DROPPED, False),
        ("apns", Answer(400, {"reason": "BadDeviceToken"}), Status.DROPPED, False),
        ("apns", Answer(400, {"reason": "DeviceTokenNotForTopic"}), Status.DROPPED, False),
        ("apns", Answer(400, {"reason": "PayloadTooLarge"}), Status.FAILED, True),
        ("apns", Answer(403, {"reason": "InvalidProviderToken"}), Status.FAILED, True),
        ("apns", Answer(429, {"reason": "TooManyRequests"}), Status.PENDING, True),
        ("apns", Answer(503, {"reason": "ServiceUnavailable"}), Status.PENDING, True),
    ],
)
def test_each_answer_does_what_it_says(auth_client_factory, standins, kind, answer, status, kept):
    fcm, apns, _ = standins
    standin = fcm if kind == "fcm" else apns
    client = auth_client_factory()
    device_id, token = phone(client, kind)
    standin.answers[token] = [answer]
    delivery = deliveries(notify(client.user))[kind]
    now = timezone.now()
    result = push.deliver(delivery.pk, now=now, streams_open=NEVER)
    delivery.refresh_from_db()
    assert delivery.status == status, (result, delivery.detail)
    assert Device.objects.filter(pk=device_id).exists() is kept
    [request] = standin.to(token)
    assert request.status == answer.status
    [attempt] = PushAttempt.objects.filter(delivery=delivery)
    assert attempt.status_code == answer.status
    if status == Status.PENDING:  # tried again on the backoff schedule (no Retry-After here)
        assert result == "retry in 5 s"
        assert delivery.next_attempt_at == now + push.backoff(1)
        assert push.deliver(delivery.pk, now=now + push.backoff(1), streams_open=NEVER) == "sent"
        assert len(standin.to(token)) == 2
    if status == Status.DROPPED:
        assert delivery.detail.startswith("gone: ")


def test_a_429_with_retry_after_is_tried_again_no_sooner(auth_client_factory, fcm, apns):
    client = auth_client_factory()
    _, android = phone(client, "fcm")
    _, iphone = phone(client, "apns")
    fcm.answers[android] = [Answer(429, fcm_error(429, "QUOTA_EXCEEDED"), {"Retry-After": "2"})]
    apns.answers[iphone] = [Answer(429, {"reason": "TooManyRequests"}, {"Retry-After": "2"})]
    ids = [d.pk for d in deliveries(notify(client.user)).values()]
    assert set(push.deliver_many(ids, streams_open=NEVER).values()) == {"retry in 2 s"}
    # As the notifier and the workers would: whatever is due, as often as it is asked.
    deadline = time.monotonic() + 10
    while PushDelivery.objects.filter(pk__in=ids, status=Status.PENDING).exists():
        assert time.monotonic() < deadline
        push.deliver_many(push.due(), streams_open=NEVER)
        time.sleep(0.05)
    assert set(PushDelivery.objects.filter(pk__in=ids).values_list("status", flat=True)) == {
        Status.SENT
    }
    for requests in (fcm.to(android), apns.to(iphone)):
        first, second = requests
        assert (first.status, second.status) == (429, 200)
        assert second.at - first.at >= 2.0


def test_a_refused_access_token_is_replaced_once_for_a_burst(auth_client_factory, fcm):
    client = auth_client_factory()
    tokens = [phone(client, "fcm")[1] for _ in range(12)]  # a dozen phones of one player
    warm = deliveries(notify(client.user))
    assert push.deliver(warm["fcm"].pk, streams_open=NEVER) == "sent"  # a bearer is cached
    before = len(fcm.token_requests)
    fcm.revoke()  # every bearer issued so far is now answered 401
    fcm.clear()
    burst = notify(client.user)
    push.record(burst)
    ids = list(PushDelivery.objects.filter(notification=burst).values_list("id", flat=True))
    assert len(ids) == 12
    assert set(push.deliver_many(ids, streams_open=NEVER).values()) == {"sent"}
    assert len(fcm.token_requests) == before + 1  # one new access token for the whole burst
    assert {r.token for r in fcm.requests if r.status == 200} == set(tokens)
    assert len({r.credential for r in fcm.requests if r.status == 200}) == 1
    assert 1 <= sum(r.status == 401 for r in fcm.requests) <= 12
    assert fcm.refused_assertions == 0


def test_a_401_after_a_new_access_token_fails_the_push(auth_client_factory, fcm):
    client = auth_client_factory()
    device_id, token = phone(client, "fcm")
    warm = deliveries(notify(client.user))["fcm"]
    assert push.deliver(warm.pk, streams_open=NEVER) == "sent"  # an access token is cached
    unauthorized = fcm_error(401, "THIRD_PARTY_AUTH_ERROR")
    fcm.answers[token] = [Answer(401, unauthorized), Answer(401, unauthorized)]
    before = len(fcm.token_requests)
    delivery = deliveries(notify(client.user))["fcm"]
    assert push.deliver(delivery.pk, streams_open=NEVER) == "failed"
    assert len(fcm.to(token)) == 3 and len(fcm.token_requests) == before + 1
    assert Device.objects.filter(pk=device_id).exists()


def test_an_expired_provider_token_is_replaced_once_not_in_a_storm(auth_client_factory, apns):
    client = auth_client_factory()
    tokens = [phone(client, "apns")[1] for _ in range(12)]  # a dozen phones of one player
    warm = deliveries(notify(client.user))
    assert set(push.deliver_many([warm["apns"].pk], streams_open=NEVER).values()) == {"sent"}
    [current] = apns.jwts()
    apns.expired.add(current)  # APNs now calls it expired, on every stream at once
    apns.clear()
    burst = notify(client.user)
    push.record(burst)
    ids = list(PushDelivery.objects.filter(notification=burst).values_list("id", flat=True))
    assert set(push.deliver_many(ids, streams_open=NEVER).values()) == {"sent"}
    [new] = {r.credential for r in apns.requests if r.status == 200}  # one new JWT for them all
    assert new != current
    assert {r.token for r in apns.requests if r.status == 200} == set(tokens)
    for request in apns.requests:
        assert (request.status, request.credential) in ((403, current), (200, new))
    # The next pushes keep the new one.
    later = deliveries(notify(client.user))
    apns.clear()
    assert push.deliver(later["apns"].pk, streams_open=NEVER) == "sent"
    assert apns.jwts() == [new]


def test_an_unreachable_service_is_retried(auth_client_factory, settings):
    client = auth_client_factory()
    phone(client, "fcm")
    phone(client, "apns")
    settings.TONGITS_FCM_ENDPOINT = "http://127.0.0.1:9"  # the discard port: refused
    settings.TONGITS_APNS_HOST = "https://127.0.0.1:9"
    for delivery in deliveries(notify(client.user)).values():
        assert push.deliver(delivery.pk, streams_open=NEVER) == "retry in 5 s"
        [attempt] = PushAttempt.objects.filter(delivery=delivery)
        assert attempt.status_code is None and "network error" in attempt.error


# --- what is configured --------------------------------------------------------------------------


def test_an_unconfigured_kind_is_refused_and_nothing_stored(auth_client, settings):
    settings.TONGITS_APNS_KEY_FILE = ""
    answer = auth_client.post(DEVICES, {"kind": "apns", "token": ios_token()}, format="json")
    assert answer.status_code == 409
    body = answer.json()
    assert body["code"] == "push_not_configured"
    assert body["configured"] == ["fcm"]
    assert "fcm" in body["detail"] and "apns" in body["detail"]
    settings.TONGITS_FCM_CREDENTIALS = ""
    answer = auth_client.post(DEVICES, {"kind": "fcm", "token": android_token()}, format="json")
    assert answer.status_code == 409
    assert answer.json()["configured"] == []
    assert not Device.objects.exists()
    config = auth_client.get("/api/v1/push/config").json()
    assert config == {"kinds": [], "webpush": None}


def test_push_config_lists_the_configured_kinds(auth_client, settings):
    assert auth_client.get("/api/v1/push/config").json() == {
        "kinds": ["fcm", "apns"],
        "webpush": None,
    }


def test_devices_of_a_kind_no_longer_configured_are_listed_and_never_tried(
    auth_client_factory, apns, settings
):
    client = auth_client_factory()
    _, android = phone(client, "fcm")
    iphone_id, iphone = phone(client, "apns")
    pending = deliveries(notify(client.user))  # recorded while APNs was configured
    settings.TONGITS_APNS_KEY_FILE = ""  # then the operator turned it off

    listing = {d["id"]: d for d in client.get(DEVICES).json()}
    assert listing[iphone_id]["deliverable"] is False
    assert [d["deliverable"] for d in listing.values()].count(True) == 1

    assert push.deliver(pending["apns"].pk, streams_open=NEVER) == (
        "skipped: apns is not configured"
    )
    skipped = PushDelivery.objects.get(pk=pending["apns"].pk)
    assert skipped.status == Status.SKIPPED and skipped.attempts == 0
    assert not PushAttempt.objects.filter(delivery=skipped).exists()
    # A new notification is not even recorded for it.
    assert set(deliveries(notify(client.user))) == {"fcm"}
    assert apns.to(iphone) == []
    assert push.deliver(pending["fcm"].pk, streams_open=NEVER) == "sent"


def test_settings_that_cannot_send_stop_the_start(settings, tmp_path):
    from notifications.checks import notification_settings

    assert notification_settings() == []
    settings.TONGITS_FCM_CREDENTIALS = str(tmp_path / "missing.json")
    (tmp_path / "key.p8").write_text("not a key")
    settings.TONGITS_APNS_KEY_FILE = str(tmp_path / "key.p8")
    assert [e.id for e in notification_settings()] == ["notifications.E003", "notifications.E004"]
