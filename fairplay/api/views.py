"""Thin views of the fair-play API: players report a seat, see their sanctions and appeal;
staff work the queue of cases, decide them, suspend and lift. Services write
(``fairplay.services``), selectors read."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api_errors import error_responses
from fairplay import selectors, services
from fairplay.api import error_codes  # noqa: F401  (the operations' error codes, for the schema)
from fairplay.api.serializers import (
    AppealInputSerializer,
    AppealSerializer,
    CaseDetailSerializer,
    CaseEntrySerializer,
    DecisionInputSerializer,
    DecisionSerializer,
    FairPlayReportInputSerializer,
    FairPlayReportSerializer,
    LiftInputSerializer,
    LiftSerializer,
    SanctionsSerializer,
    SuspensionInputSerializer,
    SuspensionSerializer,
)
from fairplay.errors import CaseNotFound, SuspensionNotFound
from ops.throttling import CommandThrottle

TAGS = ["fair play"]
STAFF_TAGS = ["fair play (staff)"]


#: The largest id a row can have (PostgreSQL's bigint): a larger one in a path names nothing.
MAX_ID = 2**63 - 1


class ReportThrottle(CommandThrottle):
    """Reports per user (``TONGITS_RATE_REPORTS``): each may open a case staff must read."""

    scope = "reports"


class ReportApi(APIView):
    throttle_classes = [ReportThrottle]

    @extend_schema(
        operation_id="games_report",
        summary="Report a seat of a finished game you played (collusion, chip dumping, cheating)",
        description="Once per game: the report joins the open case of that kind naming that "
        "account, or opens one for staff. Only a seated player of a finished game, never their "
        "own seat, and only a person's seat.",
        tags=TAGS,
        request=FairPlayReportInputSerializer,
        responses={
            201: FairPlayReportSerializer,
            **error_responses(400, 401, 403, 404, 409, 415, 429),
        },
    )
    def post(self, request: Request, game_id) -> Response:
        data = FairPlayReportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        report = services.report_create(
            game_id=game_id, reporter=request.user, **data.validated_data
        )
        return Response(FairPlayReportSerializer(report).data, status=status.HTTP_201_CREATED)


class MySanctionsApi(APIView):
    allow_suspended = True  # a suspended player reads why, and until when

    @extend_schema(
        operation_id="me_sanctions",
        summary="My sanctions: suspensions (with their appeals), warnings, held winnings",
        tags=TAGS,
        responses={200: SanctionsSerializer, **error_responses(401)},
    )
    def get(self, request: Request) -> Response:
        return Response(SanctionsSerializer(selectors.my_sanctions(user=request.user)).data)


class MyAppealsApi(APIView):
    allow_suspended = True  # the appeal is what a suspended account may still do

    @extend_schema(
        operation_id="me_appeals_create",
        summary="Appeal my suspension (once per suspension): its case is reopened for staff",
        description="While suspended only (409 not_suspended otherwise). A suspended account's "
        "log-in answers 403 account_suspended with an appeal_token that opens this route.",
        tags=TAGS,
        request=AppealInputSerializer,
        responses={201: AppealSerializer, **error_responses(400, 401, 409, 415)},
    )
    def post(self, request: Request) -> Response:
        data = AppealInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        made = services.appeal(user=request.user, **data.validated_data)
        return Response(AppealSerializer(made).data, status=status.HTTP_201_CREATED)


class StaffCaseListApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="staff_cases",
        summary="Staff: the open cases, highest score first",
        tags=STAFF_TAGS,
        responses={200: CaseEntrySerializer(many=True), **error_responses(401, 403)},
    )
    def get(self, request: Request) -> Response:
        return Response(CaseEntrySerializer(selectors.open_cases(), many=True).data)


class StaffCaseApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="staff_case",
        summary="Staff: a case with its evidence",
        description="Its accounts, history, detection's scores and decisions, the reports, the "
        "chips between its accounts, their links to other accounts, and the sealed exports of "
        "its newest games with every card revealed.",
        tags=STAFF_TAGS,
        responses={200: CaseDetailSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request: Request, case_id: int) -> Response:
        if case_id > MAX_ID:
            raise CaseNotFound()
        found = selectors.case_detail(case_id=case_id, staff=request.user)
        return Response(CaseDetailSerializer(found).data)


class StaffDecisionApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="staff_case_decision",
        summary="Staff: decide a case (dismiss, warn, suspend, confiscate), with why",
        description="dismiss and warn give held winnings back; suspend suspends the case's "
        "accounts (or those named) until `until` (null: until lifted), confiscating held "
        "winnings with `confiscate`; confiscate takes them to the house. `compensate` pays "
        "victims from the house, once per case and victim. The decision is recorded for good.",
        tags=STAFF_TAGS,
        request=DecisionInputSerializer,
        responses={201: DecisionSerializer, **error_responses(400, 401, 403, 404, 409, 415)},
    )
    def post(self, request: Request, case_id: int) -> Response:
        if case_id > MAX_ID:
            raise CaseNotFound()
        data = DecisionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        event = services.decide(case_id=case_id, staff=request.user, **data.validated_data)
        return Response(DecisionSerializer(event).data, status=status.HTTP_201_CREATED)


class StaffSuspensionsApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="staff_suspensions_create",
        summary="Staff: suspend an account until a time (null: until lifted)",
        description="Its sessions end at once; its log-ins answer 403 account_suspended with "
        "the end and the appeal route.",
        tags=STAFF_TAGS,
        request=SuspensionInputSerializer,
        responses={201: SuspensionSerializer, **error_responses(400, 401, 403, 415)},
    )
    def post(self, request: Request) -> Response:
        data = SuspensionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        made = services.suspend_username(staff=request.user, **data.validated_data)
        return Response(SuspensionSerializer(made).data, status=status.HTTP_201_CREATED)


class StaffSuspensionLiftApi(APIView):
    permission_classes = [IsAdminUser]

    @extend_schema(
        operation_id="staff_suspension_lift",
        summary="Staff: lift a suspension now, with why",
        tags=STAFF_TAGS,
        request=LiftInputSerializer,
        responses={201: LiftSerializer, **error_responses(400, 401, 403, 404, 409, 415)},
    )
    def post(self, request: Request, suspension_id: int) -> Response:
        if suspension_id > MAX_ID:
            raise SuspensionNotFound()
        data = LiftInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        lifted = services.lift(
            suspension_id=suspension_id, staff=request.user, **data.validated_data
        )
        return Response(LiftSerializer(lifted).data, status=status.HTTP_201_CREATED)
