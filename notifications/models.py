"""The notifications' tables: a user's inbox, their push targets, and the deliveries to phones
and to studios' webhooks.

``Notification`` rows are the inbox, a projection: each has a ``cause``, unique per user, derived
from what caused it (``your_turn:<game>:<seq>``), so projecting the same cause twice writes one
row and ``manage.py notifications rebuild --check`` can compare the inbox with a fresh
projection. Only ``read_at`` changes after the insert (the user's own mark).

Deliveries (``PushDelivery``, ``WebhookDelivery``) are the outbox: written with their cause, then
sent by Celery tasks at least once; every try is an append-only ``*Attempt`` row, so the
operator sees what was tried, when and what the other side answered.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q


class Kind(models.TextChoices):
    """What a notification tells its user."""

    YOUR_TURN = "your_turn", "your turn at a table"
    INVITED = "invited", "an invitation to a table"
    INVITATION_ANSWERED = "invitation_answered", "an invitee accepted or declined"
    MATCH_OVER = "match_over", "a match you played ended"
    CHIPS_SETTLED = "chips_settled", "a table's chips were paid out or refunded"
    NEW_SIGN_IN = "new_sign_in", "a sign-in from a new device"
    FRIEND_REQUEST = "friend_request", "someone asked to be your friend"
    PARTY_INVITE = "party_invite", "a friend asked you to queue together"
    MATCHED = "matched", "the matchmaker seated you at a table"
    TOURNAMENT_STARTING = "tournament_starting", "a tournament you registered for starts soon"
    TOURNAMENT_TABLE = "tournament_table", "your next table of a tournament is ready"


class Notification(models.Model):
    """One entry of a user's inbox; ``data`` holds ids and names, never a card."""

    id = models.BigAutoField(primary_key=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    kind = models.CharField(max_length=24, choices=Kind.choices)
    cause = models.CharField(max_length=200, help_text="What caused it, unique per user.")
    game_id = models.UUIDField(null=True, blank=True)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(help_text="When its cause was committed.")
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "cause"], name="notifications_one_per_cause"),
        ]
        indexes = [
            models.Index(fields=["user", "-id"], name="notifications_inbox"),
            models.Index(
                fields=["user"], name="notifications_unread", condition=Q(read_at__isnull=True)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} for {self.user_id} ({self.cause})"


class Cursor(models.Model):
    """How far a projector has read an append-only table (its ids), so a restart goes on there."""

    name = models.CharField(max_length=32, primary_key=True)
    position = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.name} at {self.position}"


class Device(models.Model):
    """A push target of one session: a Web Push subscription, an FCM or an APNs token.

    Deleted with its session (signing out ends the pushes) and when the push service answers
    that it is gone (404/410).
    """

    class Kind(models.TextChoices):
        WEBPUSH = "webpush", "Web Push subscription (RFC 8030/8291)"
        FCM = "fcm", "Firebase Cloud Messaging token"
        APNS = "apns", "Apple Push Notification service token"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="push_devices"
    )
    session = models.ForeignKey(
        "accounts.Session", on_delete=models.CASCADE, related_name="push_devices"
    )
    kind = models.CharField(max_length=8, choices=Kind.choices)
    # The Web Push endpoint URL, or the FCM/APNs token.
    token = models.TextField()
    # Web Push only: the subscription's public key (P-256, base64url) and auth secret.
    p256dh = models.CharField(max_length=200, blank=True, default="")
    auth = models.CharField(max_length=100, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "token"], name="notifications_device_token"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} device {self.id} of {self.user_id}"


class Status(models.TextChoices):
    """Where a delivery stands."""

    PENDING = "pending", "waiting for its next try"
    SENT = "sent", "accepted by the other side"
    FAILED = "failed", "given up after its last try"
    DROPPED = "dropped", "the target is gone (404/410): removed"
    SKIPPED = "skipped", "not sent (a stream was open, or a newer one replaced it)"


class Delivery(models.Model):
    """What the push and the webhook outboxes share: where one delivery stands, and its tries
    (``attempts``; the next one due at ``next_attempt_at``, a claim's lease while it runs)."""

    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    detail = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class Attempt(models.Model):
    """One try of a delivery, append-only: when, what the other side answered, how long."""

    at = models.DateTimeField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=200, blank=True, default="")
    milliseconds = models.PositiveIntegerField(default=0)

    class Meta:
        abstract = True
        ordering = ["delivery", "id"]

    def __str__(self) -> str:
        return f"try {self.id} of {self.delivery_id}: {self.status_code or self.error}"


class PushDelivery(Delivery):
    """One notification to one device; at most one per pair."""

    id = models.BigAutoField(primary_key=True)
    notification = models.ForeignKey(
        Notification, on_delete=models.CASCADE, related_name="push_deliveries"
    )
    # Not a foreign key: the record outlives a dropped device.
    device_id = models.UUIDField()
    device_kind = models.CharField(max_length=8)
    target = models.CharField(max_length=200, help_text="The push service's host (no token).")

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "push deliveries"
        constraints = [
            models.UniqueConstraint(
                fields=["notification", "device_id"], name="notifications_push_once"
            ),
        ]
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                name="notifications_push_due",
                condition=Q(status="pending"),
            ),
        ]

    def __str__(self) -> str:
        return f"push {self.id} ({self.status})"


class PushAttempt(Attempt):
    """One try of a push delivery, append-only."""

    delivery = models.ForeignKey(PushDelivery, on_delete=models.CASCADE, related_name="tries")


class WebhookEndpoint(models.Model):
    """A studio's receiver: its URL, its Standard Webhooks secret and the kinds it wants."""

    id = models.BigAutoField(primary_key=True)
    url = models.URLField(max_length=500)
    secret = models.CharField(max_length=200, help_text="whsec_<base64>; shared with the studio.")
    kinds = models.JSONField(default=list, blank=True, help_text="Empty: every kind.")
    active = models.BooleanField(default=True)
    description = models.CharField(max_length=200, blank=True, default="")
    # Set for endpoints of TONGITS_WEBHOOKS, which the settings own (synchronized at start).
    from_settings = models.BooleanField(default=False, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.url

    def wants(self, kind: str) -> bool:
        return self.active and (not self.kinds or kind in self.kinds)


class WebhookMessage(models.Model):
    """One fact a studio hears of, once: its id (``msg_<...>``) is stable across retries."""

    class Kind(models.TextChoices):
        MATCH_FINISHED = "match.finished", "a match ended with a result"
        MATCH_ABORTED = "match.aborted", "a match was called off"
        CHIPS_SETTLED = "chips.settled", "a table's chips were paid out or refunded"
        ACCOUNT_DELETED = "account.deleted", "a player deleted their account"

    id = models.CharField(max_length=64, primary_key=True)
    kind = models.CharField(max_length=24, choices=Kind.choices)
    cause = models.CharField(max_length=200, unique=True)
    payload = models.JSONField()
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} {self.id}"


class WebhookDelivery(Delivery):
    """One message to one endpoint; retried with backoff for about a day."""

    id = models.BigAutoField(primary_key=True)
    message = models.ForeignKey(WebhookMessage, on_delete=models.CASCADE, related_name="deliveries")
    # PROTECT: an endpoint with history is deactivated, not deleted (its log stays).
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "webhook deliveries"
        constraints = [
            models.UniqueConstraint(
                fields=["message", "endpoint"], name="notifications_webhook_once"
            ),
        ]
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                name="notifications_webhook_due",
                condition=Q(status="pending"),
            ),
        ]

    def __str__(self) -> str:
        return f"webhook {self.id} ({self.status})"


class WebhookAttempt(Attempt):
    """One try of a webhook delivery, append-only."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="tries")
