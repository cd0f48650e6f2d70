"""Signed webhooks to studios (notifications.webhooks): the outbox written with its cause, tries
sent to a real local HTTP receiver that checks every signature with the standardwebhooks
library, the retry schedule, a worker lost mid-request, the settings' endpoints and the admin."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import ThreadingHTTPServer

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from accounts.models import User
from notifications import outbox, webhooks
from notifications.models import (
    Notification,
    PushAttempt,
    PushDelivery,
    Status,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookMessage,
)
from tests.locks import backend_pid, wait_until_blocked_by
from tests.notifications.support import Receiver, receiver_handler

CREATED = datetime(2026, 5, 1, 12, 30, 15, 250000, tzinfo=UTC)


@pytest.fixture
def receiver_factory() -> Iterator:
    servers: list[ThreadingHTTPServer] = []

    def make(**options) -> Receiver:
        receiver = Receiver(secret=webhooks.new_secret(), **options)
        receiver.server = ThreadingHTTPServer(("127.0.0.1", 0), receiver_handler(receiver))
        threading.Thread(target=receiver.server.serve_forever, daemon=True).start()
        servers.append(receiver.server)
        return receiver

    yield make
    for server in servers:
        server.shutdown()
        server.server_close()


def endpoint_for(receiver: Receiver, **fields) -> WebhookEndpoint:
    return WebhookEndpoint.objects.create(url=receiver.url, secret=receiver.secret, **fields)


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/hooks"


def one_delivery(cause: str = "match_finished:g1", kind: str = "match.finished"):
    message = webhooks.record(kind, cause, {"game_id": "g1", "winner": "ann"}, CREATED)
    assert message is not None
    [delivery] = WebhookDelivery.objects.filter(message=message)
    return message, delivery


def codes(delivery: WebhookDelivery) -> list[int | None]:
    return list(
        WebhookAttempt.objects.filter(delivery=delivery)
        .order_by("id")
        .values_list("status_code", flat=True)
    )


# The outbox: written once per cause, one delivery per endpoint that wants it.


@pytest.mark.django_db
def test_record_writes_one_message_and_a_delivery_per_wanting_endpoint():
    every = WebhookEndpoint.objects.create(url="https://a.example/h", secret=webhooks.new_secret())
    chips_only = WebhookEndpoint.objects.create(
        url="https://b.example/h", secret=webhooks.new_secret(), kinds=["chips.settled"]
    )
    WebhookEndpoint.objects.create(
        url="https://c.example/h", secret=webhooks.new_secret(), active=False
    )
    data = {"game_id": "5f0c", "placements": ["ann", "bob", "cy"]}
    before = timezone.now()

    message = webhooks.record("match.finished", "match_finished:5f0c", data, CREATED)

    assert message is not None and message.id == webhooks.message_id("match_finished:5f0c")
    stored = WebhookMessage.objects.get()
    assert stored.payload == {
        "type": "match.finished",
        "timestamp": "2026-05-01T12:30:15.250000Z",
        "data": data,
    }
    assert (stored.kind, stored.cause, stored.created_at) == (
        "match.finished",
        "match_finished:5f0c",
        CREATED,
    )
    [delivery] = WebhookDelivery.objects.all()
    assert delivery.endpoint == every and delivery.status == Status.PENDING
    assert delivery.attempts == 0 and before <= delivery.next_attempt_at <= timezone.now()
    assert delivery.created_at == delivery.next_attempt_at

    settled = webhooks.record("chips.settled", "chips_settled:5f0c", {"game_id": "5f0c"}, CREATED)
    assert settled is not None
    assert {d.endpoint_id for d in WebhookDelivery.objects.filter(message=settled)} == {
        every.pk,
        chips_only.pk,
    }

    # Again (a redelivered signal, a re-projection): nothing new.
    assert webhooks.record("match.finished", "match_finished:5f0c", {"other": 1}, CREATED) is None
    assert WebhookMessage.objects.count() == 2 and WebhookDelivery.objects.count() == 3
    assert WebhookMessage.objects.get(pk=message.pk).payload["data"] == data


def test_message_ids_are_stable_per_cause():
    first = webhooks.message_id("match_finished:5f0c")
    assert first == webhooks.message_id("match_finished:5f0c")
    assert first != webhooks.message_id("match_finished:5f0d")
    assert first.startswith("msg_") and 26 <= len(first) - 4 <= 32
    assert first[4:].isalnum()


@pytest.mark.django_db
def test_record_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match="unknown webhook kind"):
        webhooks.record("match.started", "x:1", {}, CREATED)
    assert not WebhookMessage.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_records_of_one_cause_write_it_once():
    WebhookEndpoint.objects.create(url="https://a.example/h", secret=webhooks.new_secret())
    second_started = threading.Event()
    results: dict[str, object] = {}

    def second() -> None:
        try:
            second_started.set()
            with transaction.atomic():
                # Waits on the first transaction's uncommitted row, then writes nothing.
                results["second"] = webhooks.record("chips.settled", "c:1", {"n": 2}, CREATED)
        finally:
            connection.close()

    with transaction.atomic():
        results["first"] = webhooks.record("chips.settled", "c:1", {"n": 1}, CREATED)
        thread = threading.Thread(target=second)
        thread.start()
        assert second_started.wait(5)
        wait_until_blocked_by(backend_pid())  # the second waits in its INSERT for this row
        assert thread.is_alive()
    thread.join(10)

    assert results["first"] is not None and results["second"] is None
    assert WebhookMessage.objects.get().payload["data"] == {"n": 1}
    assert WebhookDelivery.objects.count() == 1


# Delivery: signed, retried on the schedule, given up when it is exhausted.


@pytest.mark.django_db
def test_deliver_posts_the_payload_signed_for_the_endpoint(receiver_factory):
    receiver = receiver_factory()
    endpoint_for(receiver)
    message, delivery = one_delivery()

    assert webhooks.deliver(delivery.pk) == "sent"

    [(msg_id, verified, body, headers)] = receiver.received
    assert verified and msg_id == message.id
    assert headers["content-type"] == "application/json"
    assert abs(int(headers["webhook-timestamp"]) - time.time()) < 60
    assert headers["webhook-signature"].startswith("v1,")
    assert json.loads(body) == message.payload
    assert b" " not in body  # compact JSON
    assert Webhook(receiver.secret).verify(body, headers) == message.payload
    with pytest.raises(WebhookVerificationError):
        Webhook(webhooks.new_secret()).verify(body, headers)  # another studio's secret
    delivery.refresh_from_db()
    assert delivery.status == Status.SENT and delivery.attempts == 1
    assert delivery.finished_at is not None and delivery.next_attempt_at is None
    [attempt] = WebhookAttempt.objects.filter(delivery=delivery)
    assert attempt.status_code == 200 and attempt.error == ""
    assert webhooks.deliver(delivery.pk) == "done"  # a duplicate task sends nothing
    assert len(receiver.received) == 1


@pytest.mark.django_db
def test_a_failing_receiver_gets_the_same_message_on_the_third_try(receiver_factory):
    receiver = receiver_factory(fail_first=2)
    endpoint_for(receiver)
    message, delivery = one_delivery()
    now = timezone.now()

    assert webhooks.deliver(delivery.pk, now=now) == "retry"
    delivery.refresh_from_db()
    assert delivery.next_attempt_at == now + timedelta(seconds=5) and delivery.attempts == 1
    assert "500" in delivery.detail
    assert webhooks.deliver(delivery.pk, now=now + timedelta(seconds=4)) == "busy"  # not yet
    assert webhooks.due(now + timedelta(seconds=4)) == []
    assert webhooks.due(now + timedelta(seconds=5)) == [delivery.pk]

    now += timedelta(seconds=5)
    assert webhooks.deliver(delivery.pk, now=now) == "retry"
    delivery.refresh_from_db()
    assert delivery.next_attempt_at == now + timedelta(minutes=5)

    now += timedelta(minutes=5)
    assert webhooks.deliver(delivery.pk, now=now) == "sent"
    delivery.refresh_from_db()
    assert delivery.status == Status.SENT and delivery.attempts == 3
    assert delivery.finished_at == now
    assert codes(delivery) == [500, 500, 200]
    assert receiver.ids() == [message.id] * 3
    assert all(verified for _, verified, _, _ in receiver.received)
    assert len({body for _, _, body, _ in receiver.received}) == 1  # the same bytes each time


def test_the_schedule_is_the_specs():
    assert webhooks.RETRY_DELAYS == (0, 5, 300, 1800, 7200, 18000, 36000, 36000)
    assert [webhooks.next_delay(n) for n in range(1, 9)] == [
        5,
        300,
        1800,
        7200,
        18000,
        36000,
        36000,
        None,
    ]
    assert 24 * 3600 <= sum(webhooks.RETRY_DELAYS) <= 30 * 3600


@pytest.mark.django_db
def test_an_unreachable_receiver_is_retried_on_the_schedule_then_given_up():
    WebhookEndpoint.objects.create(url=closed_port_url(), secret=webhooks.new_secret())
    _, delivery = one_delivery()
    now = timezone.now()
    outcomes = []
    for tries in range(1, len(webhooks.RETRY_DELAYS) + 1):
        outcomes.append(webhooks.deliver(delivery.pk, now=now))
        delivery.refresh_from_db()
        assert delivery.attempts == tries
        delay = webhooks.next_delay(tries)
        if delay is not None:
            assert delivery.next_attempt_at == now + timedelta(seconds=delay)
            assert webhooks.due(now) == []
            now = delivery.next_attempt_at

    assert outcomes == ["retry"] * 7 + ["failed"]
    assert delivery.status == Status.FAILED and delivery.finished_at == now
    assert delivery.next_attempt_at is None and webhooks.due(now + timedelta(days=9)) == []
    attempts = list(WebhookAttempt.objects.filter(delivery=delivery))
    assert len(attempts) == 8 and all(a.status_code is None for a in attempts)
    assert all("ConnectionError" in a.error and len(a.error) <= 200 for a in attempts)
    assert webhooks.deliver(delivery.pk, now=now + timedelta(days=1)) == "done"


@pytest.mark.django_db
def test_a_receiver_slower_than_the_timeout_counts_as_a_failed_try(receiver_factory, settings):
    settings.TONGITS_DELIVERY_TIMEOUT_SECONDS = 0.3
    receiver = receiver_factory(delay=1.5)
    endpoint_for(receiver)
    _, delivery = one_delivery()
    now = timezone.now()

    started = time.monotonic()
    assert webhooks.deliver(delivery.pk, now=now) == "retry"
    assert time.monotonic() - started < 1.4  # it did not wait for the answer

    delivery.refresh_from_db()
    assert delivery.status == Status.PENDING and delivery.attempts == 1
    assert delivery.next_attempt_at == now + timedelta(seconds=5)
    [attempt] = WebhookAttempt.objects.filter(delivery=delivery)
    assert attempt.status_code is None and "timeout" in attempt.error
    assert 250 <= attempt.milliseconds < 1400
    assert receiver.received and receiver.received[0][1]  # it arrived, signed


@pytest.mark.django_db
def test_a_try_whose_worker_died_is_due_again_after_its_lease(receiver_factory, monkeypatch):
    receiver = receiver_factory()
    endpoint_for(receiver)
    message, delivery = one_delivery()
    now = timezone.now()

    class WorkerKilled(BaseException):
        pass

    def killed(*args, **kwargs):
        raise WorkerKilled

    with monkeypatch.context() as patched:
        patched.setattr(webhooks.requests, "post", killed)
        with pytest.raises(WorkerKilled):
            webhooks.deliver(delivery.pk, now=now)

    delivery.refresh_from_db()  # the claim was committed before the request
    lease = timedelta(seconds=outbox.lease_seconds())
    assert delivery.status == Status.PENDING and delivery.attempts == 1
    assert delivery.next_attempt_at == now + lease
    assert not WebhookAttempt.objects.filter(delivery=delivery).exists()
    assert webhooks.due(now + lease - timedelta(seconds=1)) == []
    assert webhooks.deliver(delivery.pk, now=now + timedelta(seconds=10)) == "busy"
    assert receiver.received == []

    later = now + lease
    assert webhooks.due(later) == [delivery.pk]
    assert webhooks.deliver(delivery.pk, now=later) == "sent"
    assert receiver.ids() == [message.id]
    delivery.refresh_from_db()
    assert delivery.status == Status.SENT and delivery.attempts == 2
    assert codes(delivery) == [200]


@pytest.mark.django_db(transaction=True)
def test_a_delivery_another_worker_holds_is_busy(receiver_factory):
    receiver = receiver_factory()
    endpoint_for(receiver)
    with transaction.atomic():
        _, delivery = one_delivery()
    locked, release = threading.Event(), threading.Event()

    def other_worker() -> None:
        try:
            with transaction.atomic():
                WebhookDelivery.objects.select_for_update().get(pk=delivery.pk)
                locked.set()
                release.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=other_worker)
    thread.start()
    try:
        assert locked.wait(10)
        assert webhooks.deliver(delivery.pk) == "busy"
    finally:
        release.set()
        thread.join(10)
    assert receiver.received == []
    assert webhooks.deliver(delivery.pk) == "sent"
    assert len(receiver.received) == 1


@pytest.mark.django_db
def test_a_delivery_to_a_deactivated_endpoint_is_skipped(receiver_factory):
    receiver = receiver_factory()
    endpoint = endpoint_for(receiver)
    _, delivery = one_delivery()
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(active=False)

    assert webhooks.deliver(delivery.pk) == "skipped"
    delivery.refresh_from_db()
    assert delivery.status == Status.SKIPPED and delivery.finished_at is not None
    assert receiver.received == [] and webhooks.due() == []


# The settings' endpoints.


@pytest.mark.django_db
def test_sync_endpoints_creates_updates_and_deactivates(settings):
    by_hand = WebhookEndpoint.objects.create(
        url="https://own.example/h", secret=webhooks.new_secret()
    )
    first, second, changed = webhooks.new_secret(), webhooks.new_secret(), webhooks.new_secret()
    settings.TONGITS_WEBHOOKS = [
        {"url": "https://a.example/h", "secret": first, "kinds": ["match.finished"]},
        {"url": "https://b.example/h", "secret": second, "kinds": [], "description": "studio B"},
    ]
    assert webhooks.sync_endpoints() == {"created": 2, "updated": 0, "deactivated": 0}
    a = WebhookEndpoint.objects.get(url="https://a.example/h")
    assert (a.secret, a.kinds, a.active, a.from_settings) == (first, ["match.finished"], True, True)
    assert WebhookEndpoint.objects.get(url="https://b.example/h").description == "studio B"
    assert webhooks.sync_endpoints() == {"created": 0, "updated": 0, "deactivated": 0}

    config = [{"url": "https://a.example/h", "secret": changed, "kinds": ["chips.settled"]}]
    assert webhooks.sync_endpoints(config) == {"created": 0, "updated": 1, "deactivated": 1}
    a.refresh_from_db()
    assert (a.pk, a.secret, a.kinds) == (a.pk, changed, ["chips.settled"])
    b = WebhookEndpoint.objects.get(url="https://b.example/h")
    assert not b.active and not b.wants("chips.settled")
    by_hand.refresh_from_db()
    assert by_hand.active and not by_hand.from_settings  # the admin's own are left alone

    # Listed again: active again, the same row.
    config.append({"url": "https://b.example/h", "secret": second})
    assert webhooks.sync_endpoints(config) == {"created": 0, "updated": 1, "deactivated": 0}
    assert WebhookEndpoint.objects.get(pk=b.pk).active


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("entry", "complaint"),
    [
        ({"secret": "s3cr3t"}, "whsec_"),
        ({"secret": "whsec_not*base64*at*all*!!"}, "not base64"),
        ({"secret": "whsec_c2hvcnQ="}, "5 bytes"),
        ({"secret": None}, "whsec_"),
        ({"kinds": ["match.finished", "match.started"]}, "match.started"),
        ({"kinds": "match.finished"}, "list"),
        ({"url": "ftp://a.example/h"}, "URL"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_sync_endpoints_rejects_a_bad_entry_and_writes_nothing(entry, complaint):
    good = {"url": "https://a.example/h", "secret": webhooks.new_secret(), "kinds": []}
    bad = {"url": "https://b.example/h", "secret": webhooks.new_secret(), **entry}
    with pytest.raises(ImproperlyConfigured, match="entry 2") as raised:
        webhooks.sync_endpoints([good, bad])
    assert complaint in str(raised.value)
    assert not WebhookEndpoint.objects.exists()


def test_new_secrets_are_fresh_and_accepted():
    one, two = webhooks.new_secret(), webhooks.new_secret()
    assert one != two and one.startswith("whsec_")
    assert webhooks.check_secret(one) == one
    Webhook(one).sign("msg_x", datetime.now(UTC), "{}")


# The admin.


@pytest.mark.django_db
def test_the_admin_lists_deliveries_and_edits_endpoints(receiver_factory, user_factory):
    receiver = receiver_factory(fail_first=1)
    endpoint_for(receiver, description="studio A")
    _, delivery = one_delivery()
    webhooks.deliver(delivery.pk)
    user = user_factory()
    note = Notification.objects.create(
        user=user, kind="your_turn", cause="your_turn:g:1", created_at=CREATED
    )
    push = PushDelivery.objects.create(
        notification=note,
        device_id="00000000-0000-0000-0000-000000000001",
        device_kind="webpush",
        target="push.example",
        created_at=CREATED,
    )
    PushAttempt.objects.create(delivery=push, at=CREATED, status_code=201)
    staff = User.objects.create_superuser("staff", password="x" * 20)
    client = Client()
    client.force_login(staff)

    for url in (
        "/admin/notifications/webhookdelivery/",
        "/admin/notifications/webhookdelivery/?status__exact=pending",
        f"/admin/notifications/webhookdelivery/{delivery.pk}/change/",
        "/admin/notifications/webhookendpoint/",
        "/admin/notifications/webhookmessage/",
        "/admin/notifications/pushdelivery/",
        f"/admin/notifications/pushdelivery/{push.pk}/change/",
        "/admin/notifications/notification/",
        "/admin/notifications/device/",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
    listing = client.get("/admin/notifications/webhookdelivery/").content.decode()
    assert receiver.url in listing and "pending" in listing
    detail = client.get(f"/admin/notifications/webhookdelivery/{delivery.pk}/change/")
    assert b"HTTP 500" in detail.content  # the try, inline
    assert (
        client.post(f"/admin/notifications/webhookdelivery/{delivery.pk}/delete/").status_code
        == 403
    )

    add = client.get("/admin/notifications/webhookendpoint/add/").content.decode()
    assert 'value="whsec_' in add  # a fresh secret is offered
    form = {"url": "https://studio.example/hooks", "secret": "whsec_c2hvcnQ=", "active": "on"}
    refused = client.post("/admin/notifications/webhookendpoint/add/", form)
    assert refused.status_code == 200 and b"5 bytes" in refused.content
    secret = webhooks.new_secret()
    form.update(secret=secret, kinds=["match.finished", "chips.settled"])
    created = client.post("/admin/notifications/webhookendpoint/add/", form)
    assert created.status_code == 302
    endpoint = WebhookEndpoint.objects.get(url="https://studio.example/hooks")
    assert endpoint.secret == secret and endpoint.kinds == ["match.finished", "chips.settled"]
    assert not endpoint.from_settings

    # An endpoint of the settings is shown, never edited here.
    webhooks.sync_endpoints([{"url": "https://owned.example/h", "secret": secret}])
    owned = WebhookEndpoint.objects.get(from_settings=True)
    page = f"/admin/notifications/webhookendpoint/{owned.pk}/change/"
    assert client.get(page).status_code == 200
    client.post(page, {"url": "https://elsewhere.example/h", "secret": webhooks.new_secret()})
    owned.refresh_from_db()
    assert (owned.url, owned.secret) == ("https://owned.example/h", secret)
    assert client.post(f"{page[: -len('change/')]}delete/").status_code == 403
