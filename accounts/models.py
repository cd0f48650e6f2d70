"""Accounts: users (people and one account per bot level) and the projections of their matches.

``MatchRecord``, ``PlayerMatch`` and ``PlayerStats`` are read models built from the games' event
log by ``accounts.projections`` (at settlement, or all at once by ``manage.py
rebuild_projections``). They are never the truth: drop them and a rebuild gives the same rows.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractUser, UserManager
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower

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

    objects = CaseInsensitiveUserManager()

    class Meta(AbstractUser.Meta):
        constraints = [
            models.UniqueConstraint(Lower("username"), name="accounts_user_username_ci_unique"),
        ]

    def __str__(self) -> str:
        return self.username


def bot_username(level: str) -> str:
    return f"{BOT_USERNAME_PREFIX}{level}"


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
