"""Tournaments: the event, its registrations and its tables (docs/tournaments.md).

A ``Tournament`` is registering, running, finished or cancelled. Its buy-ins sit in an escrow of
the chips ledger named by the tournament's id; registration, refunds and prizes are the only
entries that move wallet chips (its tables play for nothing but the tournament). Its seating
seed is secret until the end; ``seed_commitment`` (sha256 of it) is public from the creation,
and ``manifest`` (the entrants with their seeds, the rules, the prize structure, the pool) is
fixed at the start. A ``Table`` is one match of one stage: three entrant numbers of the
manifest, the game it is played at, its winner.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q


def standard_rules() -> str:
    """A series' rules unless set: the standard preset (a callable, as JSONField defaults are)."""
    return "standard"


class Series(models.Model):
    """A tournament studios keep open (the admin): whenever an active series has no tournament
    registering, the tournaments' loop creates the next one from these settings (a sit-and-go
    of 9 in a room, always open)."""

    id = models.BigAutoField(primary_key=True)
    name = models.CharField(max_length=80)
    rules = models.JSONField(default=standard_rules, help_text="A preset name or rule options.")
    wins_to_match = models.PositiveSmallIntegerField(default=1)
    size = models.PositiveSmallIntegerField(default=9, help_text="Entrants: 3, 9 or 27.")
    buy_in = models.PositiveIntegerField(default=0)
    fee = models.PositiveIntegerField(default=0)
    prizes = models.JSONField(default=list, help_text="Percent of the pool for places 1, 2, 3.")
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "series"

    def __str__(self) -> str:
        return self.name


class Tournament(models.Model):
    class Status(models.TextChoices):
        REGISTERING = "registering", "open for registration"
        RUNNING = "running", "its tables are playing"
        FINISHED = "finished", "its prizes are paid"
        CANCELLED = "cancelled", "called off: every buy-in refunded"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=80)
    rules = models.JSONField(help_text="The tables' rules (wins_to_match included).")
    wins_to_match = models.PositiveSmallIntegerField()
    size = models.PositiveSmallIntegerField(help_text="Entrants: 3, 9 or 27.")
    minimum = models.PositiveSmallIntegerField(
        help_text="People registered at starts_at below which a scheduled event is cancelled."
    )
    buy_in = models.PositiveIntegerField(default=0)
    fee = models.PositiveIntegerField(default=0)
    prizes = models.JSONField(help_text="Percent of the pool for places 1, 2, 3.")
    bots = models.BooleanField(default=False, help_text="Bots fill empty seats at the start.")
    bot_level = models.CharField(max_length=8, default="normal")
    starts_at = models.DateTimeField(null=True, blank=True, help_text="None: a sit-and-go.")
    status = models.CharField(
        max_length=12, choices=Status.choices, default=Status.REGISTERING, db_index=True
    )
    reason = models.CharField(max_length=32, blank=True, default="")
    seed = models.CharField(max_length=64, editable=False, help_text="Secret until the end.")
    seed_commitment = models.CharField(max_length=64, editable=False)
    manifest = models.JSONField(null=True, blank=True, editable=False)
    stage = models.PositiveSmallIntegerField(default=0)
    standings = models.JSONField(null=True, blank=True, editable=False)
    prize_entries = models.JSONField(null=True, blank=True, editable=False)
    seal = models.JSONField(null=True, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    reminded_at = models.DateTimeField(null=True, blank=True)
    series = models.ForeignKey(
        Series, null=True, blank=True, on_delete=models.SET_NULL, related_name="tournaments"
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(
                fields=["starts_at"],
                name="tournament_due",
                condition=Q(status="registering"),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.status})"

    @property
    def sit_and_go(self) -> bool:
        return self.starts_at is None


class Registration(models.Model):
    """A person's place in a tournament; withdrawn (refunded) rows stay, so each entry and
    refund has its own key (``tournament_entry:<id>``, ``tournament_refund:<id>``)."""

    id = models.BigAutoField(primary_key=True)
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entries")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    seed = models.CharField(max_length=64, help_text="The entrant's own seed for the draw.")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    refunded = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tournament", "user"],
                condition=Q(active=True),
                name="tournament_registration_once",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} in {self.tournament_id}"


class Table(models.Model):
    """One match of a stage: ``entrants`` (manifest numbers, seat order) at ``game_id``."""

    id = models.BigAutoField(primary_key=True)
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="tables")
    stage = models.PositiveSmallIntegerField()
    index = models.PositiveSmallIntegerField()
    entrants = models.JSONField()
    game_id = models.UUIDField(null=True, blank=True, unique=True)
    winner = models.SmallIntegerField(null=True, blank=True)
    ranking = models.JSONField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["stage", "index"]
        constraints = [
            models.UniqueConstraint(
                fields=["tournament", "stage", "index"], name="tournament_table_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tournament_id} stage {self.stage} table {self.index}"


class TournamentEvent(models.Model):
    """What a registered person should see on ``/me/stream`` (``tournament`` frames)."""

    id = models.BigAutoField(primary_key=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="+")
    data = models.JSONField()
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["user", "id"], name="tournament_event_user")]

    def __str__(self) -> str:
        return f"#{self.id} for {self.user_id}"


class Week(models.Model):
    """A room's weekly leaderboard once its week is over: archived with its final standings
    and its rewards paid, in one transaction (``tournaments.seasons.close``)."""

    id = models.BigAutoField(primary_key=True)
    room = models.CharField(max_length=32, help_text='A room\'s key, "buy_in:stake".')
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    archived_at = models.DateTimeField()

    class Meta:
        ordering = ["-starts_at"]
        constraints = [
            models.UniqueConstraint(fields=["room", "starts_at"], name="season_week_once"),
        ]

    def __str__(self) -> str:
        return f"{self.room} from {self.starts_at:%Y-%m-%d}"


class WeekStanding(models.Model):
    """One person's final place in an archived week, and the reward it paid (0: none)."""

    id = models.BigAutoField(primary_key=True)
    week = models.ForeignKey(Week, on_delete=models.CASCADE, related_name="standings")
    rank = models.PositiveIntegerField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    points = models.IntegerField()
    matches = models.PositiveIntegerField()
    wins = models.PositiveIntegerField()
    rounds_won = models.PositiveIntegerField()
    chips = models.IntegerField()
    reward = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["rank"]
        constraints = [
            models.UniqueConstraint(fields=["week", "user"], name="season_standing_once"),
        ]

    def __str__(self) -> str:
        return f"{self.rank}. {self.user_id}"
