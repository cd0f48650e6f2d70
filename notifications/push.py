"""Pushes to players' devices: what a push says, how it is sent, and the outbox's steps.

Why this shape: a push is an outbox row (``PushDelivery``) written in the same transaction as its
notification (``record``), then sent at least once by a Celery task (``deliver``), so a crash
between the commit and the send loses nothing and a retry sends the same thing again. The HTTP
request happens outside any transaction: a slow push service never holds a row lock or a
connection's transaction open. Each try is an append-only ``PushAttempt``.

A push is skipped, not sent, when it would only be noise: the user is watching (one of their live
streams is open, so the app shows it already), a newer notification of the same kind and game
replaced it (only the newest turn matters), or the device was removed meanwhile.

What a push carries (``payload_for``) is short text and ids: never a card or anything else from a
hand, because a push service, the OS's notification centre and a locked screen all see it.

Web Push (RFC 8030, encrypted per RFC 8291 with ``aes128gcm``, VAPID per RFC 8292) is sent with
pywebpush. FCM and APNs tokens are accepted at registration, but this server has no sender for
them: their deliveries fail with "fcm not configured" / "apns not configured" (``SENDERS`` is
where one would be plugged in).
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import logging
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal
from urllib.parse import urlsplit

import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy
from py_vapid import Vapid02
from pywebpush import WebPushException, webpush

from core.errors import clip
from games.rules.cards import CODES as CARD_CODES
from notifications import outbox
from notifications.models import Device, Kind, Notification, PushAttempt, PushDelivery, Status

logger = logging.getLogger(__name__)

Result = Literal["sent", "retry", "gone", "failed"]

#: Waits between tries of a push that may succeed later (429, 5xx, a network error): the n-th
#: retry waits BACKOFF_SECONDS[n - 1], the last value from then on.
BACKOFF_SECONDS: tuple[int, ...] = (5, 30, 120, 600, 3600)
#: How long a push service keeps a push for a device that is offline (its ``TTL``): a turn or an
#: invitation is still worth hearing of some hours later; a sign-in alert for longer.
TTL_SECONDS: dict[str, int] = {
    Kind.YOUR_TURN: 12 * 3600,
    Kind.INVITED: 24 * 3600,
    Kind.INVITATION_ANSWERED: 24 * 3600,
    Kind.MATCH_OVER: 24 * 3600,
    Kind.CHIPS_SETTLED: 24 * 3600,
    Kind.NEW_SIGN_IN: 3 * 24 * 3600,
}
DEFAULT_TTL_SECONDS = 24 * 3600
#: Kinds whose push replaces an undelivered older one of the same table on the push service
#: (Web Push's ``Topic``): a new turn, or the match's end, makes an older turn moot.
TOPIC_KINDS = frozenset({Kind.YOUR_TURN, Kind.MATCH_OVER})
#: A Web Push ``Topic``: at most 32 characters of the URL-safe base64 alphabet (RFC 8030 5.4).
_TOPIC = re.compile(r"[A-Za-z0-9_-]{1,32}")
#: Django's username characters: a name from ``notification.data`` is shown only if it is one.
_USERNAME = re.compile(r"[\w.@+-]{1,150}")
#: Every card's text form (``AS``, ``TD``, ``10D``, any case): never shown as a name.
_CARD_TEXTS = frozenset(
    {c.upper() for c in CARD_CODES} | {"10" + c[1] for c in CARD_CODES if c[0] == "T"}
)


# --- VAPID ---------------------------------------------------------------------------------------


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url(data: bytes) -> str:
    """Unpadded base64url, the encoding of Web Push's keys."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@functools.lru_cache(maxsize=4)
def _parse_private_key(text: str) -> ec.EllipticCurvePrivateKey:
    """The P-256 key of the setting: PEM, or base64url of the raw 32-byte scalar (or of DER)."""
    try:
        if "-----BEGIN" in text:
            key = serialization.load_pem_private_key(text.encode(), password=None)
        else:
            raw = _b64url_decode("".join(text.split()))
            if len(raw) == 32:
                key = ec.derive_private_key(int.from_bytes(raw, "big"), ec.SECP256R1())
            else:
                key = serialization.load_der_private_key(raw, password=None)
    except (ValueError, TypeError, binascii.Error) as exc:
        raise ImproperlyConfigured(
            f"TONGITS_WEBPUSH_VAPID_PRIVATE_KEY is not a P-256 private key: {exc}"
        ) from exc
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        raise ImproperlyConfigured("TONGITS_WEBPUSH_VAPID_PRIVATE_KEY must be a P-256 (EC) key")
    return key


def vapid_private_key() -> ec.EllipticCurvePrivateKey | None:
    """The server's VAPID key (None when the setting is empty: Web Push is off).

    A set but unreadable key raises ``ImproperlyConfigured``: an operator who set one wants to
    hear that it is wrong, not to see every Web Push fail quietly.
    """
    text = (settings.TONGITS_WEBPUSH_VAPID_PRIVATE_KEY or "").strip()
    return _parse_private_key(text) if text else None


def vapid_public_key() -> str:
    """The ``applicationServerKey`` browsers need (``pushManager.subscribe``): base64url of the
    uncompressed public point (65 bytes, starting 0x04); "" when Web Push is off."""
    key = vapid_private_key()
    if key is None:
        return ""
    point = key.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return b64url(point)


def webpush_enabled() -> bool:
    """Whether Web Push targets can be served (a VAPID key is configured)."""
    return vapid_private_key() is not None


# --- what a push says ----------------------------------------------------------------------------

#: The title of each kind, as a push and an inbox item show it.
TITLES: dict[str, Any] = {
    Kind.YOUR_TURN: gettext_lazy("Your turn"),
    Kind.INVITED: gettext_lazy("Invitation"),
    Kind.INVITATION_ANSWERED: gettext_lazy("Invitation answered"),
    Kind.MATCH_OVER: gettext_lazy("Match over"),
    Kind.CHIPS_SETTLED: gettext_lazy("Chips settled"),
    Kind.NEW_SIGN_IN: gettext_lazy("New sign-in"),
    Kind.FRIEND_REQUEST: gettext_lazy("Friend request"),
    Kind.PARTY_INVITE: gettext_lazy("Play together"),
    Kind.MATCHED: gettext_lazy("Table found"),
    Kind.TOURNAMENT_STARTING: gettext_lazy("Tournament starting"),
    Kind.TOURNAMENT_TABLE: gettext_lazy("Tournament table ready"),
}
#: The bodies of each kind, by the case the notification's flags choose: whole sentences (a
#: name or "a player" changes a sentence's grammar in some languages), with ``%(table)s`` (the
#: table's short id) and ``%(player)s`` (a username).
BODIES: dict[str, dict[str, Any]] = {
    Kind.YOUR_TURN: {
        "turn": gettext_lazy("Your turn at table %(table)s"),
        "draw_answer": gettext_lazy("Your turn at table %(table)s: answer the draw call"),
    },
    Kind.INVITED: {
        "by": gettext_lazy("%(player)s invited you to table %(table)s"),
        "anonymous": gettext_lazy("You are invited to table %(table)s"),
    },
    Kind.INVITATION_ANSWERED: {
        "accepted": gettext_lazy("%(player)s accepted your invitation to table %(table)s"),
        "declined": gettext_lazy("%(player)s declined your invitation to table %(table)s"),
        "answered": gettext_lazy("%(player)s answered your invitation to table %(table)s"),
        "anonymous_accepted": gettext_lazy("A player accepted your invitation to table %(table)s"),
        "anonymous_declined": gettext_lazy("A player declined your invitation to table %(table)s"),
        "anonymous_answered": gettext_lazy("A player answered your invitation to table %(table)s"),
    },
    Kind.MATCH_OVER: {
        "ended": gettext_lazy("The match at table %(table)s has ended"),
        "called_off": gettext_lazy("The match at table %(table)s was called off"),
        "won": gettext_lazy("You won the match at table %(table)s"),
    },
    Kind.CHIPS_SETTLED: {"settled": gettext_lazy("The chips of table %(table)s were settled")},
    Kind.NEW_SIGN_IN: {"new_device": gettext_lazy("Your account was signed in on a new device")},
    Kind.FRIEND_REQUEST: {
        "by": gettext_lazy("%(player)s wants to be your friend"),
        "anonymous": gettext_lazy("A player wants to be your friend"),
    },
    Kind.PARTY_INVITE: {
        "by": gettext_lazy("%(player)s wants to play a table with you"),
        "anonymous": gettext_lazy("A friend wants to play a table with you"),
    },
    Kind.MATCHED: {"started": gettext_lazy("Your match at table %(table)s has started")},
    Kind.TOURNAMENT_STARTING: {"soon": gettext_lazy("A tournament you registered for starts soon")},
    Kind.TOURNAMENT_TABLE: {
        "ready": gettext_lazy("Your tournament match at table %(table)s has started")
    },
}
#: A kind this code does not know yet (a notification written by a newer version).
OTHER_TITLE = gettext_lazy("Tongits")
OTHER_BODY = gettext_lazy("Something happened at table %(table)s")
#: Where a notification names a person: keys holding a username, then the key of a user id.
_NAMED_BY: dict[str, tuple[tuple[str, ...], str]] = {
    Kind.INVITED: (("by", "username"), "by_user_id"),
    Kind.INVITATION_ANSWERED: (("by", "username"), "user_id"),
    Kind.FRIEND_REQUEST: (("by", "username"), "by_user_id"),
    Kind.PARTY_INVITE: (("by", "username"), "by_user_id"),
}


def _shown(value: object) -> str | None:
    """``value`` if it is a plausible username (never a card's text), else None."""
    if isinstance(value, str) and _USERNAME.fullmatch(value) and value.upper() not in _CARD_TEXTS:
        return value
    return None


def _user_id(kind: str, data: dict[str, Any]) -> int | None:
    """The id of the user a notification names, when it stores one rather than a username."""
    keys, id_key = _NAMED_BY.get(kind, ((), ""))
    if any(_shown(data.get(key)) for key in keys):
        return None
    user_id = data.get(id_key) if id_key else None
    return user_id if isinstance(user_id, int) and not isinstance(user_id, bool) else None


def _usernames(user_ids: set[int]) -> dict[int, str]:
    """Usernames by user id, in one query (the projector stores ids, not names)."""
    if not user_ids:
        return {}
    model = get_user_model()
    rows = model.objects.filter(pk__in=user_ids).values_list("pk", model.USERNAME_FIELD)
    return dict(rows)


def _name(kind: str, data: dict[str, Any], usernames: dict[int, str]) -> str | None:
    """Who the notification is about: a username stored in ``data``, else the username of the
    user whose id it stores."""
    keys, _id_key = _NAMED_BY.get(kind, ((), ""))
    for key in keys:
        if name := _shown(data.get(key)):
            return name
    user_id = _user_id(kind, data)
    return _shown(usernames.get(user_id)) if user_id is not None else None


def _body_case(kind: str, data: dict[str, Any], player: str | None) -> str:
    """Which of ``BODIES[kind]`` the notification's flags choose."""
    if kind == Kind.YOUR_TURN:
        return "draw_answer" if data.get("draw_answer") is True else "turn"
    if kind in (Kind.INVITED, Kind.FRIEND_REQUEST, Kind.PARTY_INVITE):
        return "by" if player else "anonymous"
    if kind == Kind.INVITATION_ANSWERED:
        answer = data.get("answer")
        if answer not in ("accepted", "declined"):
            accepted = data.get("accepted")
            answer = "answered" if accepted is None else ("accepted" if accepted else "declined")
        return answer if player else f"anonymous_{answer}"
    if kind == Kind.MATCH_OVER:
        if data.get("aborted") is True:
            return "called_off"
        return "won" if data.get("won") is True else "ended"
    return next(iter(BODIES[kind]))


def texts(
    kind: str, game_id: str | None, data: dict[str, Any], usernames: dict[int, str]
) -> tuple[str, str]:
    """A notification's title and body in the active language, from its kind, its table and
    the flags and names in its ``data`` (never anything else of it: no card, no amount)."""
    player = _name(kind, data, usernames)
    values = {"table": game_id.replace("-", "")[:8] if game_id else "…", "player": player}
    if kind not in BODIES:
        return str(OTHER_TITLE), OTHER_BODY % values
    return str(TITLES[kind]), BODIES[kind][_body_case(kind, data, player)] % values


def language_of(user_id: int) -> str:
    """The language of what a user is sent unasked: the account's, else the server's."""
    language = get_user_model().objects.filter(pk=user_id).values_list("language", flat=True)
    chosen = language.first()
    return chosen if chosen in dict(settings.LANGUAGES) else settings.LANGUAGE_CODE


def with_texts(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Inbox items (``inbox.as_dict``) with their ``title`` and ``body`` in the active language
    (the request's), the names they need read in one query."""
    wanted = {_user_id(i["kind"], i["data"] if isinstance(i["data"], dict) else {}) for i in items}
    usernames = _usernames({user_id for user_id in wanted if user_id is not None})
    for item in items:
        data = item["data"] if isinstance(item["data"], dict) else {}
        item["title"], item["body"] = texts(item["kind"], item["game_id"], data, usernames)
    return items


def _game_id(notification: Notification) -> str | None:
    if notification.game_id is not None:
        return str(notification.game_id)
    value = (notification.data or {}).get("game_id")
    try:
        return str(uuid.UUID(value)) if isinstance(value, str) else None
    except ValueError:  # not an id: never shown
        return None


def payload_for(notification: Notification) -> dict[str, Any]:
    """What a push carries: ``kind``, ``notification_id``, ``game_id`` (or None), a short
    ``title`` and ``body`` for the OS to show, in the recipient's language, and the app's
    ``url`` to open.

    Only ids and usernames are taken from ``notification.data``; nothing else of it (a hand, a
    card, an amount) is copied, so whatever the projector stores there cannot leak to a lock
    screen.
    """
    data = notification.data if isinstance(notification.data, dict) else {}
    game_id = _game_id(notification)
    kind = notification.kind
    user_id = _user_id(kind, data)
    usernames = _usernames({user_id} if user_id is not None else set())
    with translation.override(language_of(notification.user_id)):
        title, body = texts(kind, game_id, data, usernames)
    if kind == Kind.CHIPS_SETTLED:
        url = "/#/wallet"
    elif kind == Kind.NEW_SIGN_IN or not game_id:
        url = "/#/lobby"
    else:
        url = f"/#/table/{game_id}"
    return {
        "kind": kind,
        "notification_id": notification.pk,
        "game_id": game_id,
        "title": title,
        "body": body,
        "url": url,
    }


def topic_for(notification: Notification) -> str | None:
    """The Web Push ``Topic`` (the push service keeps only the newest undelivered push of one
    topic per device): the table's id for a turn or a match's end, else None."""
    if notification.kind in TOPIC_KINDS and notification.game_id is not None:
        return notification.game_id.hex
    return None


def ttl_for(notification: Notification) -> int:
    """How long the push service may hold the push for an offline device, in seconds."""
    return TTL_SECONDS.get(notification.kind, DEFAULT_TTL_SECONDS)


# --- sending -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What one send came to: ``sent`` (accepted), ``retry`` (may work later: 429, 5xx, a
    network error), ``gone`` (404/410: the subscription is dead), ``failed`` (will not work)."""

    result: Result
    status_code: int | None = None
    error: str = ""


def _classify(status: int) -> Result:
    if status in (200, 201, 202):
        return "sent"
    if status in (404, 410):
        return "gone"
    if status == 429 or status >= 500:
        return "retry"
    return "failed"


def _send_webpush(device: Device, payload: dict, topic: str | None, ttl: int) -> Outcome:
    key = vapid_private_key()
    if key is None:
        return Outcome("failed", None, "webpush not configured")
    headers = {"Urgency": "high" if payload.get("kind") == Kind.YOUR_TURN else "normal"}
    if topic and _TOPIC.fullmatch(topic):
        headers["Topic"] = topic
    subscription = {
        "endpoint": device.token,
        "keys": {"p256dh": device.p256dh, "auth": device.auth},
    }
    try:
        response = webpush(
            subscription,
            data=json.dumps(payload, separators=(",", ":")),
            vapid_private_key=Vapid02(key),
            # A fresh dict each time: pywebpush writes "aud" (the endpoint's origin) and "exp"
            # into it.
            vapid_claims={"sub": settings.TONGITS_WEBPUSH_VAPID_SUBJECT},
            content_encoding="aes128gcm",
            headers=headers,
            ttl=ttl,
            timeout=settings.TONGITS_DELIVERY_TIMEOUT_SECONDS,
        )
    except WebPushException as exc:
        response = exc.response
        if response is None or getattr(response, "status_code", None) is None:
            return Outcome("failed", None, clip(f"webpush: {exc.message}"))
    except requests.Timeout:
        return Outcome("retry", None, "timeout")
    except requests.RequestException as exc:
        # The exception's text names the URL, a capability: only its kind is kept.
        return Outcome("retry", None, f"network error ({type(exc).__name__})")
    except (ValueError, TypeError) as exc:  # a subscription's keys that do not decode
        return Outcome("failed", None, clip(f"bad subscription: {exc}"))
    status = response.status_code
    reason = (getattr(response, "reason", "") or "").strip()
    return Outcome(_classify(status), status, clip(f"{status} {reason}".strip()))


def _not_configured(kind: str) -> Callable[[Device, dict, str | None, int], Outcome]:
    def send(device: Device, payload: dict, topic: str | None, ttl: int) -> Outcome:
        return Outcome("failed", None, f"{kind} not configured")

    return send


#: A sender per device kind. FCM and APNs have none in this server: their deliveries fail with
#: "<kind> not configured" (registration still works, so clients need not change when one
#: is added here).
SENDERS: dict[str, Callable[[Device, dict, str | None, int], Outcome]] = {
    Device.Kind.WEBPUSH: _send_webpush,
    Device.Kind.FCM: _not_configured("fcm"),
    Device.Kind.APNS: _not_configured("apns"),
}


def send(device: Device, payload: dict, *, topic: str | None, ttl: int) -> Outcome:
    """Send ``payload`` to ``device`` once (no retries here, no database writes): the caller
    decides what the outcome means for the delivery."""
    sender = SENDERS.get(device.kind)
    if sender is None:
        return Outcome("failed", None, f"unknown device kind {device.kind!r}")
    return sender(device, payload, topic, ttl)


# --- the outbox ----------------------------------------------------------------------------------


def target_of(device: Device) -> str:
    """Where a delivery goes, as the operator may see it: the push service's host for Web Push
    (the endpoint's path is the subscription's secret), the kind for FCM and APNs."""
    if device.kind == Device.Kind.WEBPUSH:
        parts = urlsplit(device.token)
        host = parts.hostname or "?"
        return clip(f"{host}:{parts.port}" if parts.port else host)
    return device.kind


def record(notification: Notification) -> int:
    """Queue the notification's pushes: one pending ``PushDelivery`` per device of its user, in
    the caller's transaction (so the pushes exist exactly when the notification does).

    Only kinds of ``TONGITS_PUSH_KINDS`` are pushed. Idempotent: a (notification, device) pair
    that already has a delivery gets no second one. Returns how many were added.
    """
    return record_many([notification])


def record_many(notifications: Sequence[Notification]) -> int:
    """``record`` for many notifications (a projector run's): one read of their users' devices,
    and of their deliveries only when a device was found."""
    pushed = [n for n in notifications if n.kind in settings.TONGITS_PUSH_KINDS]
    if not pushed:
        return 0
    devices: dict[int, list[Device]] = {}
    for device in Device.objects.filter(user_id__in={n.user_id for n in pushed}).only(
        "id", "user_id", "kind", "token"
    ):
        devices.setdefault(device.user_id, []).append(device)
    pushed = [n for n in pushed if n.user_id in devices]
    if not pushed:
        return 0
    have = set(
        PushDelivery.objects.filter(notification__in=pushed).values_list(
            "notification_id", "device_id"
        )
    )
    now = timezone.now()
    rows = [
        PushDelivery(
            notification=notification,
            device_id=device.pk,
            device_kind=device.kind,
            target=target_of(device),
            status=Status.PENDING,
            next_attempt_at=now,
            created_at=now,
        )
        for notification in pushed
        for device in devices[notification.user_id]
        if (notification.pk, device.pk) not in have
    ]
    # ignore_conflicts: a concurrent record() of the same notification adds nothing twice.
    PushDelivery.objects.bulk_create(rows, ignore_conflicts=True)
    return len(rows)


def due(now: datetime | None = None, limit: int = 500) -> list[int]:
    """Ids of the pending push deliveries whose next try is due, the longest waiting first."""
    now = now or timezone.now()
    return list(
        PushDelivery.objects.filter(status=Status.PENDING, next_attempt_at__lte=now)
        .order_by("next_attempt_at", "id")
        .values_list("id", flat=True)[:limit]
    )


def backoff(attempts: int) -> timedelta:
    """The wait after the ``attempts``-th try failed for a reason that may pass."""
    index = min(max(attempts, 1), len(BACKOFF_SECONDS)) - 1
    return timedelta(seconds=BACKOFF_SECONDS[index])


def _default_streams_open(user_id: int) -> bool:
    from ops import stream_slots

    return stream_slots.held(user_id) > 0


def _skip_reason(
    delivery: PushDelivery, streams_open: Callable[[int], bool]
) -> tuple[str | None, Device | None]:
    """Why the delivery should not be sent (None: send it), and its device."""
    notification = delivery.notification
    device = Device.objects.filter(pk=delivery.device_id).first()
    if device is None:
        return "the device was removed", None
    if device.user_id != notification.user_id:
        return "the device changed hands", None
    if notification.game_id is not None and (
        Notification.objects.filter(
            user_id=notification.user_id,
            kind=notification.kind,
            game_id=notification.game_id,
            id__gt=notification.pk,
        ).exists()
    ):
        return f"a newer {notification.kind} of this game replaced it", device
    try:
        watching = streams_open(notification.user_id)
    except Exception:  # Redis unreachable: rather one push too many than a missed turn
        logger.warning("push %s: stream check failed; sending", delivery.pk, exc_info=True)
        watching = False
    if watching:
        return "a live stream of the user was open", device
    return None, device


def deliver(
    delivery_id: int,
    *,
    now: datetime | None = None,
    streams_open: Callable[[int], bool] | None = None,
) -> str:
    """One try of one push delivery; the Celery task's body. Returns a short outcome.

    Three steps, so no lock or transaction is held during the HTTP request:

    1. claim (a short transaction): the row, if still pending and due and not locked by another
       worker, gets ``attempts + 1`` and a lease (``next_attempt_at`` pushed past the request's
       timeout), so a second worker leaves it alone and a worker that dies mid-send leaves it
       due again once the lease runs out;
    2. decide and send, outside any transaction: skip (no HTTP) when a stream of the user is
       open, a newer notification of the same kind and game exists, or the device is gone;
    3. record (a second short transaction): a ``PushAttempt`` and the delivery's new status
       (sent; dropped, the device deleted, on 404/410; pending with a backoff for a retry, or
       failed after ``TONGITS_PUSH_MAX_ATTEMPTS`` tries; failed).
    """
    streams_open = streams_open or _default_streams_open
    claimed_at = now or timezone.now()
    delivery, _ = outbox.claim(PushDelivery, delivery_id, claimed_at, related=("notification",))
    if delivery is None:
        return "not due"  # done, not due yet, or another worker's
    claimed = delivery.attempts

    reason, device = _skip_reason(delivery, streams_open)
    if reason is not None:
        with transaction.atomic():
            # No try was made: the claim's count is given back, so attempts counts tries.
            done = PushDelivery.objects.filter(
                pk=delivery_id, status=Status.PENDING, attempts=claimed
            ).update(
                status=Status.SKIPPED,
                attempts=claimed - 1,
                next_attempt_at=None,
                detail=clip(reason),
                finished_at=now or timezone.now(),
            )
        return f"skipped: {reason}" if done else "superseded"

    assert device is not None
    notification = delivery.notification
    started = time.monotonic()
    outcome = send(
        device, payload_for(notification), topic=topic_for(notification), ttl=ttl_for(notification)
    )
    milliseconds = int((time.monotonic() - started) * 1000)
    return _finish(delivery_id, claimed, device, outcome, milliseconds, now or timezone.now())


def _finish(
    delivery_id: int,
    claimed: int,
    device: Device,
    outcome: Outcome,
    milliseconds: int,
    at: datetime,
) -> str:
    """Step 3 of ``deliver``: the attempt and the delivery's new status, in one transaction."""
    with transaction.atomic():
        delivery = PushDelivery.objects.select_for_update().get(pk=delivery_id)
        PushAttempt.objects.create(
            delivery=delivery,
            at=at,
            status_code=outcome.status_code,
            error=clip(outcome.error),
            milliseconds=milliseconds,
        )
        if delivery.status != Status.PENDING or delivery.attempts != claimed:
            # Our lease ran out and another worker took the row: its result stands.
            return "superseded"
        fields = ["status", "next_attempt_at", "detail", "finished_at"]
        delivery.detail = clip(outcome.error)
        delivery.next_attempt_at = None
        delivery.finished_at = at
        if outcome.result == "sent":
            delivery.status = Status.SENT
        elif outcome.result == "gone":
            Device.objects.filter(pk=device.pk).delete()
            delivery.status = Status.DROPPED
            delivery.detail = clip(f"gone: {outcome.error}")
        elif outcome.result == "retry" and claimed < settings.TONGITS_PUSH_MAX_ATTEMPTS:
            delivery.status = Status.PENDING
            delivery.next_attempt_at = at + backoff(claimed)
            delivery.finished_at = None
        else:
            delivery.status = Status.FAILED
            if outcome.result == "retry":
                delivery.detail = clip(f"gave up after {claimed} tries: {outcome.error}")
        delivery.save(update_fields=fields)
    if delivery.status == Status.PENDING:
        return f"retry in {int(backoff(claimed).total_seconds())} s"
    return str(delivery.status)
