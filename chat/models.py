"""The table chat's tables (docs/chat.md).

``chat_message`` and ``chat_hidden`` are append-only (migration 0002's triggers refuse UPDATE,
DELETE and TRUNCATE), as the games' events and the chips' entries are: the log keeps that a
message was written, when, by whom, in which channel, and that staff hid it, by whom. The text
is apart, in ``chat_messagetext`` (never updated, a trigger too), so that deleting an account can
remove what the person wrote while the log keeps that they wrote. Chat is not a game event: it
changes no state and never enters a game's hash chain. Mutes are a setting (deleted when lifted);
reports are one per user and message.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone


class Channel(models.TextChoices):
    PLAYERS = "players", "the seated players"
    SPECTATORS = "spectators", "the spectators (when the table allows it)"


class Message(models.Model):
    """One message at one table: append-only."""

    id = models.BigAutoField(primary_key=True)
    game_id = models.UUIDField(help_text="The table (games.Game) it was written at.")
    channel = models.CharField(max_length=10, choices=Channel.choices)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["game_id", "id"], name="chat_message_game_id")]

    def __str__(self) -> str:
        return f"message {self.pk} at {self.game_id} ({self.channel})"


class MessageText(models.Model):
    """A message's text: never changed; deleted with its author's account."""

    message = models.OneToOneField(
        Message, primary_key=True, on_delete=models.CASCADE, related_name="body"
    )
    text = models.TextField()

    def __str__(self) -> str:
        return self.text


class Hidden(models.Model):
    """Staff withheld a message from every reader from ``at`` on: append-only, one per message."""

    id = models.BigAutoField(primary_key=True)
    message = models.OneToOneField(Message, on_delete=models.PROTECT, related_name="hidden")
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(default=timezone.now)
    reason = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        verbose_name_plural = "hidden messages"

    def __str__(self) -> str:
        return f"message {self.message_id} hidden by {self.by_id}"


class Mute(models.Model):
    """``user`` no longer receives ``muted``'s messages, anywhere (a setting: deleted to lift)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    muted = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "muted"], name="chat_mute_once"),
            models.CheckConstraint(condition=~Q(user=F("muted")), name="chat_mute_not_self"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} mutes {self.muted_id}"


class ReportReason(models.TextChoices):
    ABUSE = "abuse", "abusive or hateful"
    SPAM = "spam", "spam or advertising"
    CHEATING = "cheating", "talking about cards in play (collusion)"
    OTHER = "other", "something else"


class Report(models.Model):
    """A reader reported a message to the moderators: one per user and message."""

    Reason = ReportReason

    message = models.ForeignKey(Message, on_delete=models.PROTECT, related_name="reports")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    reason = models.CharField(max_length=10, choices=Reason.choices, default=Reason.OTHER)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["message", "user"], name="chat_report_once"),
        ]

    def __str__(self) -> str:
        return f"report of message {self.message_id} by {self.user_id}"
