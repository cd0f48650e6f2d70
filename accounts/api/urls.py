from django.urls import path

from accounts.api.views import (
    LeaderboardApi,
    LogoutApi,
    MatchDetailApi,
    MeApi,
    PlayerMatchesApi,
    PlayerStatsApi,
    RegisterApi,
    TokenApi,
)

urlpatterns = [
    path("auth/register", RegisterApi.as_view(), name="auth-register"),
    path("auth/token", TokenApi.as_view(), name="auth-token"),
    path("auth/logout", LogoutApi.as_view(), name="auth-logout"),
    path("me", MeApi.as_view(), name="me"),
    path("players/<str:username>/matches", PlayerMatchesApi.as_view(), name="player-matches"),
    path("players/<str:username>/stats", PlayerStatsApi.as_view(), name="player-stats"),
    path("leaderboard", LeaderboardApi.as_view(), name="leaderboard"),
    path("matches/<uuid:game_id>", MatchDetailApi.as_view(), name="match-detail"),
]
