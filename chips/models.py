"""The chips ledger's tables: accounts, entries and their postings (the truth), balances (a
projection).

Chips are money-like, so they follow the event store's discipline in tables of their own:

- ``Entry`` and ``Posting`` rows are append-only (triggers in migration 0001 reject UPDATE,
  DELETE and TRUNCATE). An entry is one transfer: a cause, a unique idempotency ``key`` derived
  from the cause and what it is about (the game, the day, the staff action), and postings that
  sum to zero, which a deferred constraint trigger checks when the transaction commits.
- ``Balance`` is a projection of the postings, one row per wallet and per escrow, written in
  the same transaction as each entry; a CHECK keeps every balance at or above zero. The house
  has no row: it is the source of grants and the bots' bankroll, so its balance is whatever
  the others' are not (``-sum(balances)``), and no transfer waits on one hot row.

The ledger knows nothing of games or accounts beyond ids: an escrow names its table by UUID,
a wallet its user by foreign key.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Account(models.Model):
    """Where chips can be: a player's wallet, a table's escrow, or the house."""

    class Kind(models.TextChoices):
        WALLET = "wallet", "a player's wallet"
        ESCROW = "escrow", "a table's escrow (the buy-ins of a match in play)"
        HOUSE = "house", "the house: grants, bonuses and the bots' bankroll"
        DEBT = "debt", "what a player owes the house (a store refund of chips already spent)"
        HELD = "held", "a player's winnings held while fair play reviews them"

    id = models.BigAutoField(primary_key=True)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The wallet's owner.",
    )
    game_id = models.UUIDField(null=True, blank=True, help_text="The escrow's table.")
    created_at = models.DateTimeField(auto_now_add=True)
    # Settings of the owner, not ledger facts (a rebuild leaves them alone).
    listed = models.BooleanField(
        default=False, help_text="The owner shows their balance on the chips leaderboard."
    )
    closed_at = models.DateTimeField(
        null=True, blank=True, help_text="The owner deleted their account: chips go to the house."
    )
    holding = models.BooleanField(
        default=False,
        db_default=False,  # the ledger's own INSERTs name only the columns they set
        help_text="A held account: a hold is on, so the owner's match winnings are paid here.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user"], condition=Q(kind="wallet"), name="chips_account_one_wallet"
            ),
            models.UniqueConstraint(
                fields=["game_id"], condition=Q(kind="escrow"), name="chips_account_one_escrow"
            ),
            models.UniqueConstraint(
                fields=["kind"], condition=Q(kind="house"), name="chips_account_one_house"
            ),
            models.UniqueConstraint(
                fields=["user"], condition=Q(kind="debt"), name="chips_account_one_debt"
            ),
            models.UniqueConstraint(
                fields=["user"], condition=Q(kind="held"), name="chips_account_one_held"
            ),
            models.CheckConstraint(
                condition=(
                    Q(kind="wallet", user__isnull=False, game_id__isnull=True)
                    | Q(kind="debt", user__isnull=False, game_id__isnull=True)
                    | Q(kind="held", user__isnull=False, game_id__isnull=True)
                    | Q(kind="escrow", user__isnull=True, game_id__isnull=False)
                    | Q(kind="house", user__isnull=True, game_id__isnull=True)
                ),
                name="chips_account_owner",
            ),
        ]

    def __str__(self) -> str:
        if self.kind == self.Kind.WALLET:
            return f"wallet of {self.user_id}"
        if self.kind == self.Kind.ESCROW:
            return f"escrow of {self.game_id}"
        if self.kind == self.Kind.DEBT:
            return f"debt of {self.user_id}"
        if self.kind == self.Kind.HELD:
            return f"held winnings of {self.user_id}"
        return "the house"


class Balance(models.Model):
    """The projection: an account's chips after every entry so far (wallets, escrows, debts).

    A debt account's balance is at or below zero (``debt``: minus what its owner owes the
    house); every other balance is at or above zero. ``in_play`` (wallets) is what the owner
    has in the escrows of matches not yet settled; ``bonus_day`` the last UTC day they claimed
    the daily bonus. ``manage.py rebuild_balances`` recomputes them from the entries.
    """

    account = models.OneToOneField(
        Account, primary_key=True, on_delete=models.CASCADE, related_name="balance"
    )
    balance = models.BigIntegerField(default=0)
    in_play = models.BigIntegerField(default=0)
    bonus_day = models.DateField(null=True, blank=True)
    debt = models.BooleanField(
        default=False, help_text="A debt account: its balance is minus what its owner owes."
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(balance__gte=0) | Q(debt=True), name="chips_balance_not_negative"
            ),
            models.CheckConstraint(
                condition=Q(balance__lte=0) | Q(debt=False), name="chips_debt_not_positive"
            ),
            models.CheckConstraint(condition=Q(in_play__gte=0), name="chips_in_play_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.account_id}: {self.balance}"


class Entry(models.Model):
    """One transfer of chips, append-only: its postings sum to zero; its key is unique, so the
    same cause can never post twice."""

    class Cause(models.TextChoices):
        SIGNUP_GRANT = "signup_grant", "sign-up grant"
        DAILY_BONUS = "daily_bonus", "daily bonus"
        BUY_IN = "buy_in", "buy-ins of a match, into its escrow"
        PAYOUT = "payout", "a finished match's result, out of its escrow"
        REFUND = "refund", "an aborted match's buy-ins, back"
        ADJUSTMENT = "adjustment", "a staff correction or grant, with a reason"
        ACCOUNT_DELETED = "account_deleted", "a deleted account's chips, to the house"
        TOURNAMENT_ENTRY = "tournament_entry", "a tournament's buy-in (to its escrow) and fee"
        TOURNAMENT_REFUND = "tournament_refund", "a tournament's buy-in and fee, back"
        TOURNAMENT_PRIZE = "tournament_prize", "a tournament's prize, out of its escrow"
        SEASON_REWARD = "season_reward", "a weekly leaderboard's reward"
        PURCHASE = "purchase", "chips bought in an app store, from the house"
        STORE_REFUND = "store_refund", "a refunded store purchase's chips, back to the house"
        DEBT_REPAID = "debt_repaid", "a credit's chips, towards what the player owes"
        SERVICE_FEE = "service_fee", "a room's fee on the winners' winnings, to the house"
        HELD_WINNINGS = "held_winnings", "winnings (a match, a prize, a reward) held under review"
        HOLD_RELEASED = "hold_released", "held winnings back to the wallet: the review is over"
        CONFISCATION = "confiscation", "held winnings (or chips) taken to the house by a case"
        COMPENSATION = "compensation", "chips to a victim of a fair-play case, from the house"

    id = models.BigAutoField(primary_key=True)
    cause = models.CharField(max_length=24, choices=Cause.choices)
    key = models.CharField(
        max_length=200, unique=True, help_text="cause:reference (payout:<game>)."
    )
    game_id = models.UUIDField(null=True, blank=True, help_text="The table it concerns.")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The player it concerns (grants, bonuses, adjustments, deletions).",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="The staff member who made an adjustment.",
    )
    reason = models.TextField(blank=True, default="")
    data = models.JSONField(default=dict, blank=True, help_text="What the cause computed.")
    created_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "entries"
        indexes = [
            models.Index(
                fields=["game_id"], name="chips_entry_game", condition=Q(game_id__isnull=False)
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.id} {self.key}"


class Posting(models.Model):
    """One account's side of an entry: chips in (+) or out (-), and its balance after it."""

    id = models.BigAutoField(primary_key=True)
    entry = models.ForeignKey(Entry, on_delete=models.PROTECT, related_name="postings")
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="postings")
    amount = models.BigIntegerField()
    balance_after = models.BigIntegerField(
        null=True, blank=True, help_text="The account's balance after this entry (not the house)."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entry", "account"], name="chips_posting_one_each"),
            models.CheckConstraint(condition=~Q(amount=0), name="chips_posting_not_zero"),
        ]
        indexes = [
            # A wallet's statement, newest first (cursor pages).
            models.Index(fields=["account", "-id"], name="chips_posting_statement"),
        ]

    def __str__(self) -> str:
        return f"{self.entry_id}/{self.account_id}: {self.amount:+d}"
