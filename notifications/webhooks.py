"""Signed webhooks to studios, as the Standard Webhooks spec (standardwebhooks.com) has them.

A fact a studio hears of (a match finished, chips settled, ...) is written once, as a
``WebhookMessage`` with a stable id, in the transaction of its cause (``record``), together with
one ``WebhookDelivery`` per endpoint that wants its kind: the outbox. Celery's tasks (and their
loop over ``due``) then call ``deliver`` until each delivery is sent or given up, at least once:

* a try is claimed in a short transaction (``attempts + 1`` and ``next_attempt_at`` pushed a
  lease ahead) and committed *before* the request, so no transaction stays open while a
  studio's server thinks, and a worker killed mid-request leaves a delivery that is simply due
  again when its lease runs out;
* the request is sent outside any transaction, signed with the endpoint's secret
  (``webhook-id``, ``webhook-timestamp``, ``webhook-signature``);
* a second short transaction appends the ``WebhookAttempt`` and the outcome: sent, retried on
  the spec's schedule (``RETRY_DELAYS``), or failed once it is exhausted.

Every try of a message carries the same ``webhook-id`` (``message_id`` of its cause), so a
receiver that saw it already (our worker died after its answer) drops the duplicate.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import secrets
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import requests
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.core.validators import URLValidator
from django.db import connection, transaction
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from notifications import outbox
from notifications.models import (
    Status,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookMessage,
)

log = logging.getLogger(__name__)

SECRET_PREFIX = "whsec_"
#: The spec asks for secrets of 24 to 64 random bytes.
SECRET_MIN_BYTES, SECRET_MAX_BYTES = 24, 64

#: Seconds to wait before each try, the Standard Webhooks' recommended schedule: the first try at
#: once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (8 tries over about 27 hours).
RETRY_DELAYS: tuple[float, ...] = (0, 5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600)


#: ``deliver``'s outcomes.
SENT, RETRY, FAILED, SKIPPED = "sent", "retry", "failed", "skipped"
BUSY, DONE = outbox.BUSY, outbox.DONE

_ERROR_CHARS = 200


def message_id(cause: str) -> str:
    """The message id of a cause: the same for every try and every re-projection of it, so
    receivers can use ``webhook-id`` to drop duplicates (``msg_`` + 26 base32 characters of the
    cause's SHA-256, 130 bits)."""
    digest = hashlib.sha256(cause.encode()).digest()
    return "msg_" + base64.b32encode(digest).decode().lower()[:26]


def _iso_utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def record(kind: str, cause: str, data: dict, created_at: datetime) -> WebhookMessage | None:
    """Write the message of ``cause`` and its deliveries, unless that cause was written already.

    Call it inside the transaction that commits the cause: the message then exists exactly when
    its cause does. ``INSERT ... ON CONFLICT DO NOTHING`` makes it idempotent and safe for two
    concurrent callers (the second waits for the first to commit, then writes nothing), without
    the savepoint and the aborted statement of a caught ``IntegrityError``. Returns the new
    message, or ``None`` when its cause was known.
    """
    if kind not in WebhookMessage.Kind.values:
        raise ValueError(f"unknown webhook kind {kind!r}")
    msg_id = message_id(cause)
    payload = {"type": kind, "timestamp": _iso_utc(created_at), "data": data}
    # DjangoJSONEncoder: the data may hold UUIDs, datetimes or decimals; stored as plain JSON.
    payload_json = json.dumps(payload, cls=DjangoJSONEncoder, separators=(",", ":"))
    table = connection.ops.quote_name(WebhookMessage._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (id, kind, cause, payload, created_at)"
            " VALUES (%s, %s, %s, %s::jsonb, %s) ON CONFLICT DO NOTHING RETURNING id",
            [msg_id, kind, cause, payload_json, created_at],
        )
        if cursor.fetchone() is None:
            return None
    message = WebhookMessage(
        id=msg_id, kind=kind, cause=cause, payload=json.loads(payload_json), created_at=created_at
    )
    message._state.adding, message._state.db = False, connection.alias  # as if read back
    now = timezone.now()
    endpoints = [e for e in WebhookEndpoint.objects.filter(active=True) if e.wants(kind)]
    WebhookDelivery.objects.bulk_create(
        WebhookDelivery(
            message=message,
            endpoint=endpoint,
            status=Status.PENDING,
            next_attempt_at=now,
            created_at=now,
        )
        for endpoint in endpoints
    )
    return message


def next_delay(attempts: int) -> float | None:
    """Seconds from a failed try to the next one, after ``attempts`` tries; ``None``: the
    schedule is exhausted, give up."""
    if attempts < 0:
        raise ValueError("attempts cannot be negative")
    delays = retry_delays()
    return delays[attempts] if attempts < len(delays) else None


def retry_delays() -> tuple[float, ...]:
    """The schedule in use: ``TONGITS_WEBHOOK_RETRY_DELAYS`` when set, else the spec's."""
    return tuple(getattr(settings, "TONGITS_WEBHOOK_RETRY_DELAYS", None) or RETRY_DELAYS)


def due(now: datetime | None = None, limit: int = 500) -> list[int]:
    """Ids of the pending deliveries whose next try is due, oldest first, for a loop to queue.

    The filter is the partial index's (``status = 'pending'``), so this stays cheap however long
    the history grows.
    """
    now = now or timezone.now()
    return list(
        WebhookDelivery.objects.filter(status=Status.PENDING, next_attempt_at__lte=now)
        .order_by("next_attempt_at", "id")
        .values_list("id", flat=True)[:limit]
    )


def _refuse(delivery: WebhookDelivery, now: datetime) -> str | None:
    """What ends a delivery instead of a try (``outbox.claim``): an inactive endpoint, or a last
    try that was claimed and never finished (its worker died)."""
    if not delivery.endpoint.active:
        status, detail, result = Status.SKIPPED, "endpoint inactive", SKIPPED
    elif next_delay(delivery.attempts) is None:
        status, detail, result = Status.FAILED, "last try lost (worker stopped)", FAILED
    else:
        return None
    delivery.status, delivery.detail, delivery.finished_at = status, detail, now
    delivery.save(update_fields=["status", "detail", "finished_at"])
    return result


def signed_request(
    endpoint: WebhookEndpoint, message: WebhookMessage, sent_at: datetime | None = None
) -> tuple[bytes, dict[str, str]]:
    """The body and headers of a message to an endpoint: compact JSON, serialized once, and
    the Standard Webhooks signature of exactly those bytes."""
    body = json.dumps(message.payload, separators=(",", ":"), ensure_ascii=False)
    # The wall clock, whatever a caller's `now` says: receivers refuse timestamps more than
    # five minutes from theirs.
    sent_at = sent_at or datetime.now(UTC)
    headers = {
        "webhook-id": message.id,
        "webhook-timestamp": str(int(sent_at.timestamp())),
        "webhook-signature": Webhook(endpoint.secret).sign(message.id, sent_at, body),
        "content-type": "application/json",
    }
    return body.encode(), headers


def _post(url: str, body: bytes, headers: Mapping[str, str]) -> tuple[int | None, str]:
    """POST once: ``(status code, error)``; no status code when no answer came."""
    timeout = float(settings.TONGITS_DELIVERY_TIMEOUT_SECONDS)
    try:
        # stream=True: the answer's status is all we need, never its (possibly large) body.
        # No redirects: a signed request goes to the URL the studio registered, nowhere else.
        with requests.post(
            url,
            data=body,
            headers=dict(headers),
            timeout=(timeout, timeout),
            allow_redirects=False,
            stream=True,
        ) as response:
            code = response.status_code
            error = "" if 200 <= code < 300 else f"HTTP {code} {response.reason or ''}".strip()
            return code, error
    except requests.Timeout as exc:
        return None, f"timeout after {timeout:g} s: {exc}"
    except requests.RequestException as exc:
        return None, f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # a malformed URL or header the studio's side never saw
        log.exception("webhook to %s: the request could not be made", url)
        return None, f"{type(exc).__name__}: {exc}"


def deliver(delivery_id: int, *, now: datetime | None = None) -> str:
    """Send one try of a delivery and record it; returns the outcome (``sent``, ``retry``,
    ``failed``, ``skipped``, or ``busy``/``done`` when there was nothing to send).

    ``now`` (tests) stands for the clock of the schedule: the claim, the attempt's time and the
    next try are reckoned from it; the signature's timestamp is always the wall clock's.
    """
    claimed_at = now or timezone.now()
    delivery, why = outbox.claim(
        WebhookDelivery, delivery_id, claimed_at, related=("message", "endpoint"), refuse=_refuse
    )
    if delivery is None:
        return why
    claim = delivery.attempts
    body, headers = signed_request(delivery.endpoint, delivery.message)
    started = time.monotonic()
    code, error = _post(delivery.endpoint.url, body, headers)
    milliseconds = int((time.monotonic() - started) * 1000)
    finished_at = now or timezone.now()
    ok = code is not None and 200 <= code < 300
    with transaction.atomic():
        current = WebhookDelivery.objects.select_for_update().filter(pk=delivery_id).first()
        if current is None:
            return DONE  # deleted with its endpoint meanwhile
        WebhookAttempt.objects.create(
            delivery=current,
            at=claimed_at,
            status_code=code,
            error=error[:_ERROR_CHARS],
            milliseconds=milliseconds,
        )
        if current.status != Status.PENDING:
            return DONE  # another worker's try finished it
        if not ok and current.attempts != claim:
            return RETRY  # our lease ran out and a newer try decides
        if ok:
            current.status = Status.SENT
            current.detail = f"HTTP {code}"
            current.finished_at = finished_at
            current.next_attempt_at = None
            result = SENT
        else:
            delay = next_delay(current.attempts)
            current.detail = error[:_ERROR_CHARS]
            if delay is None:
                current.status = Status.FAILED
                current.finished_at = finished_at
                current.next_attempt_at = None
                result = FAILED
            else:
                current.next_attempt_at = finished_at + timedelta(seconds=delay)
                result = RETRY
        current.save(update_fields=["status", "detail", "finished_at", "next_attempt_at"])
    if result != SENT:
        log.info("webhook %s to %s: %s (%s)", delivery_id, delivery.endpoint.url, result, error)
    return result


def new_secret() -> str:
    """A fresh endpoint secret, ``whsec_`` and the base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def check_secret(secret: object) -> str:
    """The secret if it is a ``whsec_`` base64 secret of 24 to 64 bytes that standardwebhooks
    accepts; ``ValueError`` (with the reason) otherwise."""
    if not isinstance(secret, str) or not secret.startswith(SECRET_PREFIX):
        raise ValueError(f"a secret is {SECRET_PREFIX!r} followed by base64")
    encoded = secret[len(SECRET_PREFIX) :]
    try:
        # Strict, unlike the library's decoder, which drops any character outside base64.
        raw = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the secret after whsec_ is not base64") from None
    if not SECRET_MIN_BYTES <= len(raw) <= SECRET_MAX_BYTES:
        raise ValueError(
            f"the secret holds {len(raw)} bytes; it needs {SECRET_MIN_BYTES} to {SECRET_MAX_BYTES}"
        )
    try:
        Webhook(secret)
    except Exception as exc:  # the library's own refusal, whatever its kind
        raise ValueError(f"standardwebhooks refuses the secret: {exc}") from None
    return secret


def check_kinds(kinds: object) -> list[str]:
    """The kinds as a list if each is a ``WebhookMessage.Kind``; ``ValueError`` otherwise."""
    if kinds is None:
        return []
    if isinstance(kinds, str) or not isinstance(kinds, Iterable):
        raise ValueError("kinds is a list of message kinds (empty: every kind)")
    kinds = list(kinds)
    unknown = [k for k in kinds if k not in WebhookMessage.Kind.values]
    if unknown:
        raise ValueError(f"unknown kinds {unknown}; known: {', '.join(WebhookMessage.Kind.values)}")
    return list(dict.fromkeys(kinds))


def parse_config(config: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(config, list | tuple):
        raise ImproperlyConfigured("TONGITS_WEBHOOKS is a JSON list of endpoints")
    url_ok = URLValidator(schemes=["http", "https"])
    wanted: dict[str, dict[str, Any]] = {}
    for number, entry in enumerate(config, 1):
        where = f"TONGITS_WEBHOOKS entry {number}"
        if not isinstance(entry, dict):
            raise ImproperlyConfigured(f"{where} is not an object with url, secret and kinds")
        extra = set(entry) - {"url", "secret", "kinds", "description"}
        if extra:
            raise ImproperlyConfigured(f"{where} has unknown keys {sorted(extra)}")
        url = entry.get("url")
        try:
            url_ok(url)
        except ValidationError:
            raise ImproperlyConfigured(f"{where}: {url!r} is not an http(s) URL") from None
        if len(url) > WebhookEndpoint._meta.get_field("url").max_length:
            raise ImproperlyConfigured(f"{where}: the URL is too long")
        if url in wanted:
            raise ImproperlyConfigured(f"{where}: {url} is listed twice")
        try:
            secret = check_secret(entry.get("secret"))
            kinds = check_kinds(entry.get("kinds", []))
        except ValueError as exc:
            raise ImproperlyConfigured(f"{where} ({url}): {exc}") from None
        description = entry.get("description", "")
        if not isinstance(description, str) or len(description) > 200:
            raise ImproperlyConfigured(f"{where}: description is a text of up to 200 characters")
        wanted[url] = {"secret": secret, "kinds": kinds, "description": description}
    return wanted


def sync_endpoints(config: list[dict[str, Any]] | None = None) -> dict[str, int]:
    """Make the settings' endpoints (``from_settings``) those of ``TONGITS_WEBHOOKS``: create
    the missing, update the changed, deactivate the ones no longer listed (kept, with their
    deliveries' history). Endpoints added in the admin are left alone.

    The whole list is validated before anything is written: a bad entry raises
    ``ImproperlyConfigured`` naming it, and changes nothing. Returns the counts of each change.
    """
    wanted = parse_config(settings.TONGITS_WEBHOOKS if config is None else config)
    counts = {"created": 0, "updated": 0, "deactivated": 0}
    with transaction.atomic():
        existing = {
            e.url: e for e in WebhookEndpoint.objects.select_for_update().filter(from_settings=True)
        }
        for url, fields in wanted.items():
            endpoint = existing.pop(url, None)
            if endpoint is None:
                WebhookEndpoint.objects.create(url=url, from_settings=True, active=True, **fields)
                counts["created"] += 1
                continue
            changed = [name for name, value in fields.items() if getattr(endpoint, name) != value]
            if not endpoint.active:
                changed.append("active")
            if changed:
                for name, value in fields.items():
                    setattr(endpoint, name, value)
                endpoint.active = True
                endpoint.save(update_fields=changed)
                counts["updated"] += 1
        for endpoint in existing.values():
            if endpoint.active:
                endpoint.active = False
                endpoint.save(update_fields=["active"])
                counts["deactivated"] += 1
    return counts
