"""Friends, blocks and presence (docs/friends.md).

A friendship and the request that leads to it are one row per pair of people, stored in id
order (``user_low`` < ``user_high``, unique), so a pair can never be friends twice nor hold two
requests that cross: ``requested_by`` says which of the two asked, ``accepted_at`` is null
while the request waits. A block is one row per blocker and blocked person. A presence record
holds what the streams and tables cannot tell afterwards: whether the person's streams were
last seen open, when they were last seen, and when friends last had news of them.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone


class Friendship(models.Model):
    """A friendship, or a request for one while ``accepted_at`` is null: one row per pair."""

    id = models.BigAutoField(primary_key=True)
    # The unique pair's index serves lookups by user_low; user_high has an index of its own.
    user_low = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    user_high = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,
        help_text="Which of the two asked.",
    )
    requested_at = models.DateTimeField(default=timezone.now)
    accepted_at = models.DateTimeField(null=True, blank=True, help_text="Null: a request.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user_low", "user_high"], name="social_pair_once"),
            models.CheckConstraint(
                condition=Q(user_low__lt=F("user_high")), name="social_pair_in_order"
            ),
            models.CheckConstraint(
                condition=Q(requested_by=F("user_low")) | Q(requested_by=F("user_high")),
                name="social_requested_by_one_of_them",
            ),
        ]

    def __str__(self) -> str:
        state = "friends" if self.accepted_at else f"requested by {self.requested_by_id}"
        return f"{self.user_low_id} and {self.user_high_id}: {state}"

    def other(self, user_id: int) -> int:
        """The other person of the pair."""
        return self.user_high_id if self.user_low_id == user_id else self.user_low_id


class Block(models.Model):
    """``user`` keeps ``blocked`` away: no friendship, chat, invitations or shared tables."""

    id = models.BigAutoField(primary_key=True)
    # The unique pair's index serves lookups by user; blocked has an index of its own.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    blocked = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "blocked"], name="social_block_once"),
            models.CheckConstraint(condition=~Q(user=F("blocked")), name="social_block_not_self"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} blocks {self.blocked_id}"


class Presence(models.Model):
    """What friends are told of a person besides their tables: written when the person's
    streams come or go, a match of theirs starts or ends, or they hide or show it; never on a
    read."""

    # No foreign key in the database: the stream watcher's writes touch this table alone
    # (social.presence.look); rows go with their account (social.services.forget_user).
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="+",
        db_constraint=False,
    )
    online = models.BooleanField(
        default=False, help_text="A stream of theirs was open when last looked (not the truth)."
    )
    last_seen = models.DateTimeField(
        null=True, blank=True, help_text="When their streams last came or went."
    )
    changed_at = models.DateTimeField(
        default=timezone.now, help_text="When friends last had news of them."
    )

    def __str__(self) -> str:
        return f"presence of {self.user_id}"
