"""Notifications end to end, over real HTTP and real processes: the ASGI server, a Celery worker
process, the notifier loop, a Web Push service and a studio's webhook receiver of the test's own
(local HTTP servers, the only stand-ins: they sit where a browser vendor's and a studio's
servers would).

- A player whose turn comes while no stream of theirs is open gets a push; the test decrypts it
  with the subscription's keys (RFC 8291) and finds the game's id and no card. With a stream
  open, nothing is pushed.
- A receiver that fails twice gets the webhook on the third try, with the same id.
- The worker killed with SIGKILL in the middle of deliveries: after a new worker starts, every
  webhook arrived, every player's last turn was pushed, no delivery is left pending, and the
  inbox equals a rebuild from the logs.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import Any

import pytest
import redis
from py_vapid import Vapid02

from accounts import services as accounts
from accounts.tasks import settle_match_now
from notifications import rebuild, runner, webhooks
from notifications.models import Kind, Notification, PushDelivery, Status, WebhookDelivery
from tests.conftest import TEST_BROKER_URL
from tests.live.support import RULES, Live, Player
from tests.notifications.support import (
    CARD_TOKEN,
    Browser,
    PushService,
    Receiver,
    b64url,
    receiver_handler,
)
from tests.tasks.support import wait_for
from tests.worker_process import WorkerProcess
from tongits_site.celery import app

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT, MARGIN = 2.0, 2.0  # a delivery's request and its lease: short, so the test is


@pytest.fixture
def vapid_env(settings) -> dict[str, str]:
    key = Vapid02()
    key.generate_keys()
    raw = b64url(key.private_key.private_numbers().private_value.to_bytes(32, "big"))
    env = {
        "TONGITS_WEBPUSH_VAPID_PRIVATE_KEY": raw,
        "TONGITS_WEBPUSH_ENDPOINT_HOSTS": "127.0.0.1",
        "TONGITS_DELIVERY_TIMEOUT_SECONDS": str(TIMEOUT),
        "TONGITS_DELIVERY_LEASE_MARGIN_SECONDS": str(MARGIN),
        "TONGITS_WEBHOOK_RETRY_DELAYS": "0,0.2,0.2,0.2",
        "TONGITS_YOUR_TURN_MIN_SECONDS": "60",
    }
    settings.TONGITS_WEBPUSH_VAPID_PRIVATE_KEY = raw
    settings.TONGITS_WEBPUSH_ENDPOINT_HOSTS = ("127.0.0.1",)
    settings.TONGITS_DELIVERY_TIMEOUT_SECONDS = TIMEOUT
    settings.TONGITS_DELIVERY_LEASE_MARGIN_SECONDS = MARGIN
    settings.TONGITS_WEBHOOK_RETRY_DELAYS = (0, 0.2, 0.2, 0.2)
    return env


@pytest.fixture
def worker(vapid_env, tmp_path) -> Iterator[WorkerProcess]:
    broker = redis.Redis.from_url(TEST_BROKER_URL, socket_connect_timeout=3)
    try:
        broker.ping()
    except redis.RedisError as exc:
        pytest.fail(f"Redis at {TEST_BROKER_URL} is unreachable ({exc}): start it (see .ci/run)")
    broker.flushdb()
    app.conf.broker_url = TEST_BROKER_URL
    process = WorkerProcess(tmp_path / "worker.log", vapid_env)
    process.start()
    yield process
    process.stop()
    broker.flushdb()


@pytest.fixture
def notifier(worker) -> Iterator[None]:
    """The notifier loop, in a thread of the test process (its own database connection)."""
    stop = threading.Event()
    thread = threading.Thread(target=runner.run_notifier, args=(stop,), kwargs={"poll": 0.2})
    thread.start()
    yield
    stop.set()
    thread.join(10)


@pytest.fixture
def push_service(monkeypatch) -> Iterator[PushService]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    service = PushService()
    yield service
    service.close()


@pytest.fixture
def server(live_servers, vapid_env, user_factory) -> Iterator[Live]:
    with live_servers(vapid_env) as url, Live(url, user_factory) as live:
        yield live


def _subscribe(player: Player, service: PushService) -> Browser:
    browser = Browser()
    body = {
        "kind": "webpush",
        "endpoint": f"http://127.0.0.1:{service.port}/push/{player.user.pk}",
        "keys": {"p256dh": browser.p256dh, "auth": browser.auth},
    }
    response = player.http.post("/api/v1/me/devices", json=body)
    assert response.status_code == 201, response.text
    return browser


def _pushes_to(service: PushService, player: Player) -> list[dict[str, Any]]:
    return [r for r in list(service.requests) if r["path"] == f"/push/{player.user.pk}"]


def _settled() -> bool:
    """No push is waiting for a try (each one sent, skipped or given up)."""
    return not PushDelivery.objects.filter(status=Status.PENDING).exists()


def _turn_player(live: Live, players: list[Player], game_id: str) -> Player:
    return players[live.view(players[0], game_id)["view"]["turn"]]


def test_a_turn_is_pushed_while_no_stream_is_open_and_not_while_one_is(
    server, push_service, notifier
):
    players = [server.player() for _ in range(3)]
    browsers = {p.user.pk: _subscribe(p, push_service) for p in players}
    game_id = server.table(players, rules=RULES)

    # The first turn: its player holds no stream, so the push goes.
    first = _turn_player(server, players, game_id)
    browser = browsers[first.user.pk]

    def turn_push() -> tuple[dict, dict] | None:
        for pushed in _pushes_to(push_service, first):
            payload = browser.read(pushed["body"])
            if payload["kind"] == "your_turn":
                return pushed, payload
        return None

    pushed, payload = wait_for(turn_push, timeout=15)
    headers = {k.lower(): v for k, v in pushed["headers"].items()}
    assert headers["content-encoding"] == "aes128gcm"
    assert headers["topic"] == game_id.replace("-", "")
    assert payload["game_id"] == game_id and game_id in payload["url"]
    assert not CARD_TOKEN.search(str(payload)), payload
    wait_for(_settled, timeout=15)
    for invitee in players[1:]:  # their invitations were pushed too
        got = _pushes_to(push_service, invitee)
        assert "invited" in {browsers[invitee.user.pk].read(r["body"])["kind"] for r in got}

    # Everybody opens /me/stream; the turn moves on: nothing is pushed, the inbox has it.
    readers = [server.stream("/api/v1/me/stream", p) for p in players]
    for reader in readers:
        assert reader.next().event == "games"
    before = len(push_service.requests)
    while _turn_player(server, players, game_id) is first:
        server.play_one(players, game_id)
    second = _turn_player(server, players, game_id)
    note = wait_for(
        lambda: Notification.objects.filter(
            user=second.user, kind=Kind.YOUR_TURN, game_id=game_id
        ).first(),
        timeout=10,
    )
    delivery = wait_for(
        lambda: PushDelivery.objects.filter(notification=note, status=Status.SKIPPED).first(),
        timeout=15,
    )
    assert "stream" in delivery.detail
    frame = next(
        f
        for f in iter(lambda: readers[players.index(second)].next(), None)
        if f.event == "notification"
    )
    assert frame.json["id"] == note.id and frame.json["game_id"] == game_id
    # The delivery's skip is its last word (a skipped delivery is never tried again): no push.
    assert list(
        PushDelivery.objects.filter(notification=note).values_list("status", flat=True)
    ) == [Status.SKIPPED]
    assert len(push_service.requests) == before


def _receiver(**options) -> Receiver:
    receiver = Receiver(secret=webhooks.new_secret(), **options)
    receiver.server = ThreadingHTTPServer(("127.0.0.1", 0), receiver_handler(receiver))
    threading.Thread(target=receiver.server.serve_forever, daemon=True).start()
    return receiver


def test_a_receiver_that_fails_twice_gets_the_webhook_on_the_third_try(notifier, user_factory):
    receiver = _receiver(fail_first=2)
    try:
        webhooks.WebhookEndpoint.objects.create(
            url=receiver.url, secret=receiver.secret, kinds=["account.deleted"]
        )
        user = user_factory(password="a-long-password-1")
        accounts.account_delete(user=user, password="a-long-password-1")  # studios hear of it
        wait_for(lambda: WebhookDelivery.objects.filter(status=Status.SENT).exists(), timeout=20)
        ids = receiver.ids()
        assert len(ids) == 3 and len(set(ids)) == 1 and ids[0].startswith("msg_")
        assert all(verified for _, verified, _, _ in receiver.received)
        delivery = WebhookDelivery.objects.get()
        assert [t.status_code for t in delivery.tries.order_by("id")] == [500, 500, 200]
    finally:
        receiver.server.shutdown()
        receiver.server.server_close()


def test_a_worker_killed_in_the_middle_of_deliveries_loses_none(
    server, push_service, notifier, worker
):
    receiver = _receiver(delay=0.3)
    try:
        webhooks.WebhookEndpoint.objects.create(url=receiver.url, secret=receiver.secret)
        players = [server.player() for _ in range(3)]
        for player in players:
            _subscribe(player, push_service)
        push_service.delay = 1.0  # each push takes a while: the kill lands in the middle
        game_id = server.table(players, rules=RULES)
        while server.play_one(players, game_id) is not None:
            pass
        settle_match_now(game_id)
        wait_for(lambda: push_service.requests, timeout=20)
        in_flight = PushDelivery.objects.filter(status=Status.PENDING, attempts__gt=0)
        assert in_flight.exists()  # claimed, its request not answered yet
        worker.kill()
        worker.start()

        def finished() -> bool:
            pending = PushDelivery.objects.filter(status=Status.PENDING).exists()
            hooks = WebhookDelivery.objects.filter(status=Status.PENDING).exists()
            return not pending and not hooks

        wait_for(finished, timeout=60, interval=0.2)
        assert not PushDelivery.objects.filter(status=Status.FAILED).exists()
        for player in players:  # each player's last turn reached their device
            last = Notification.objects.filter(user=player.user, kind=Kind.YOUR_TURN).first()
            assert PushDelivery.objects.get(notification=last).status == Status.SENT
        over = Notification.objects.filter(kind=Kind.MATCH_OVER, game_id=game_id)
        assert over.count() == 3
        for note in over:
            assert PushDelivery.objects.get(notification=note).status == Status.SENT
        sent_ids = set(receiver.ids())
        messages = set(webhooks.WebhookMessage.objects.values_list("id", flat=True))
        assert messages and messages <= sent_ids  # match.finished and chips.settled, each once+
        assert WebhookDelivery.objects.filter(status=Status.SENT).count() == len(messages)
        assert rebuild.check().same
    finally:
        receiver.server.shutdown()
        receiver.server.server_close()
