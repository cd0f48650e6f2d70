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

Three services, one sender each (``SENDERS``, keyed by the device's kind): Web Push (RFC 8030,
encrypted per RFC 8291 with ``aes128gcm``, VAPID per RFC 8292) with pywebpush; FCM's HTTP v1 API
(``notifications.fcm``); APNs over HTTP/2 with a provider JWT (``notifications.apns``). A kind
is served only when configured (``configured_kinds``): a device of another kind is refused at
registration, and one registered before its kind was unconfigured gets no delivery.

A task delivers a batch (``deliver_many``): one statement claims it and reads what it needs
(notifications, devices, languages, newer notifications), the skip rules and the texts (each
translated once per language, kind and case), the sends in flight together (``send_many``: FCM
and APNs as streams of one HTTP/2 connection each, Web Push from a pool of threads), one write
of the attempts and outcomes, so a burst (a tournament's start) costs a few statements per batch
rather than per push, and no model object per row.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
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
from django.db import connection, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy
from py_vapid import Vapid02
from pywebpush import WebPushException, webpush

from core.errors import clip
from games.rules.cards import CODES as CARD_CODES
from notifications import apns, fcm, outbox
from notifications.models import Device, Kind, Notification, PushAttempt, PushDelivery, Status

logger = logging.getLogger(__name__)

Result = Literal["sent", "retry", "gone", "failed"]

#: Waits between tries of a push that may succeed later (429, 5xx, a network error): the n-th
#: retry waits BACKOFF_SECONDS[n - 1], the last value from then on.
BACKOFF_SECONDS: tuple[int, ...] = (5, 30, 120, 600, 3600)
#: The longest ``Retry-After`` honoured; a service asking for more is tried again after this.
MAX_RETRY_AFTER_SECONDS = 3600.0
#: The most due pushes the notifier queues in one look at the outbox (it looks at least once a
#: second): the bound of a burst's rate, so well above what the workers send in a second.
DUE_LIMIT = 5000
#: Web Push requests of one batch in flight at once (each to its subscription's push service).
WEBPUSH_CONCURRENCY = 16
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
    kind: str,
    game_id: str | None,
    data: dict[str, Any],
    usernames: dict[int, str],
    language: str | None = None,
) -> tuple[str, str]:
    """A notification's title and body in ``language`` (the active one when None), from its
    kind, its table and the flags and names in its ``data`` (never anything else of it: no
    card, no amount)."""
    player = _name(kind, data, usernames)
    values = {"table": game_id.replace("-", "")[:8] if game_id else "…", "player": player}
    case = _body_case(kind, data, player) if kind in BODIES else ""
    title, body = _templates(language or translation.get_language() or "", kind, case)
    return title, body % values


@functools.lru_cache(maxsize=1024)
def _templates(language: str, kind: str, case: str) -> tuple[str, str]:
    """The title and the body's template of a kind and case in a language, translated once
    (a burst's thousands of pushes share a handful)."""
    with translation.override(language or None):
        if kind not in BODIES:
            return str(OTHER_TITLE), str(OTHER_BODY)
        return str(TITLES[kind]), str(BODIES[kind][case])


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
    return payloads_for([notification])[notification.pk]


def payloads_for(notifications: Sequence[Notification]) -> dict[int, dict[str, Any]]:
    """``payload_for`` of many notifications (a batch's), by notification id: the recipients'
    languages and the names the texts need read in two queries, whatever their number."""
    languages = languages_of({notification.user_id for notification in notifications})
    return _payloads(notifications, {n.pk: languages[n.user_id] for n in notifications})


def _payloads(
    notifications: Sequence[Notification], languages: dict[int, str]
) -> dict[int, dict[str, Any]]:
    """The payloads of ``notifications`` in the languages given by notification id, the
    names they need read in one query (none when no text names anybody)."""
    wanted: dict[int, int | None] = {}
    for notification in notifications:
        data = notification.data if isinstance(notification.data, dict) else {}
        wanted[notification.pk] = _user_id(notification.kind, data)
    usernames = _usernames({user_id for user_id in wanted.values() if user_id is not None})
    return {n.pk: _payload(n, usernames, languages[n.pk]) for n in notifications}


def languages_of(user_ids: set[int]) -> dict[int, str]:
    """``language_of`` for many users, in one query."""
    known = dict(settings.LANGUAGES)
    rows = dict(
        get_user_model().objects.filter(pk__in=user_ids).values_list("pk", "language")
        if user_ids
        else ()
    )
    return {
        user_id: rows.get(user_id) if rows.get(user_id) in known else settings.LANGUAGE_CODE
        for user_id in user_ids
    }


def _payload(
    notification: Notification, usernames: dict[int, str], language: str
) -> dict[str, Any]:
    data = notification.data if isinstance(notification.data, dict) else {}
    game_id = _game_id(notification)
    kind = notification.kind
    title, body = texts(kind, game_id, data, usernames, language)
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
    topic per device): the table's id for a turn or a match's end, else None. FCM's
    ``collapse_key`` and APNs' ``apns-collapse-id`` are set for the same pushes."""
    if notification.kind in TOPIC_KINDS and notification.game_id is not None:
        return notification.game_id.hex
    return None


def ttl_for(notification: Notification) -> int:
    """How long the push service may hold the push for an offline device, in seconds."""
    return TTL_SECONDS.get(notification.kind, DEFAULT_TTL_SECONDS)


# --- which services this server sends to ---------------------------------------------------------


def fcm_config() -> fcm.Config | None:
    """FCM's settings (None: no ``TONGITS_FCM_CREDENTIALS``, so no FCM)."""
    path = (settings.TONGITS_FCM_CREDENTIALS or "").strip()
    if not path:
        return None
    return fcm.Config(
        credentials_file=path,
        endpoint=settings.TONGITS_FCM_ENDPOINT or fcm.DEFAULT_ENDPOINT,
        timeout=float(settings.TONGITS_DELIVERY_TIMEOUT_SECONDS),
        streams=int(settings.TONGITS_FCM_STREAMS),
        validate_only=bool(settings.TONGITS_FCM_VALIDATE_ONLY),
    )


def apns_config() -> apns.Config | None:
    """APNs' settings (None: no ``TONGITS_APNS_KEY_FILE``, so no APNs)."""
    path = (settings.TONGITS_APNS_KEY_FILE or "").strip()
    if not path:
        return None
    return apns.Config(
        key_file=path,
        key_id=settings.TONGITS_APNS_KEY_ID,
        team_id=settings.TONGITS_APNS_TEAM_ID,
        topic=settings.TONGITS_APNS_TOPIC,
        host=settings.TONGITS_APNS_HOST or "production",
        ca_file=settings.TONGITS_APNS_CA_FILE,
        timeout=float(settings.TONGITS_DELIVERY_TIMEOUT_SECONDS),
        streams=int(settings.TONGITS_APNS_STREAMS),
    )


def configured_kinds() -> list[str]:
    """The device kinds this server can send to, in ``Device.Kind``'s order: a registration of
    any other kind is refused, and devices of another kind are never tried."""
    configured = {
        Device.Kind.WEBPUSH: webpush_enabled(),
        Device.Kind.FCM: fcm_config() is not None,
        Device.Kind.APNS: apns_config() is not None,
    }
    return [kind for kind in Device.Kind.values if configured[kind]]


_clients: dict[tuple[int, Any], Any] = {}
_clients_lock = threading.Lock()


def _client(config: fcm.Config | apns.Config) -> Any:
    """This process's sender for ``config`` (made once: its token and connections are kept
    between tasks). Keyed by the process id too: a forked worker makes its own."""
    key = (os.getpid(), config)
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            module = fcm if isinstance(config, fcm.Config) else apns
            client = _clients[key] = module.Sender(config)
        return client


# --- sending -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What one send came to: ``sent`` (accepted), ``retry`` (may work later: 429, 5xx, a
    network error; ``retry_after`` seconds when the service said so), ``gone`` (the target will
    never be served again: its device is deleted), ``failed`` (will not work)."""

    result: Result
    status_code: int | None = None
    error: str = ""
    retry_after: float | None = None


def _classify(status: int) -> Result:
    if status in (200, 201, 202):
        return "sent"
    if status in (404, 410):
        return "gone"
    if status == 429 or status >= 500:
        return "retry"
    return "failed"


def _retry_after(headers: Any) -> float | None:
    value = (headers.get("Retry-After") if headers is not None else None) or ""
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None  # an HTTP date: the backoff schedule applies


#: How long a VAPID JWT is valid (RFC 8292 allows up to 24 hours), and for how much of that it
#: is reused: one signature per push service every few hours, not one per push.
VAPID_LIFETIME_SECONDS = 12 * 3600
VAPID_REUSE_SECONDS = 6 * 3600
_vapid_signed: dict[tuple[Any, str, str], tuple[dict[str, str], float]] = {}
_webpush_local = threading.local()


def _vapid_headers(key: ec.EllipticCurvePrivateKey, endpoint: str) -> dict[str, str]:
    """The ``Authorization`` header (``vapid t=<JWT>,k=<key>``) for the push service of
    ``endpoint``: its ``aud`` the endpoint's origin, signed once and reused for
    ``VAPID_REUSE_SECONDS``."""
    parts = urlsplit(endpoint)
    audience = f"{parts.scheme}://{parts.netloc}"
    subject = settings.TONGITS_WEBPUSH_VAPID_SUBJECT
    cache_key = (key, audience, subject)
    now = time.time()
    signed = _vapid_signed.get(cache_key)
    if signed is None or signed[1] <= now:
        claims = {"sub": subject, "aud": audience, "exp": int(now) + VAPID_LIFETIME_SECONDS}
        signed = (Vapid02(key).sign(claims), now + VAPID_REUSE_SECONDS)
        _vapid_signed[cache_key] = signed
    return signed[0]


def _webpush_session() -> requests.Session:
    """This thread's session: its connections to the push services kept between pushes
    (``requests.Session`` is not shared between threads)."""
    session = getattr(_webpush_local, "session", None)
    if session is None:
        session = _webpush_local.session = requests.Session()
    return session


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
        headers.update(_vapid_headers(key, device.token))
        response = webpush(
            subscription,
            data=json.dumps(payload, separators=(",", ":")),
            content_encoding="aes128gcm",
            headers=headers,
            ttl=ttl,
            timeout=settings.TONGITS_DELIVERY_TIMEOUT_SECONDS,
            requests_session=_webpush_session(),
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
    result = _classify(status)
    retry_after = _retry_after(getattr(response, "headers", None)) if result == "retry" else None
    return Outcome(result, status, clip(f"{status} {reason}".strip()), retry_after)


def fcm_message(payload: dict[str, Any], topic: str | None, ttl: int) -> dict[str, Any]:
    """The FCM v1 ``message`` of a push (without its ``token``): the texts as a
    ``notification``, the ids and the url as ``data`` (strings only, as FCM wants), and the
    Android options: ``ttl``, ``priority`` high for a turn, the game's id as ``collapse_key``
    for the kinds whose newer push replaces an older one."""
    android: dict[str, Any] = {
        "ttl": f"{ttl}s",
        "priority": "high" if payload.get("kind") == Kind.YOUR_TURN else "normal",
    }
    if topic and payload.get("game_id"):
        android["collapse_key"] = str(payload["game_id"])
    return {
        "notification": {"title": payload["title"], "body": payload["body"]},
        "data": {
            key: str(payload[key])
            for key in ("kind", "notification_id", "game_id", "url")
            if payload.get(key) is not None
        },
        "android": android,
    }


def _send_fcm(device: Device, payload: dict, topic: str | None, ttl: int) -> Outcome:
    return _start_fcm([Push(device, payload, topic, ttl)])()[0][0]


def _start_fcm(pushes: Sequence[Push]) -> Callable[[], list[tuple[Outcome, int]]]:
    """Open a stream of the process's one FCM connection for each push; the call that waits
    for their outcomes."""
    config = fcm_config()
    if config is None:
        return _all(pushes, Outcome("failed", None, "fcm not configured"))
    try:
        sender = _client(config)
    except fcm.ConfigError as exc:
        return _all(pushes, Outcome("failed", None, clip(str(exc))))
    messages = [(p.device.token, fcm_message(p.payload, p.topic, p.ttl)) for p in pushes]
    future = sender.submit(messages)
    return lambda: [(_fcm_outcome(reply), reply.milliseconds) for reply in future.result()]


def _all(pushes: Sequence[Push], outcome: Outcome) -> Callable[[], list[tuple[Outcome, int]]]:
    return lambda: [(outcome, 0)] * len(pushes)


def _fcm_outcome(reply: fcm.Reply) -> Outcome:
    if reply.status == 200:
        return Outcome("sent", 200, "200")
    error = clip(reply.error)
    if reply.status is None:
        return Outcome("failed" if reply.error_code else "retry", None, error)
    gone = (
        reply.status == 404
        or reply.error_code in fcm.GONE_CODES
        or (reply.status == 400 and reply.error_code == "INVALID_ARGUMENT" and reply.token_field)
    )
    if gone:
        return Outcome("gone", reply.status, error)
    if reply.status == 429 or reply.status >= 500:
        return Outcome("retry", reply.status, error, reply.retry_after)
    return Outcome("failed", reply.status, error)


def apns_request(
    payload: dict[str, Any], topic: str | None, ttl: int
) -> tuple[dict[str, Any], dict[str, str]]:
    """The APNs body and headers of a push: the texts as the ``aps`` alert, the ids and the
    url beside it; priority 10 for a turn (at once), 5 otherwise (when the phone sees fit); the
    expiry from the TTL; the game's id as ``apns-collapse-id`` where a newer push replaces an
    older one."""
    body = {
        "aps": {"alert": {"title": payload["title"], "body": payload["body"]}, "sound": "default"},
        **{key: payload[key] for key in ("kind", "notification_id", "game_id", "url")},
    }
    headers = {
        "apns-push-type": "alert",
        "apns-priority": "10" if payload.get("kind") == Kind.YOUR_TURN else "5",
        "apns-expiration": str(int(time.time()) + ttl),
    }
    if topic and payload.get("game_id"):
        headers["apns-collapse-id"] = str(payload["game_id"])
    return body, headers


def _send_apns(device: Device, payload: dict, topic: str | None, ttl: int) -> Outcome:
    return _start_apns([Push(device, payload, topic, ttl)])()[0][0]


def _start_apns(pushes: Sequence[Push]) -> Callable[[], list[tuple[Outcome, int]]]:
    """Open a stream of the process's one APNs connection for each push; the call that waits
    for their outcomes."""
    config = apns_config()
    if config is None:
        return _all(pushes, Outcome("failed", None, "apns not configured"))
    try:
        sender = _client(config)
    except apns.ConfigError as exc:
        return _all(pushes, Outcome("failed", None, clip(str(exc))))
    future = sender.submit(
        [(p.device.token, *apns_request(p.payload, p.topic, p.ttl)) for p in pushes]
    )
    return lambda: [(_apns_outcome(reply), reply.milliseconds) for reply in future.result()]


def _apns_outcome(reply: apns.Reply) -> Outcome:
    if reply.status == 200:
        return Outcome("sent", 200, "200")
    error = clip(reply.error)
    if reply.status is None:
        return Outcome("retry", None, error)
    if reply.status == 410 or reply.reason in apns.GONE_REASONS:
        return Outcome("gone", reply.status, error)
    if reply.status == 429 or reply.status >= 500:
        return Outcome("retry", reply.status, error, reply.retry_after)
    return Outcome("failed", reply.status, error)


#: A sender per device kind: one push to one device, no retry of its own beyond a renewed
#: credential, no database writes.
SENDERS: dict[str, Callable[[Device, dict, str | None, int], Outcome]] = {
    Device.Kind.WEBPUSH: _send_webpush,
    Device.Kind.FCM: _send_fcm,
    Device.Kind.APNS: _send_apns,
}


def send(device: Device, payload: dict, *, topic: str | None, ttl: int) -> Outcome:
    """Send ``payload`` to ``device`` once (no retries here, no database writes): the caller
    decides what the outcome means for the delivery."""
    sender = SENDERS.get(device.kind)
    if sender is None:
        return Outcome("failed", None, f"unknown device kind {device.kind!r}")
    return sender(device, payload, topic, ttl)


@dataclass(frozen=True)
class Push:
    """One push of a batch: where, what, and the Web Push topic and TTL."""

    device: Device
    payload: dict[str, Any]
    topic: str | None
    ttl: int


_pools: dict[int, ThreadPoolExecutor] = {}


def _webpush_pool() -> ThreadPoolExecutor:
    with _clients_lock:
        pool = _pools.get(os.getpid())
        if pool is None:
            pool = _pools[os.getpid()] = ThreadPoolExecutor(
                WEBPUSH_CONCURRENCY, thread_name_prefix="push-webpush"
            )
        return pool


def _timed(push: Push) -> tuple[Outcome, int]:
    started = time.monotonic()
    try:
        outcome = send(push.device, push.payload, topic=push.topic, ttl=push.ttl)
    except Exception as exc:  # a sender's bug must not lose the batch's other outcomes
        logger.exception("push to a %s device failed", push.device.kind)
        outcome = Outcome("retry", None, clip(f"error ({type(exc).__name__})"))
    return outcome, int((time.monotonic() - started) * 1000)


def _start_each(pushes: Sequence[Push]) -> Callable[[], list[tuple[Outcome, int]]]:
    """Web Push (or a kind without a batch sender): each push on a thread of a pool,
    ``WEBPUSH_CONCURRENCY`` at once, each to its subscription's push service; one alone is
    sent here and now."""
    if len(pushes) == 1:
        result = _timed(pushes[0])
        return lambda: [result]
    futures = [_webpush_pool().submit(_timed, push) for push in pushes]
    return lambda: [future.result() for future in futures]


#: How each kind's pushes of a batch are started together (``send_many``).
STARTERS: dict[str, Callable[[Sequence[Push]], Callable[[], list[tuple[Outcome, int]]]]] = {
    Device.Kind.FCM: _start_fcm,
    Device.Kind.APNS: _start_apns,
}


def send_many(pushes: Sequence[Push]) -> list[tuple[Outcome, int]]:
    """Each push's outcome and milliseconds, in order. Every kind's pushes are started before
    any is waited for, so a batch's FCM streams, APNs streams and Web Push requests are in
    flight together: FCM's and APNs' as streams of each service's one HTTP/2 connection (its
    sender's event loop), Web Push's from a pool of threads."""
    results: list[tuple[Outcome, int] | None] = [None] * len(pushes)
    by_kind: dict[str, list[int]] = {}
    for i, push in enumerate(pushes):
        by_kind.setdefault(push.device.kind, []).append(i)
    started = []
    for kind, indexes in by_kind.items():
        batch = [pushes[i] for i in indexes]
        try:
            wait = STARTERS.get(kind, _start_each)(batch)
        except Exception as exc:  # a bug must not lose the batch's other outcomes
            logger.exception("pushes to %s failed", kind)
            wait = _all(batch, Outcome("retry", None, clip(f"error ({type(exc).__name__})")))
        started.append((kind, indexes, wait))
    for kind, indexes, wait in started:
        try:
            outcomes = wait()
        except Exception as exc:
            logger.exception("pushes to %s failed", kind)
            outcomes = [(Outcome("retry", None, clip(f"error ({type(exc).__name__})")), 0)] * len(
                indexes
            )
        for i, result in zip(indexes, outcomes, strict=True):
            results[i] = result
    assert all(result is not None for result in results)
    return results  # type: ignore[return-value]


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

    Only kinds of ``TONGITS_PUSH_KINDS`` are pushed, and only to devices of a kind this server
    sends to (``configured_kinds``): a device of a kind no longer configured costs nothing.
    Idempotent: a (notification, device) pair that already has a delivery gets no second one.
    Returns how many were added.
    """
    return record_many([notification])


def record_many(notifications: Sequence[Notification]) -> int:
    """``record`` for many notifications (a projector run's): one read of their users' devices,
    and of their deliveries only when a device was found."""
    pushed = [n for n in notifications if n.kind in settings.TONGITS_PUSH_KINDS]
    if not pushed:
        return 0
    devices: dict[int, list[Device]] = {}
    for device in Device.objects.filter(
        user_id__in={n.user_id for n in pushed}, kind__in=configured_kinds()
    ).only("id", "user_id", "kind", "token"):
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


def due(now: datetime | None = None, limit: int = DUE_LIMIT) -> list[int]:
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


def retry_delay(attempts: int, retry_after: float | None) -> timedelta:
    """The wait before the next try: what the service asked for (``Retry-After``, between 1 s
    and an hour), else the backoff schedule."""
    if retry_after is None:
        return backoff(attempts)
    return timedelta(seconds=min(max(retry_after, 1.0), MAX_RETRY_AFTER_SECONDS))


def _watching(user_ids: set[int], streams_open: Callable[[int], bool] | None) -> set[int]:
    """Which of these users have a live stream open (the stream cap's leases, one round trip);
    when the check fails (Redis unreachable), none: rather one push too many than a missed
    turn."""
    try:
        if streams_open is None:
            from ops import stream_slots

            return stream_slots.holders(user_ids)
        return {user_id for user_id in user_ids if streams_open(user_id)}
    except Exception:
        logger.warning("push: stream check failed; sending", exc_info=True)
        return set()


def deliver(
    delivery_id: int,
    *,
    now: datetime | None = None,
    streams_open: Callable[[int], bool] | None = None,
) -> str:
    """One try of one push delivery (``deliver_many`` of one). Returns a short outcome."""
    return deliver_many([delivery_id], now=now, streams_open=streams_open)[delivery_id]


def deliver_many(
    delivery_ids: Sequence[int],
    *,
    now: datetime | None = None,
    streams_open: Callable[[int], bool] | None = None,
) -> dict[int, str]:
    """One try of each of these push deliveries; the Celery task's body. Returns a short
    outcome per id.

    Three steps, so no lock or transaction is held during the HTTP requests, and each a
    constant number of statements however many deliveries the batch holds:

    1. claim and read (``_claim``, one statement): each row still pending, due and not locked
       by another worker gets ``attempts + 1`` and a lease (``next_attempt_at`` pushed past the
       requests' timeout), so a second worker leaves it alone and a worker that dies mid-send
       leaves it due again once the lease runs out; with it come its notification, its device,
       the recipient's language and whether a newer notification replaced it;
    2. decide and send, outside any transaction: skip (no request) when a stream of the user is
       open, a newer notification of the same kind and game exists, the device is gone or its
       kind is no longer configured; send the rest together (``send_many``);
    3. record (``_finish``, a second short transaction of three statements): a ``PushAttempt``
       per try and each delivery's new status (sent; dropped, the device deleted, when the
       service says the target is gone; pending after ``Retry-After`` or the backoff for a
       retry, or failed after ``TONGITS_PUSH_MAX_ATTEMPTS`` tries; failed).
    """
    results = {int(delivery_id): "not due" for delivery_id in delivery_ids}
    claimed = _claim(list(results), now or timezone.now())
    if not claimed:
        return results  # done, not due yet, or another worker's
    kinds = set(configured_kinds())
    skips: list[tuple[_Claimed, str]] = []
    ready: list[_Claimed] = []
    for row in claimed:
        notification, device = row.notification, row.device
        if device is None:
            skips.append((row, "the device was removed"))
        elif device.user_id != notification.user_id:
            skips.append((row, "the device changed hands"))
        elif row.replaced:
            skips.append((row, f"a newer {notification.kind} of this game replaced it"))
        elif device.kind not in kinds:
            skips.append((row, f"{device.kind} is not configured"))
        else:
            ready.append(row)
    watching = _watching({row.notification.user_id for row in ready}, streams_open)
    skips += [(row, "a live stream of the user was open") for row in ready if row.user in watching]
    ready = [row for row in ready if row.user not in watching]
    if skips:
        _skip(skips, now, results)
    if not ready:
        return results

    notifications = {row.notification.pk: row.notification for row in ready}
    languages = {row.notification.pk: row.language for row in ready}
    payloads = _payloads(list(notifications.values()), languages)
    pushes = [
        Push(
            row.device,  # type: ignore[arg-type]  (not None: checked above)
            payloads[row.notification.pk],
            topic_for(row.notification),
            ttl_for(row.notification),
        )
        for row in ready
    ]
    outcomes = send_many(pushes)
    _finish(
        [
            (row.id, row.attempts, row.device, outcome, milliseconds)
            for row, (outcome, milliseconds) in zip(ready, outcomes, strict=True)
        ],
        now or timezone.now(),
        results,
    )
    return results


@dataclass(frozen=True, slots=True)
class _Claimed:
    """A claimed delivery and what deciding and sending it needs, read with its claim."""

    id: int
    attempts: int  # counting this try
    notification: Notification
    device: Device | None  # None: removed since the delivery was recorded
    language: str  # the recipient's
    replaced: bool  # a newer notification of the same user, kind and game exists

    @property
    def user(self) -> int:
        return self.notification.user_id


def _sql_names() -> dict[str, str]:
    """The tables the outbox's statements name, from the models (never typed twice)."""
    return {
        "delivery": PushDelivery._meta.db_table,
        "attempt": PushAttempt._meta.db_table,
        "notification": Notification._meta.db_table,
        "device": Device._meta.db_table,
        "user": get_user_model()._meta.db_table,
    }


def _claim(delivery_ids: list[int], now: datetime) -> list[_Claimed]:
    """Step 1 of ``deliver_many``, one statement: the deliveries among ``delivery_ids`` that
    are pending, due and not locked by another worker this instant (``SKIP LOCKED``: one
    another worker is claiming or finishing is theirs, never waited for) get ``attempts + 1``
    and a lease; each comes back with its notification, its device (if not removed), its
    recipient's language and whether a newer notification of the same kind and game exists.
    The others (done, not due, another worker's) are left alone."""
    names = _sql_names()
    lease = now + timedelta(seconds=outbox.lease_seconds())
    sql = f"""
        WITH claimed AS (
            UPDATE {names["delivery"]} AS d
               SET attempts = d.attempts + 1, next_attempt_at = %(lease)s
             WHERE d.id IN (
                   SELECT id FROM {names["delivery"]}
                    WHERE id = ANY(%(ids)s) AND status = %(pending)s
                      AND (next_attempt_at IS NULL OR next_attempt_at <= %(now)s)
                    ORDER BY id
                      FOR UPDATE SKIP LOCKED)
         RETURNING d.id, d.attempts, d.notification_id, d.device_id
        )
        SELECT c.id, c.attempts,
               n.id, n.user_id, n.kind, n.game_id, n.data::text,
               v.id, v.user_id, v.kind, v.token, v.p256dh, v.auth,
               u.language,
               EXISTS (SELECT 1 FROM {names["notification"]} AS m
                        WHERE m.user_id = n.user_id AND m.kind = n.kind
                          AND m.game_id = n.game_id AND m.id > n.id)
          FROM claimed AS c
          JOIN {names["notification"]} AS n ON n.id = c.notification_id
          LEFT JOIN {names["device"]} AS v ON v.id = c.device_id
          LEFT JOIN {names["user"]} AS u ON u.id = n.user_id
         ORDER BY c.id
    """
    with connection.cursor() as cursor:
        cursor.execute(
            sql, {"lease": lease, "ids": delivery_ids, "pending": Status.PENDING, "now": now}
        )
        rows = cursor.fetchall()
    known = dict(settings.LANGUAGES)
    notifications: dict[int, Notification] = {}
    claimed = []
    for row in rows:
        (delivery_id, attempts, n_id, n_user, n_kind, game_id, data, *device, language, newer) = row
        notification = notifications.get(n_id)
        if notification is None:
            notification = notifications[n_id] = Notification(
                id=n_id, user_id=n_user, kind=n_kind, game_id=game_id, data=json.loads(data)
            )
        target = None
        if device[0] is not None:
            v_id, v_user, v_kind, token, p256dh, auth = device
            target = Device(
                id=v_id, user_id=v_user, kind=v_kind, token=token, p256dh=p256dh, auth=auth
            )
        chosen = language if language in known else settings.LANGUAGE_CODE
        claimed.append(_Claimed(delivery_id, attempts, notification, target, chosen, newer))
    return claimed


def _skip(skips: list[tuple[_Claimed, str]], now: datetime | None, results: dict[int, str]) -> None:
    """Finish skipped deliveries, one statement: no try was made, so the claim's count is
    given back. One another worker took meanwhile (our lease ran out) is left to it."""
    names = _sql_names()
    sql = f"""
        UPDATE {names["delivery"]} AS d
           SET status = %(skipped)s, attempts = d.attempts - 1, next_attempt_at = NULL,
               detail = v.detail, finished_at = %(at)s
          FROM unnest(%(ids)s::bigint[], %(claimed)s::int[], %(details)s::text[])
               AS v(id, claimed, detail)
         WHERE d.id = v.id AND d.status = %(pending)s AND d.attempts = v.claimed
     RETURNING d.id
    """
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            sql,
            {
                "skipped": Status.SKIPPED,
                "pending": Status.PENDING,
                "at": now or timezone.now(),
                "ids": [row.id for row, _ in skips],
                "claimed": [row.attempts for row, _ in skips],
                "details": [clip(reason) for _, reason in skips],
            },
        )
        done = {row[0] for row in cursor.fetchall()}
    for row, reason in skips:
        results[row.id] = f"skipped: {reason}" if row.id in done else "superseded"


def _finish(
    tries: list[tuple[int, int, Device, Outcome, int]],
    at: datetime,
    results: dict[int, str],
) -> None:
    """Step 3 of ``deliver_many``: the attempts and the deliveries' new statuses, in one
    transaction of three statements (the rows locked, the attempts added, the statuses set)
    and a fourth when devices are gone."""
    names = _sql_names()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, status, attempts FROM {names['delivery']} WHERE id = ANY(%s) FOR UPDATE",
            [[t[0] for t in tries]],
        )
        rows = {row[0]: (row[1], row[2]) for row in cursor.fetchall()}
        # A delivery gone meanwhile (its notification deleted with its account) has no row to
        # record a try on; the others' outcomes are recorded all the same.
        for delivery_id in {t[0] for t in tries} - set(rows):
            results[delivery_id] = "superseded"
        tries = [t for t in tries if t[0] in rows]
        cursor.execute(
            f"""INSERT INTO {names["attempt"]} (delivery_id, at, status_code, error, milliseconds)
                SELECT id, %s, code, error, ms
                  FROM unnest(%s::bigint[], %s::int[], %s::text[], %s::int[])
                       AS v(id, code, error, ms)""",
            [
                at,
                [t[0] for t in tries],
                [t[3].status_code for t in tries],
                [clip(t[3].error) for t in tries],
                [t[4] for t in tries],
            ],
        )
        changed: list[tuple[int, str, datetime | None, str, datetime | None]] = []
        gone: list[Any] = []
        for delivery_id, claimed, device, outcome, _ in tries:
            status, attempts = rows[delivery_id]
            if status != Status.PENDING or attempts != claimed:
                # Our lease ran out and another worker took the row: its result stands.
                results[delivery_id] = "superseded"
                continue
            detail, next_at, finished = clip(outcome.error), None, at
            if outcome.result == "sent":
                status = Status.SENT
            elif outcome.result == "gone":
                gone.append(device.pk)
                status = Status.DROPPED
                detail = clip(f"gone: {outcome.error}")
            elif outcome.result == "retry" and claimed < settings.TONGITS_PUSH_MAX_ATTEMPTS:
                wait = retry_delay(claimed, outcome.retry_after)
                status, next_at, finished = Status.PENDING, at + wait, None
                results[delivery_id] = f"retry in {int(wait.total_seconds())} s"
            else:
                status = Status.FAILED
                if outcome.result == "retry":
                    detail = clip(f"gave up after {claimed} tries: {outcome.error}")
            if status != Status.PENDING:
                results[delivery_id] = str(status)
            changed.append((delivery_id, status, next_at, detail, finished))
        if changed:
            cursor.execute(
                f"""UPDATE {names["delivery"]} AS d
                       SET status = v.status, next_attempt_at = v.next_at, detail = v.detail,
                           finished_at = v.finished
                      FROM unnest(%s::bigint[], %s::text[], %s::timestamptz[], %s::text[],
                                  %s::timestamptz[]) AS v(id, status, next_at, detail, finished)
                     WHERE d.id = v.id""",
                [list(column) for column in zip(*changed, strict=True)],
            )
        if gone:
            Device.objects.filter(pk__in=gone).delete()
