"""The detection's projections: each scored match's signals, and their sums per ordered pair.

``ScoredMatch`` rows are the truth of the projection (one per finished match, written once by
the scoring task); ``PairSignal`` rows are their sums, updated in the same transaction, and
``manage.py fairplay_signals --check`` compares both with a rebuild from the event log and the
ledger. ``RaisedFlag`` is no projection: it records which flags were raised, so the same
finding is not raised again.
"""

from __future__ import annotations

from django.db import models


class ScoredMatch(models.Model):
    """One finished match's signals (``scoring.MatchSignals.to_json``) and what scoring cost."""

    game_id = models.UUIDField(primary_key=True)
    accounts = models.JSONField(help_text="The account of each seat (null: a bot).")
    signals = models.JSONField(help_text="Per ordered pair its counts; the decisions that hit.")
    cpu_ms = models.FloatField(default=0.0, help_text="CPU of this worker thread to score it.")
    scored_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"scored {self.game_id}"


class PairSignal(models.Model):
    """One ordered pair's record (account ``a`` toward account ``b``): ``scoring.Counts``."""

    a = models.BigIntegerField(help_text="The account whose decisions and chips these are.")
    b = models.BigIntegerField(help_text="The opponent they concern.")
    games = models.IntegerField(default=0)
    rounds = models.IntegerField(default=0)
    chips = models.BigIntegerField(default=0, help_text="Chips a paid b, net.")
    flow_milli = models.BigIntegerField(default=0)
    flow_sq = models.BigIntegerField(default=0)
    rounds_off = models.IntegerField(default=0)
    matches_off = models.IntegerField(default=0)
    feed_n = models.IntegerField(default=0)
    feed_k = models.IntegerField(default=0)
    spare_n = models.IntegerField(default=0)
    spare_k = models.IntegerField(default=0)
    answer_n = models.IntegerField(default=0)
    answer_k = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["a", "b"], name="detection_pair_once"),
        ]

    def __str__(self) -> str:
        return f"{self.a} -> {self.b}"


class RaisedFlag(models.Model):
    """A flag once raised: its kind, accounts and score, so the same one is not raised again
    until its score has doubled (new evidence)."""

    kind = models.CharField(max_length=16)
    accounts = models.CharField(max_length=64, help_text="The flag's accounts, comma-separated.")
    score = models.FloatField()
    games = models.IntegerField()
    raised_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["kind", "accounts"], name="detection_flag_once"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.accounts}"
