from django.urls import path

from accounts.api import error_codes  # noqa: F401  (the operations' error codes, for the schema)
from accounts.api.views import (
    AccountExportApi,
    LeaderboardApi,
    LogoutAllApi,
    LogoutApi,
    MatchDetailApi,
    MeApi,
    PasswordChangeApi,
    PasswordResetApi,
    PasswordResetConfirmApi,
    PlayerMatchesApi,
    PlayerStatsApi,
    RegisterApi,
    SessionApi,
    SessionListApi,
    TokenApi,
)

urlpatterns = [
    path("auth/register", RegisterApi.as_view(), name="auth-register"),
    path("auth/token", TokenApi.as_view(), name="auth-token"),
    path("auth/logout", LogoutApi.as_view(), name="auth-logout"),
    path("auth/logout-all", LogoutAllApi.as_view(), name="auth-logout-all"),
    path("auth/password-reset", PasswordResetApi.as_view(), name="auth-password-reset"),
    path(
        "auth/password-reset/confirm",
        PasswordResetConfirmApi.as_view(),
        name="auth-password-reset-confirm",
    ),
    path("me", MeApi.as_view(), name="me"),
    path("me/sessions", SessionListApi.as_view(), name="me-sessions"),
    path("me/sessions/<uuid:session_id>", SessionApi.as_view(), name="me-session"),
    path("me/password", PasswordChangeApi.as_view(), name="me-password"),
    path("me/export", AccountExportApi.as_view(), name="me-export"),
    path("players/<str:username>/matches", PlayerMatchesApi.as_view(), name="player-matches"),
    path("players/<str:username>/stats", PlayerStatsApi.as_view(), name="player-stats"),
    path("leaderboard", LeaderboardApi.as_view(), name="leaderboard"),
    path("matches/<uuid:game_id>", MatchDetailApi.as_view(), name="match-detail"),
]
