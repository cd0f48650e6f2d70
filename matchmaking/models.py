"""The matchmaker's tables: tickets (one person, or a party of friends, asking for a table),
their members, and an append-only log of what happened to each ticket, per person.

A ticket is ``forming`` while a party's friends have not all joined, ``searching`` until the
matcher seats it (``matched``, with the game) or it ends otherwise (``cancelled``, with a
``reason``). One person holds at most one open ticket: a partial unique index on the members
who joined a forming or searching ticket (``active``).
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q


class Ticket(models.Model):
    class Status(models.TextChoices):
        FORMING = "forming", "a party waiting for its friends to join"
        SEARCHING = "searching", "waiting for a table"
        MATCHED = "matched", "seated at a table"
        CANCELLED = "cancelled", "ended without a table"

    OPEN = (Status.FORMING, Status.SEARCHING)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tickets"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.SEARCHING)
    reason = models.CharField(
        max_length=32, blank=True, default="", help_text="Why a cancelled ticket ended."
    )
    room = models.CharField(max_length=32, help_text='A room of GET /rooms: "buy_in:stake".')
    buy_in = models.PositiveIntegerField()
    rules = models.JSONField(help_text="Every option of the table's RuleSet, the room's stake.")
    rules_key = models.CharField(max_length=64, help_text="Tickets match only on equal rules.")
    rated = models.BooleanField()
    bots_after = models.FloatField(
        null=True, blank=True, help_text="Seconds before bots fill the seats; null: people only."
    )
    bot_level = models.CharField(max_length=8)
    size = models.PositiveSmallIntegerField(help_text="People in the ticket (1 to 3).")
    created_at = models.DateTimeField(auto_now_add=True)
    searching_since = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    game_id = models.UUIDField(null=True, blank=True)

    class Meta:
        indexes = [
            # The matcher's question: which tickets of a room search, oldest first.
            models.Index(
                fields=["room", "searching_since"],
                name="matchmaking_searching",
                condition=Q(status="searching"),
            ),
            models.Index(
                fields=["created_at"], name="matchmaking_forming", condition=Q(status="forming")
            ),
            # The estimated wait: the room's recent matches.
            models.Index(
                fields=["room", "-ended_at"],
                name="matchmaking_matched",
                condition=Q(status="matched"),
            ),
        ]

    def __str__(self) -> str:
        return f"ticket {self.id} ({self.status})"


class Member(models.Model):
    class Status(models.TextChoices):
        INVITED = "invited", "asked by a friend, not answered"
        JOINED = "joined", "in the ticket"
        DECLINED = "declined", "said no"
        LEFT = "left", "left the ticket"

    id = models.BigAutoField(primary_key=True)
    ticket = models.ForeignKey(Ticket, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ticket_memberships"
    )
    status = models.CharField(max_length=8, choices=Status.choices)
    active = models.BooleanField(
        default=False, help_text="Joined, on a ticket still forming or searching."
    )
    joined_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["ticket", "user"], name="matchmaking_member_once"),
            models.UniqueConstraint(
                fields=["user"], condition=Q(active=True), name="matchmaking_one_open_ticket"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} in {self.ticket_id} ({self.status})"


class TicketEvent(models.Model):
    """What happened to a ticket, told to one person (append-only): the ``/me/stream`` frames
    of the matchmaker are these rows after the position a stream has seen."""

    class Kind(models.TextChoices):
        SEARCHING = "searching", "the ticket searches"
        UPDATED = "updated", "a friend joined the party"
        MATCHED = "matched", "the ticket's people are seated"
        CANCELLED = "cancelled", "the ticket ended without a table"

    id = models.BigAutoField(primary_key=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ticket_events"
    )
    ticket = models.ForeignKey(Ticket, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    data = models.JSONField(default=dict)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["user", "id"], name="matchmaking_event_user")]

    def __str__(self) -> str:
        return f"{self.kind} of {self.ticket_id} for {self.user_id}"
