"""The event store's tables: games (a projection), their seats, events (the truth), idempotency.

``Event`` rows are append-only: a PostgreSQL trigger (migration 0002) rejects UPDATE, DELETE and
TRUNCATE, and each row carries a hash chained to the previous one, so an edit made around the
trigger is still visible (``games.store.verify_chain``). ``Game`` is a projection kept in step
with the events inside the append transaction: lists, the sweeper and the lock read it; it is
never the truth. Its ``snapshot`` column is the rules state at ``version`` so a move loads one
row instead of re-folding the stream; ``awaiting`` says what the table waits for, so the sweeper
finds stalled tables with an index instead of folding anything.

A finished match's result per player is ``accounts.PlayerMatch`` (the one record of it);
``Game.settled_at`` says it was written.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from games import projection

#: The most events spectators may be held behind the running match (``Game.spectator_delay``).
MAX_SPECTATOR_DELAY = 50


class Game(models.Model):
    """One table of three seats playing one match; the row every append locks."""

    class Status(models.TextChoices):
        WAITING = projection.STATUS_WAITING, "waiting for players"
        ACTIVE = projection.STATUS_ACTIVE, "being played"
        FINISHED = projection.STATUS_FINISHED, "match over"
        ABANDONED = projection.STATUS_ABANDONED, "abandoned before the start"
        ABORTED = projection.STATUS_ABORTED, "called off unfinished (no result)"

    class Awaiting(models.TextChoices):
        """What the table waits for; the server owes the work for every value but user/none."""

        NONE = projection.AWAITING_NONE, "nothing (waiting for players, or settled)"
        USER = projection.AWAITING_USER, "a user seat to act or answer"
        BOT = projection.AWAITING_BOT, "a bot seat to act or answer"
        DEAL = projection.AWAITING_DEAL, "the next deal"
        SETTLE = projection.AWAITING_SETTLE, "the settlement of the finished match"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.WAITING)
    rules = models.JSONField(help_text="RuleSet.to_dict() of the table's variant.")
    version = models.PositiveIntegerField(default=0, help_text="Number of events appended.")
    phase = models.CharField(max_length=16, default="dealing")
    round = models.PositiveIntegerField(default=0)
    current_seat = models.SmallIntegerField(null=True, blank=True)
    turn_deadline = models.DateTimeField(null=True, blank=True)
    winner_seat = models.SmallIntegerField(null=True, blank=True)
    awaiting = models.CharField(
        max_length=8, choices=Awaiting.choices, blank=True, default=Awaiting.NONE
    )
    # state_to_dict() of the state at ``version``: secret (hands, stock, salt); never serialize it.
    snapshot = models.JSONField(null=True, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    settled_at = models.DateTimeField(null=True, blank=True, help_text="Match result recorded.")
    # The stream's head: the hash of the event at ``version`` (32 bytes of SHA-256; empty
    # before the first event), so an append reads no event.
    last_hash = models.BinaryField(max_length=32, blank=True, default=b"", editable=False)
    # Casual tables (False) change no rating; rated ones need turn_seconds >= 10, or 0.
    rated = models.BooleanField(default=True)
    # Table stakes: each seat's chips moved into the table's escrow at the start (chips ledger);
    # 0: no chips at stake.
    buy_in = models.PositiveIntegerField(default=0)
    # When the server owes this table work (a bot move, a deal, a settlement or the turn
    # deadline): the scheduler's one indexed question. Null while only a person can move it on.
    due_at = models.DateTimeField(null=True, blank=True)

    class Visibility(models.TextChoices):
        """Who may watch the match besides its players (docs/live.md "Spectators")."""

        PRIVATE = "private", "players only"
        UNLISTED = "unlisted", "anyone with the link may watch"
        PUBLIC = "public", "anyone may watch, and the table is listed (tables?watch=1)"

    visibility = models.CharField(
        max_length=8, choices=Visibility.choices, default=Visibility.PRIVATE
    )
    # Spectators see the running match this many events behind (0: live), so nobody can relay
    # the table to a player; everything once the match is over.
    spectator_delay = models.PositiveSmallIntegerField(default=0)
    # Whether spectators may read and write the table chat's spectators' channel (the chat app).
    spectator_chat = models.BooleanField(default=False)

    class Meta:
        indexes = [
            models.Index(fields=["status", "-created_at"], name="games_game_status_created"),
            # The watch list: running public tables, newest first.
            models.Index(
                fields=["-created_at"],
                name="games_game_watchable",
                condition=Q(status="active", visibility="public"),
            ),
            # The sweeper's question: whose turn is past its deadline?
            models.Index(
                fields=["turn_deadline"],
                name="games_game_active_deadline",
                condition=Q(status="active"),
            ),
            # The scheduler's question: which tables are due for server work now?
            models.Index(
                fields=["due_at"],
                name="games_game_due",
                condition=Q(due_at__isnull=False),
            ),
            # The sweeper's other question: which tables owe server work, since when?
            models.Index(
                fields=["awaiting", "updated_at"],
                name="games_game_server_work",
                condition=Q(awaiting__in=["bot", "deal", "settle"]),
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(current_seat__isnull=True)
                | Q(current_seat__gte=0, current_seat__lte=2),
                name="games_game_current_seat_range",
            ),
            models.CheckConstraint(
                condition=Q(spectator_delay__lte=MAX_SPECTATOR_DELAY),
                name="games_game_spectator_delay_range",
            ),
        ]

    def __str__(self) -> str:
        return f"game {self.id} ({self.status}, v{self.version})"


class Seat(models.Model):
    """A place at a table: open (no user, no bot), a user's, or a bot's."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="seats")
    index = models.PositiveSmallIntegerField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="seats",
    )
    bot_level = models.CharField(max_length=16, blank=True, default="", help_text="Bot seats.")
    joined_at = models.DateTimeField(null=True, blank=True)

    class Invitation(models.TextChoices):
        NONE = "", "no invitation (the creator, or a player who joined)"
        PENDING = "pending", "invited, no answer yet"
        ACCEPTED = "accepted", "invited and accepted"

    # A seat given to a named user is an invitation until that user accepts.
    invitation = models.CharField(
        max_length=8, choices=Invitation.choices, blank=True, default=Invitation.NONE
    )
    invited_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["game", "index"]
        constraints = [
            models.UniqueConstraint(fields=["game", "index"], name="games_seat_unique_index"),
            models.UniqueConstraint(
                fields=["game", "user"],
                condition=Q(user__isnull=False),
                name="games_seat_one_per_user",
            ),
            models.CheckConstraint(condition=Q(index__lte=2), name="games_seat_index_range"),
            models.CheckConstraint(
                condition=Q(user__isnull=True) | Q(bot_level=""),
                name="games_seat_user_or_bot",
            ),
        ]

    def __str__(self) -> str:
        return f"seat {self.index} of {self.game_id} ({self.kind})"

    @property
    def kind(self) -> str:
        if self.bot_level:
            return "bot"
        return "user" if self.user_id else "open"


class Event(models.Model):
    """One fact of a game, append-only and hash-chained (see ``games.store``).

    ``hash`` is the 32 bytes of SHA-256 (shown as 64 hex digits); the previous event's hash,
    which the link covers, is not stored: it is the ``hash`` of ``seq - 1`` of the same game
    (``GENESIS_HASH`` for seq 1). A finished match's rows leave this table only into their
    ``EventArchive`` (``games.archive``), which the append-only trigger checks first.
    """

    id = models.BigAutoField(primary_key=True)
    # PROTECT: deleting a game would delete its events, which the trigger forbids anyway.
    # No index of its own: the unique (game, seq) index serves every per-game read.
    game = models.ForeignKey(Game, on_delete=models.PROTECT, related_name="events", db_index=False)
    seq = models.PositiveIntegerField(help_text="1, 2, 3 ... within the game.")
    type = models.CharField(max_length=32)
    data = models.JSONField(help_text="event_to_dict() of the event, with its 'type'.")
    actor = models.CharField(max_length=64, help_text='"user:<id>", "bot:<level>" or "system".')
    recorded_at = models.DateTimeField()
    hash = models.BinaryField(max_length=32)

    class Meta:
        ordering = ["game", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["game", "seq"], name="games_event_unique_seq"),
            models.CheckConstraint(condition=Q(seq__gte=1), name="games_event_seq_positive"),
        ]
        indexes = [
            # The rebuild of the projections walks the finished matches in end order; a partial
            # index keeps that off every other append.
            models.Index(
                fields=["id"], name="games_event_match_ended", condition=Q(type="match_ended")
            ),
        ]

    def __str__(self) -> str:
        return f"{self.game_id}#{self.seq} {self.type}"


class EventArchive(models.Model):
    """A finished match's events packed into one row (``games.archive``): written once, by the
    compaction, in the transaction that deletes the game's ``Event`` rows, and never changed
    (a trigger rejects UPDATE, DELETE and TRUNCATE, as for events).

    ``events`` is zlib-compressed JSON of every event (seq 1 to ``version``: id, actor,
    recorded_at as hashed, data as stored, the first bytes of its hash); the hashes themselves
    are recomputed from the content on every read, and the last one must equal ``last_hash``,
    the chain head the game row (and the seal) name, or the archive counts as broken.
    """

    game = models.OneToOneField(Game, on_delete=models.PROTECT, primary_key=True, related_name="+")
    version = models.PositiveIntegerField(help_text="Events packed: seq 1 to this.")
    last_hash = models.BinaryField(max_length=32, help_text="The chain head (SHA-256, 32 bytes).")
    # The ``match_ended`` event's id (null for an aborted match): the projections' rebuild walks
    # finished matches in that order, archived or not.
    ended_id = models.BigIntegerField(null=True, blank=True)
    events = models.BinaryField(help_text="zlib of the packed events (games.archive).")
    archived_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"archive of {self.game_id} (v{self.version})"


class IdempotencyRecord(models.Model):
    """The first answer to a command sent with an ``Idempotency-Key``, replayed on a retry.

    Written in the same transaction as the events it reports, so it exists if and only if that
    command was appended. ``response_body`` is the JSON text (not JSONB, which reorders keys) so
    a retry gets the very same bytes.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="+")
    fingerprint = models.CharField(max_length=64, help_text="sha256 of the canonical request.")
    response_status = models.PositiveSmallIntegerField()
    response_body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="games_idempotency_unique_key"),
        ]
        indexes = [models.Index(fields=["created_at"], name="games_idempotency_created")]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.key}"


class SealKey(models.Model):
    """A public key the server has sealed matches with (Ed25519), listed by ``GET /keys``.

    Recorded the first time the server uses it; a new key (a changed ``TONGITS_SEAL_KEY``)
    closes the others' ``valid_to`` and stays listed with them, so old seals still verify.
    """

    key_id = models.CharField(max_length=16, primary_key=True)
    algorithm = models.CharField(max_length=16, default="ed25519")
    public_key = models.CharField(max_length=64, unique=True, help_text="32 bytes, hex.")
    valid_from = models.DateTimeField()
    valid_to = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["valid_from", "key_id"]

    def __str__(self) -> str:
        return f"{self.algorithm} {self.key_id}"


class GameSeal(models.Model):
    """The signed seal of a finished match, stored beside its game (not an event): the
    signature over canonical JSON of {game, version, hash, rules_digest} (``games.seal``)."""

    game = models.OneToOneField(Game, on_delete=models.PROTECT, primary_key=True, related_name="+")
    version = models.PositiveIntegerField()
    hash = models.CharField(max_length=64)
    rules_digest = models.CharField(max_length=64)
    key = models.ForeignKey(SealKey, on_delete=models.PROTECT, related_name="+")
    signature = models.CharField(max_length=128, help_text="Ed25519, 64 bytes, hex.")
    signed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"seal of {self.game_id} at v{self.version}"


class Rematch(models.Model):
    """A proposal to play a finished match again (``games.rematch``): one per match, by one of
    its people; the others accept or decline. Every person accepting starts ``new_game`` (the
    same seats, rules and stakes, the next dealer); one decline closes it, and an open one
    lapses at ``expires_at`` (``TONGITS_REMATCH_SECONDS``). ``game.rematch`` and
    ``new_game.rematch_source`` link the two matches both ways."""

    class Status(models.TextChoices):
        OPEN = "open", "waiting for the people's answers"
        STARTED = "started", "everyone accepted: the next match started"
        DECLINED = "declined", "someone declined"
        LAPSED = "lapsed", "not everyone accepted in time"

    game = models.OneToOneField(
        Game, on_delete=models.CASCADE, primary_key=True, related_name="rematch"
    )
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    # {"<user id>": true (accepted) | false (declined)}; the proposer's true from the start.
    answers = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    expires_at = models.DateTimeField()
    new_game = models.OneToOneField(
        Game, null=True, blank=True, on_delete=models.SET_NULL, related_name="rematch_source"
    )

    class Meta:
        indexes = [models.Index(fields=["updated_at"], name="games_rematch_updated")]

    def __str__(self) -> str:
        return f"rematch of {self.game_id} ({self.status})"
