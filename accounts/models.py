"""Accounts: users (people and one account per bot level) and the projections of their matches.

``MatchRecord``, ``PlayerMatch`` and ``PlayerStats`` are read models built from the games' event
log by ``accounts.projections`` (at settlement, or all at once by ``manage.py
rebuild_projections``). They are never the truth: drop them and a rebuild gives the same rows.
"""

from __future__ import annotations

import uuid

from django.contrib.auth.models import AbstractUser, UserManager
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from knox.models import AbstractAuthToken

from accounts.profile import avatar_of
from games.players import DELETED_NAME

#: Bot accounts are named ``bot-<level>``; people may not register names with this prefix.
BOT_USERNAME_PREFIX = "bot-"


class CaseInsensitiveUserManager(UserManager):
    """Log-in looks usernames up without regard to case (they are unique that way too)."""

    def get_by_natural_key(self, username):
        return self.get(**{f"{self.model.USERNAME_FIELD}__iexact": username})


class User(AbstractUser):
    """The project's user model (AUTH_USER_MODEL): a person, or a bot level's account."""

    is_bot = models.BooleanField(
        default=False,
        help_text="The account of a bot level (bot-easy, ...): it plays, it never logs in.",
    )
    deleted_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the player deleted the account: the row is anonymised (placeholder "
        "name, no e-mail, no password) and kept only as the id their games' events name.",
    )
    # The profile others see (accounts.profile): empty fields show the defaults.
    display_name = models.CharField(
        max_length=24, blank=True, default="", help_text="Empty: the username is shown."
    )
    avatar = models.CharField(
        max_length=32, blank=True, default="", help_text="A key of the catalogue; empty: by id."
    )
    country = models.CharField(
        max_length=2, blank=True, default="", help_text="ISO 3166-1 alpha-2, or empty."
    )
    language = models.CharField(
        max_length=8,
        blank=True,
        default="",
        help_text="en, fil, es, vi, tr or ar; empty: each request's Accept-Language.",
    )
    show_presence = models.BooleanField(
        default=True, help_text="Friends see whether the player is online, playing or away."
    )
    # The account's current suspension, kept beside the user so that the token look-up (which
    # reads every column of the user) carries it at no cost; fairplay's Suspension rows are the
    # record, these two their projection (accounts.sanctions).
    suspended = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Suspended (fair play) until suspended_until, or until lifted.",
    )
    suspended_until = models.DateTimeField(
        null=True, blank=True, help_text="When the suspension ends; empty: until it is lifted."
    )

    objects = CaseInsensitiveUserManager()

    #: How games, feeds and histories show a deleted account.
    DELETED_NAME = DELETED_NAME

    class Meta(AbstractUser.Meta):
        constraints = [
            models.UniqueConstraint(Lower("username"), name="accounts_user_username_ci_unique"),
        ]

    def __str__(self) -> str:
        return self.username

    @property
    def public_name(self) -> str:
        """The name others see, resolved at read time (events store only the user id)."""
        return self.DELETED_NAME if self.deleted_at else self.username

    @property
    def shown_name(self) -> str:
        """The display name others see beside the username (the username until one is set)."""
        return self.DELETED_NAME if self.deleted_at else (self.display_name or self.username)

    @property
    def avatar_key(self) -> str | None:
        """The avatar others see: the one chosen, else one picked by id (None once deleted)."""
        return None if self.deleted_at else avatar_of(self)


#: A login that is no row: the account's own username and password.
PASSWORD_METHOD = "password"


def bot_username(level: str) -> str:
    return f"{BOT_USERNAME_PREFIX}{level}"


class Login(models.Model):
    """One way into an account besides its password: a device's key, or an Apple or Google
    identity. ``subject`` is what the way in is known by: the SHA-256 of a device key (never the
    key), or the provider's ``sub`` (never the e-mail, which a provider may reassign). One
    identity belongs to one account (a unique constraint); an account has at most one login of
    each method. Removing one deletes its row, so the identity may then sign up afresh."""

    class Method(models.TextChoices):
        DEVICE = "device", "a device's key (a guest account)"
        APPLE = "apple", "Sign in with Apple"
        GOOGLE = "google", "Sign in with Google"

    id = models.BigAutoField(primary_key=True)
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="logins")
    method = models.CharField(max_length=8, choices=Method.choices)
    subject = models.CharField(max_length=255)
    email = models.EmailField(
        blank=True, default="", help_text="Apple and Google: the address, if they verified it."
    )
    label = models.CharField(max_length=100, blank=True, default="", help_text="A device's name.")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["method", "subject"], name="accounts_login_identity"),
            models.UniqueConstraint(
                fields=["user", "method"], name="accounts_login_one_per_method"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.method} login of {self.user_id}"


class LoginClaim(models.Model):
    """Every identity an account ever held (append-only; gone only with the account), so that
    two accounts that took turns with one device key or provider identity are known to be
    linked: the matchmaker never seats them together, and fair play reads it."""

    id = models.BigAutoField(primary_key=True)
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="login_claims")
    method = models.CharField(max_length=8, choices=Login.Method.choices)
    subject = models.CharField(max_length=255)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["method", "subject"], name="accounts_claim_identity")]

    def __str__(self) -> str:
        return f"{self.method} claim of {self.user_id}"


#: Every way into an account, as GET /me/logins names them.
LOGIN_METHODS = (PASSWORD_METHOD, *Login.Method.values)


class Session(AbstractAuthToken):
    """One logged-in device: a django-rest-knox token (``KNOX_TOKEN_MODEL``), stored hashed.

    knox keeps only the token's SHA-512 ``digest`` and its first 15 characters (``token_key``,
    the look-up index); the key itself is shown once, at log-in. ``expiry`` slides: every use
    pushes it to now + ``TONGITS_SESSION_IDLE_DAYS`` (written at most once a minute).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    digest = models.CharField(max_length=128, unique=True)
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="sessions")
    device = models.CharField(max_length=100, blank=True, help_text="Named by the client.")
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]
        indexes = [models.Index(fields=["user", "-created"], name="accounts_session_user")]

    def __str__(self) -> str:
        return f"session {self.id} of {self.user_id}"


class MatchRecord(models.Model):
    """A finished match as history shows it: rules, times and every round's outcome."""

    game = models.OneToOneField(
        "games.Game", primary_key=True, on_delete=models.CASCADE, related_name="record"
    )
    rules = models.JSONField(help_text="The table's RuleSet options.")
    rules_preset = models.CharField(max_length=16, help_text="standard, house or custom.")
    started_at = models.DateTimeField(help_text="When game_started was recorded.")
    ended_at = models.DateTimeField(help_text="When match_ended was recorded.")
    end_event_id = models.BigIntegerField(
        unique=True, help_text="The match_ended event's id: ratings are applied in this order."
    )
    winner_seat = models.PositiveSmallIntegerField()
    round_wins = models.JSONField(help_text="Rounds won per seat.")
    placements = models.JSONField(help_text="Placement per seat (1 = the match winner).")
    rounds = models.JSONField(help_text="Per round: reason, winner, deadwood, burned, payouts.")
    seats = models.JSONField(help_text="The seats of game_started (users and bot levels).")
    rated = models.BooleanField(default=True, help_text="False: casual, no rating changed.")

    class Meta:
        ordering = ["-end_event_id"]

    def __str__(self) -> str:
        return f"match {self.game_id}"


class PlayerMatch(models.Model):
    """One player's record of one finished match: the row behind their match history."""

    class Result(models.TextChoices):
        WIN = "win", "won the match"
        LOSS = "loss", "lost the match"

    player = models.ForeignKey(User, on_delete=models.CASCADE, related_name="match_records")
    match = models.ForeignKey(MatchRecord, on_delete=models.CASCADE, related_name="players")
    seat = models.PositiveSmallIntegerField()
    opponent_1 = models.ForeignKey(
        User, null=True, on_delete=models.SET_NULL, related_name="+", help_text="Next seat."
    )
    opponent_2 = models.ForeignKey(
        User, null=True, on_delete=models.SET_NULL, related_name="+", help_text="Seat after."
    )
    # Copied from the match so history filters and sorts on one index.
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField()
    rules_preset = models.CharField(max_length=16)
    end_event_id = models.BigIntegerField()

    result = models.CharField(max_length=4, choices=Result.choices)
    placement = models.PositiveSmallIntegerField()
    rounds_played = models.PositiveSmallIntegerField()
    rounds_won = models.PositiveSmallIntegerField()
    tongits_wins = models.PositiveSmallIntegerField()
    draw_wins = models.PositiveSmallIntegerField()
    stock_out_wins = models.PositiveSmallIntegerField(help_text="Turn-cap rounds included.")
    tongits_losses = models.PositiveSmallIntegerField()
    draw_losses = models.PositiveSmallIntegerField()
    stock_out_losses = models.PositiveSmallIntegerField()
    rounds_without_winner = models.PositiveSmallIntegerField()
    times_burned = models.PositiveSmallIntegerField()
    draw_calls = models.PositiveSmallIntegerField()
    draw_calls_won = models.PositiveSmallIntegerField()
    challenges = models.PositiveSmallIntegerField()
    challenges_won = models.PositiveSmallIntegerField()
    time_outs = models.PositiveSmallIntegerField()
    chips = models.IntegerField(help_text="Net chips won (+) or lost (-) over the match.")
    deadwood_total = models.PositiveIntegerField(help_text="Sum of deadwood at each round's end.")
    resigned = models.BooleanField(default=False, help_text="The player resigned: placed last.")

    mu_before = models.FloatField()
    sigma_before = models.FloatField()
    mu = models.FloatField(help_text="openskill mu after this match.")
    sigma = models.FloatField(help_text="openskill sigma after this match.")
    ordinal = models.FloatField(help_text="mu - 3 sigma after this match.")

    class Meta:
        ordering = ["-ended_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["player", "match"], name="accounts_pm_player_match"),
            models.CheckConstraint(
                condition=Q(placement__gte=1, placement__lte=3), name="accounts_pm_placement"
            ),
        ]
        indexes = [
            # The history page: one player's matches, newest first.
            models.Index(fields=["player", "-ended_at", "-id"], name="accounts_pm_history"),
            # Re-rating a late settlement walks the matches that ended after it.
            models.Index(fields=["end_event_id"], name="accounts_pm_end_event"),
        ]

    def __str__(self) -> str:
        return f"{self.player_id} in {self.match_id}: #{self.placement}"


class PlayerStats(models.Model):
    """A player's totals over every projected match, and their current rating."""

    player = models.OneToOneField(
        User, primary_key=True, on_delete=models.CASCADE, related_name="stats"
    )
    matches = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    rounds_played = models.PositiveIntegerField(default=0)
    rounds_won = models.PositiveIntegerField(default=0)
    tongits_wins = models.PositiveIntegerField(default=0)
    draw_wins = models.PositiveIntegerField(default=0)
    stock_out_wins = models.PositiveIntegerField(default=0)
    tongits_losses = models.PositiveIntegerField(default=0)
    draw_losses = models.PositiveIntegerField(default=0)
    stock_out_losses = models.PositiveIntegerField(default=0)
    rounds_without_winner = models.PositiveIntegerField(default=0)
    times_burned = models.PositiveIntegerField(default=0)
    draw_calls = models.PositiveIntegerField(default=0)
    draw_calls_won = models.PositiveIntegerField(default=0)
    challenges = models.PositiveIntegerField(default=0)
    challenges_won = models.PositiveIntegerField(default=0)
    time_outs = models.PositiveIntegerField(default=0)
    chips = models.BigIntegerField(default=0, help_text="Net chips over all matches.")
    deadwood_total = models.BigIntegerField(default=0)
    mu = models.FloatField()
    sigma = models.FloatField()
    ordinal = models.FloatField(help_text="mu - 3 sigma: the leaderboard's order.")
    last_match_at = models.DateTimeField(null=True)

    class Meta:
        verbose_name_plural = "player stats"
        indexes = [
            models.Index(fields=["-ordinal", "player"], name="accounts_stats_leaderboard"),
        ]

    def __str__(self) -> str:
        return f"stats of {self.player_id}"
