"""Serializers of the chips API (validation in, plain JSON out; no model writes here)."""

from __future__ import annotations

from rest_framework import serializers

from chips.models import Entry
from core.api_fields import (
    QuerySerializer,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
)

CAUSES = Entry.Cause.values
MAX_ADJUSTMENT = 10**12


class DailyBonusSerializer(serializers.Serializer):
    amount = serializers.IntegerField(help_text="Chips the daily bonus gives (0: none here).")
    available = serializers.BooleanField(help_text="Whether POST /me/wallet/daily pays now.")
    next_at = serializers.DateTimeField(
        help_text="When it may be claimed: now if available, else the next UTC midnight."
    )


class WalletSerializer(serializers.Serializer):
    balance = serializers.IntegerField(help_text="All your chips: available plus in play.")
    available = serializers.IntegerField(
        help_text="In your wallet: what a table's buy-in can take."
    )
    in_play = serializers.IntegerField(
        help_text="In the escrows of your matches not settled yet (back to you, won or lost, "
        "when each settles)."
    )
    owed = serializers.IntegerField(
        help_text="Chips you owe the house from a refunded purchase, repaid first from every "
        "later credit; while above 0 you cannot buy in, queue or claim the daily bonus."
    )
    listed = serializers.BooleanField(
        help_text="Your balance shows on GET /leaderboard?order=chips (off by default)."
    )
    daily_bonus = DailyBonusSerializer()


class WalletUpdateSerializer(serializers.Serializer):
    listed = StrictBooleanField(
        help_text="true: show your balance on the chips leaderboard; false: keep it private."
    )


class StatementItemSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The ledger entry.")
    created_at = serializers.DateTimeField()
    cause = serializers.ChoiceField(choices=CAUSES)
    amount = serializers.IntegerField(help_text="Chips into (+) or out of (-) your wallet.")
    match_result = serializers.IntegerField(
        allow_null=True,
        help_text="payout and refund: what the match won (+) or lost (-) you, the buy-in "
        "returned aside (amount - buy-in); else null.",
    )
    balance_after = serializers.IntegerField(help_text="Your wallet's chips after this entry.")
    game_id = serializers.UUIDField(
        allow_null=True, help_text="The table (buy_in, payout, refund): its match and replay."
    )
    match = serializers.CharField(
        allow_null=True, help_text="GET this for the match's result and settlement (payouts)."
    )
    reason = serializers.CharField(help_text="An adjustment's reason (else empty).")


class StatementPageSerializer(serializers.Serializer):
    next = serializers.CharField(allow_null=True, help_text="The next (older) page, or null.")
    previous = serializers.CharField(allow_null=True)
    results = StatementItemSerializer(many=True)


class StatementQuerySerializer(QuerySerializer):
    cursor = serializers.CharField(required=False, help_text="From a page's next/previous.")
    page_size = serializers.IntegerField(required=False, min_value=1, max_value=100)


class DailyBonusOutputSerializer(serializers.Serializer):
    entry = StatementItemSerializer()
    wallet = WalletSerializer()


class AdjustmentInputSerializer(serializers.Serializer):
    amount = StrictIntegerField(
        min_value=-MAX_ADJUSTMENT,
        max_value=MAX_ADJUSTMENT,
        help_text="Chips into (+) or out of (-) the wallet, from or to the house; not 0.",
    )
    reason = StrictCharField(
        max_length=500, help_text="Why: kept with the entry for ever (support ticket, ...)."
    )


class AdjustmentOutputSerializer(serializers.Serializer):
    entry = serializers.IntegerField(help_text="The ledger entry.")
    username = serializers.CharField()
    amount = serializers.IntegerField()
    balance_after = serializers.IntegerField(help_text="The wallet's available chips after it.")
    replayed = serializers.BooleanField(
        help_text="true: this Idempotency-Key's first adjustment, posted earlier, not again."
    )


class StaffWalletSerializer(WalletSerializer):
    username = serializers.CharField()


class HouseDaySerializer(serializers.Serializer):
    day = serializers.DateField(help_text="A UTC day on which the house's chips moved.")
    causes = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="Per entry cause, the chips it moved into (+) or out of (-) the house that day.",
    )
    balance = serializers.IntegerField(help_text="The house's balance at the day's end.")


class HouseSerializer(serializers.Serializer):
    balance = serializers.IntegerField(
        help_text="The house's chips now: minus every chip it handed out, plus the fees, "
        "refunds and deleted accounts' chips it took in (negative is normal)."
    )
    days = HouseDaySerializer(many=True, help_text="The last days with entries, oldest first.")


class HouseQuerySerializer(QuerySerializer):
    days = serializers.IntegerField(
        required=False, min_value=1, max_value=366, help_text="How many days (30)."
    )


class SettlementEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    cause = serializers.ChoiceField(choices=CAUSES)
    created_at = serializers.DateTimeField()


class SettlementSerializer(serializers.Serializer):
    """A table's chips in the ledger: the buy-ins in escrow, then what the settlement paid."""

    buy_in = serializers.IntegerField(help_text="Chips each seat put in escrow at the start.")
    escrowed = serializers.IntegerField(help_text="What the escrow took in: 3 buy-ins.")
    settled = serializers.BooleanField(help_text="The escrow has been emptied (payout/refund).")
    kind = serializers.ChoiceField(
        choices=["payout", "refund"], allow_null=True, help_text="refund: an aborted match."
    )
    owed = serializers.ListField(
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="Per seat, what the rules said: the sum of the rounds' payouts.",
    )
    paid = serializers.ListField(
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="Per seat, what was paid (+) or taken (-) on top of the buy-in returned.",
    )
    capped = serializers.BooleanField(
        help_text="A loser owed more than their buy-in: the winners shared what it held."
    )
    fee_percent = serializers.IntegerField(
        help_text="The room's service fee: this percent of each winner's winnings went to the "
        "house (0: none)."
    )
    fees = serializers.ListField(
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="Per seat, the service fee paid out of its winnings (0 for a loser or a bot); "
        "null before the payout.",
    )
    net = serializers.ListField(
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="Per seat, what the match made it in the end: paid less the fee.",
    )
    entries = SettlementEntrySerializer(many=True, help_text="The ledger entries of the table.")
