"""The fair-play API's shapes: reports, the staff queue and a case's evidence, decisions,
suspensions, a player's sanctions and appeals."""

from __future__ import annotations

from rest_framework import serializers

from fairplay.models import Case, CaseEvent, Report
from fairplay.services import DECISIONS


class FairPlayReportInputSerializer(serializers.Serializer):
    seat = serializers.IntegerField(min_value=0, max_value=2, help_text="The seat reported.")
    reason = serializers.ChoiceField(choices=Report.Reason.choices)
    text = serializers.CharField(
        max_length=1000, required=False, allow_blank=True, default="", help_text="What you saw."
    )


class FairPlayReportSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    game = serializers.UUIDField(source="game_id")
    seat = serializers.IntegerField()
    reason = serializers.ChoiceField(choices=Report.Reason.choices)
    at = serializers.DateTimeField()


class CaseEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=Case.Kind.choices)
    status = serializers.ChoiceField(choices=Case.Status.choices)
    score = serializers.FloatField(help_text="The highest detection score (0: reports only).")
    hold = serializers.BooleanField(help_text="The accounts' winnings are held meanwhile.")
    accounts = serializers.ListField(
        child=serializers.CharField(), help_text="Usernames (chip dumping: the beneficiary first)."
    )
    reports = serializers.IntegerField(help_text="Players' reports in it.")
    opened_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class CaseAccountSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    suspended = serializers.BooleanField()
    suspended_until = serializers.DateTimeField(allow_null=True)
    held_chips = serializers.IntegerField(help_text="Winnings held now.")


class CaseEventSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    type = serializers.ChoiceField(choices=CaseEvent.Type.choices)
    at = serializers.DateTimeField()
    by = serializers.CharField(allow_null=True, help_text="Staff (a decision), a player.")
    reason = serializers.CharField(allow_blank=True)
    data = serializers.DictField(
        help_text="flag: score, threshold, evidence, game_ids; report: the report; decision: "
        "decision, accounts, suspensions, released or confiscated entries, compensated, lifted."
    )


class CaseReportSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    game = serializers.UUIDField()
    seat = serializers.IntegerField()
    reporter = serializers.CharField()
    reported = serializers.CharField()
    reason = serializers.ChoiceField(choices=Report.Reason.choices)
    text = serializers.CharField(allow_blank=True)
    at = serializers.DateTimeField()


class ChipFlowGameSerializer(serializers.Serializer):
    game = serializers.UUIDField()
    at = serializers.DateTimeField()
    paid = serializers.DictField(
        child=serializers.IntegerField(), help_text="Chips won (+) or lost (-) per username."
    )


class ChipFlowSerializer(serializers.Serializer):
    games = ChipFlowGameSerializer(many=True)
    totals = serializers.DictField(child=serializers.IntegerField())


class LinkSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["sign_in_identity", "address", "payment_source"])
    detail = serializers.CharField(
        help_text="The identity's method (device, apple, google), the address, or the store."
    )
    account = serializers.CharField(help_text="The case's account.")
    other = serializers.CharField(help_text="The account it is linked to.")
    first = serializers.DateTimeField(required=False, help_text="address: first time together.")
    last = serializers.DateTimeField(required=False, help_text="address: last time together.")


class CaseDetailSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=Case.Kind.choices)
    status = serializers.ChoiceField(choices=Case.Status.choices)
    score = serializers.FloatField()
    hold = serializers.BooleanField()
    opened_at = serializers.DateTimeField()
    accounts = CaseAccountSerializer(many=True)
    events = CaseEventSerializer(many=True)
    reports = CaseReportSerializer(many=True)
    chip_flow = ChipFlowSerializer()
    links = LinkSerializer(many=True)
    games = serializers.ListField(
        child=serializers.UUIDField(), help_text="Every game the evidence names."
    )
    exports = serializers.ListField(
        child=serializers.DictField(),
        help_text="The newest games' sealed exports, every card revealed (GET "
        "/games/{id}/export's document, checked by python -m games.verify).",
    )


class CompensationSerializer(serializers.Serializer):
    username = serializers.CharField()
    chips = serializers.IntegerField(min_value=1, max_value=10**9)


class DecisionInputSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=DECISIONS)
    reason = serializers.CharField(max_length=2000)
    until = serializers.DateTimeField(
        required=False, allow_null=True, default=None, help_text="suspend: null until lifted."
    )
    accounts = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        default=list,
        help_text="suspend: the usernames among the case's (default: all of them).",
    )
    confiscate = serializers.BooleanField(
        required=False, default=False, help_text="suspend: the held winnings go to the house."
    )
    compensate = CompensationSerializer(many=True, required=False, default=list)


class DecisionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    by = serializers.CharField(source="by.username")
    reason = serializers.CharField()
    data = serializers.DictField()


class SuspensionInputSerializer(serializers.Serializer):
    username = serializers.CharField()
    reason = serializers.CharField(max_length=2000)
    until = serializers.DateTimeField(allow_null=True, help_text="null: until lifted.")


class LiftInputSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)


class SuspensionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField(source="user.username")
    reason = serializers.CharField()
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField(allow_null=True)
    case = serializers.IntegerField(source="case_id", allow_null=True)


class LiftSerializer(serializers.Serializer):
    suspension = serializers.IntegerField(source="suspension_id")
    at = serializers.DateTimeField()
    reason = serializers.CharField()


class AppealInputSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=2000, help_text="Why the suspension is wrong.")


class AppealSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    suspension = serializers.IntegerField(source="suspension_id")
    text = serializers.CharField()
    at = serializers.DateTimeField()


class MyAppealSerializer(serializers.Serializer):
    text = serializers.CharField()
    at = serializers.DateTimeField()


class MySuspensionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    reason = serializers.CharField()
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField(allow_null=True, help_text="null: until lifted.")
    active = serializers.BooleanField()
    lifted_at = serializers.DateTimeField(allow_null=True)
    appeal = MyAppealSerializer(allow_null=True)


class WarningSerializer(serializers.Serializer):
    reason = serializers.CharField()
    at = serializers.DateTimeField()


class SanctionsSerializer(serializers.Serializer):
    suspended = serializers.BooleanField()
    suspensions = MySuspensionSerializer(many=True)
    warnings = WarningSerializer(many=True)
    held_chips = serializers.IntegerField(help_text="Winnings held while a case is open.")


class MyReportSerializer(serializers.Serializer):
    game = serializers.UUIDField()
    seat = serializers.IntegerField()
    reason = serializers.ChoiceField(choices=Report.Reason.choices)
    text = serializers.CharField(allow_blank=True)
    at = serializers.DateTimeField()


class SignInAddressSerializer(serializers.Serializer):
    address = serializers.CharField()
    at = serializers.DateTimeField()


class FairPlayExportSerializer(SanctionsSerializer):
    reports = MyReportSerializer(many=True, help_text="The reports I made.")
    sign_ins = SignInAddressSerializer(many=True, help_text="Where I signed in from.")
