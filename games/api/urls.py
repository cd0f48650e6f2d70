from django.urls import path

from games.api import (
    error_codes,  # noqa: F401  (the operations' error codes, for the schema)
    live_views,
    views,
)

# A move and a game's view first: most requests are one of them, and Django tries in order.
urlpatterns = [
    path("games/<uuid:game_id>", views.GameApi.as_view(), name="game"),
    path("games/<uuid:game_id>/commands", views.GameCommandsApi.as_view(), name="game-commands"),
    path("tables", views.TablesApi.as_view(), name="tables"),
    path("tables/options", views.TableOptionsApi.as_view(), name="table-options"),
    path("rooms", views.RoomsApi.as_view(), name="rooms"),
    path("tables/<uuid:game_id>", views.TableDetailApi.as_view(), name="table-detail"),
    path("tables/<uuid:game_id>/join", views.TableJoinApi.as_view(), name="table-join"),
    path("tables/<uuid:game_id>/leave", views.TableLeaveApi.as_view(), name="table-leave"),
    path("tables/<uuid:game_id>/start", views.TableStartApi.as_view(), name="table-start"),
    path(
        "tables/<uuid:game_id>/invitation",
        views.TableInvitationApi.as_view(),
        name="table-invitation",
    ),
    path("games/<uuid:game_id>/resign", views.GameResignApi.as_view(), name="game-resign"),
    path("games/<uuid:game_id>/rematch", views.GameRematchApi.as_view(), name="game-rematch"),
    path(
        "games/<uuid:game_id>/rematch/answer",
        views.GameRematchAnswerApi.as_view(),
        name="game-rematch-answer",
    ),
    # Async: answers at once, or with ?wait= when the next event is committed (long-poll).
    path("games/<uuid:game_id>/events", live_views.game_events_view(), name="game-events"),
    path("games/<uuid:game_id>/replay", views.GameReplayApi.as_view(), name="game-replay"),
    path("games/<uuid:game_id>/audit", views.GameAuditApi.as_view(), name="game-audit"),
    path("games/<uuid:game_id>/export", views.GameExportApi.as_view(), name="game-export"),
    path("games/<uuid:game_id>/seed", views.GameSeedApi.as_view(), name="game-seed"),
    path("keys", views.PublicKeysApi.as_view(), name="keys"),
    # Live (docs/live.md): Server-Sent Events, their tickets, the player's own tables.
    path(
        "games/<uuid:game_id>/stream",
        live_views.GameStreamApi.as_view(),
        name="game-stream",
    ),
    path(
        "games/<uuid:game_id>/stream-ticket",
        live_views.GameStreamTicketApi.as_view(),
        name="game-stream-ticket",
    ),
    path("me/games", live_views.MeGamesApi.as_view(), name="me-games"),
    path("me/stream", live_views.MeStreamApi.as_view(), name="me-stream"),
    path("me/stream-ticket", live_views.MeStreamTicketApi.as_view(), name="me-stream-ticket"),
]
