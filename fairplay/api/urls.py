from django.urls import path

from fairplay.api import views

urlpatterns = [
    path("games/<uuid:game_id>/reports", views.ReportApi.as_view(), name="game-reports"),
    path("me/sanctions", views.MySanctionsApi.as_view(), name="me-sanctions"),
    path("me/appeals", views.MyAppealsApi.as_view(), name="me-appeals"),
    path("staff/cases", views.StaffCaseListApi.as_view(), name="staff-cases"),
    path("staff/cases/<int:case_id>", views.StaffCaseApi.as_view(), name="staff-case"),
    path(
        "staff/cases/<int:case_id>/decision",
        views.StaffDecisionApi.as_view(),
        name="staff-case-decision",
    ),
    path("staff/suspensions", views.StaffSuspensionsApi.as_view(), name="staff-suspensions"),
    path(
        "staff/suspensions/<int:suspension_id>/lift",
        views.StaffSuspensionLiftApi.as_view(),
        name="staff-suspension-lift",
    ),
]
