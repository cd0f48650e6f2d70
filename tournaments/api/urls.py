from django.urls import path

from tournaments.api import error_codes  # noqa: F401  (the operations' error codes, for the schema)
from tournaments.api.views import (
    TournamentApi,
    TournamentCancelApi,
    TournamentExportApi,
    TournamentListApi,
    TournamentRegistrationApi,
    WeeklyLeaderboardApi,
)

urlpatterns = [
    path("leaderboards/weekly", WeeklyLeaderboardApi.as_view(), name="leaderboards-weekly"),
    path("tournaments", TournamentListApi.as_view(), name="tournaments"),
    path("tournaments/<uuid:tournament_id>", TournamentApi.as_view(), name="tournament"),
    path(
        "tournaments/<uuid:tournament_id>/registration",
        TournamentRegistrationApi.as_view(),
        name="tournament-registration",
    ),
    path(
        "tournaments/<uuid:tournament_id>/cancel",
        TournamentCancelApi.as_view(),
        name="tournament-cancel",
    ),
    path(
        "tournaments/<uuid:tournament_id>/export",
        TournamentExportApi.as_view(),
        name="tournament-export",
    ),
]
