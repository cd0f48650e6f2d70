"""Fair play's records: cases and their history, players' reports, suspensions, their liftings
and appeals, and the addresses accounts signed in from.

Every record of a decision is append-only (triggers in migration 0002 reject UPDATE, DELETE and
TRUNCATE of ``CaseEvent``, ``Suspension``, ``SuspensionLift``, ``Appeal`` and ``Report``): a
decision is never edited, a later one is added with who and why. ``Case`` itself is the one
mutable row, a projection of its events (status, score, the accounts it names), kept so the
staff queue is one indexed read.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Case(models.Model):
    """A suspicion about some accounts, with its evidence and its history (``CaseEvent``)."""

    class Kind(models.TextChoices):
        COLLUSION = "collusion", "two seats playing as a team against the third"
        CHIP_DUMPING = "chip_dumping", "an account feeding chips to another"
        CHEATING = "cheating", "any other cheating a player reported"

    class Status(models.TextChoices):
        OPEN = "open", "waiting for staff"
        DECIDED = "decided", "staff decided it"
        REOPENED = "reopened", "an appeal reopened it"

    id = models.BigAutoField(primary_key=True)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    score = models.FloatField(
        default=0.0, help_text="The highest detection score behind it (0: reports only)."
    )
    hold = models.BooleanField(
        default=False, help_text="The accounts' winnings are held while it is open."
    )
    opened_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    accounts = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="CaseAccount", related_name="fairplay_cases"
    )

    class Meta:
        ordering = ["-score", "opened_at", "id"]
        indexes = [models.Index(fields=["status", "-score"], name="fairplay_case_queue")]

    def __str__(self) -> str:
        return f"case {self.id} ({self.kind}, {self.status})"

    @property
    def is_open(self) -> bool:
        return self.status != self.Status.DECIDED


#: The choices the API's schema names (``ENUM_NAME_OVERRIDES``).
CASE_KINDS = Case.Kind.choices
CASE_STATUSES = Case.Status.choices

#: The statuses of a case staff still have to decide.
OPEN_STATUSES = (Case.Status.OPEN, Case.Status.REOPENED)


class CaseAccount(models.Model):
    """An account a case names, in order (for chip dumping the beneficiary first)."""

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["case", "position"]
        constraints = [
            models.UniqueConstraint(fields=["case", "user"], name="fairplay_case_account_once"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} in case {self.case_id}"


class CaseEvent(models.Model):
    """One step of a case's history, append-only: opened, a flag's evidence, a report, a
    decision (who and why), an appeal that reopened it."""

    class Type(models.TextChoices):
        OPENED = "opened", "opened"
        FLAG = "flag", "detection's evidence added"
        REPORT = "report", "a player's report added"
        DECISION = "decision", "staff decided"
        REOPENED = "reopened", "an appeal reopened it"

    id = models.BigAutoField(primary_key=True)
    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="events")
    type = models.CharField(max_length=10, choices=Type.choices)
    at = models.DateTimeField()
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The staff member (a decision) or the player (a report, an appeal).",
    )
    reason = models.TextField(blank=True, default="")
    data = models.JSONField(default=dict, blank=True)
    key = models.CharField(
        max_length=100,
        null=True,
        blank=True,
        unique=True,
        help_text="What makes it once only (a flag's digest): the same flag twice adds nothing.",
    )

    class Meta:
        ordering = ["case", "id"]

    def __str__(self) -> str:
        return f"{self.type} of case {self.case_id}"


class Report(models.Model):
    """A player's report of a seat of a finished game they sat at: once per game and reporter."""

    #: What a player may report: a case's kinds.
    Reason = Case.Kind

    id = models.BigAutoField(primary_key=True)
    game_id = models.UUIDField()
    reporter = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    seat = models.PositiveSmallIntegerField()
    reported = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    reason = models.CharField(max_length=16, choices=Reason.choices)
    text = models.TextField(blank=True, default="")
    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="reports")
    at = models.DateTimeField()

    class Meta:
        ordering = ["-at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["game_id", "reporter"], name="fairplay_report_once"),
        ]

    def __str__(self) -> str:
        return f"report {self.id} of seat {self.seat} in {self.game_id}"


class Suspension(models.Model):
    """An account suspended from ``starts_at`` to ``ends_at`` (none: until lifted), by whom
    and why; a lifting is a ``SuspensionLift`` of its own."""

    id = models.BigAutoField(primary_key=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="suspensions"
    )
    reason = models.TextField()
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField(null=True, blank=True, help_text="Empty: until lifted.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    case = models.ForeignKey(
        Case, null=True, blank=True, on_delete=models.PROTECT, related_name="suspensions"
    )

    class Meta:
        ordering = ["-starts_at", "-id"]
        indexes = [models.Index(fields=["user", "-starts_at"], name="fairplay_suspension_user")]

    def __str__(self) -> str:
        return f"suspension {self.id} of {self.user_id}"


class SuspensionLift(models.Model):
    """A suspension lifted early, by whom and why (at most once)."""

    suspension = models.OneToOneField(Suspension, on_delete=models.PROTECT, related_name="lift")
    at = models.DateTimeField()
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    reason = models.TextField()

    def __str__(self) -> str:
        return f"lift of suspension {self.suspension_id}"


class Appeal(models.Model):
    """A suspended player's appeal, once per suspension; it reopens the suspension's case."""

    id = models.BigAutoField(primary_key=True)
    suspension = models.OneToOneField(Suspension, on_delete=models.PROTECT, related_name="appeal")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    text = models.TextField()
    at = models.DateTimeField()
    case = models.ForeignKey(
        Case, null=True, blank=True, on_delete=models.PROTECT, related_name="appeals"
    )

    def __str__(self) -> str:
        return f"appeal {self.id} of suspension {self.suspension_id}"


class SignInAddress(models.Model):
    """The client's address at a log-in or sign-up (``accounts.signals.session_started``): two
    accounts signing in from one address within a window are linked."""

    id = models.BigAutoField(primary_key=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    address = models.CharField(max_length=64)
    at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["address", "at"], name="fairplay_address_at"),
            models.Index(fields=["user", "at"], name="fairplay_address_user"),
        ]
        constraints = [models.CheckConstraint(condition=~Q(address=""), name="fairplay_address")]

    def __str__(self) -> str:
        return f"{self.user_id} from {self.address}"
