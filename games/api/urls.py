from django.urls import path

from games.api import views

urlpatterns = [
    path("tables", views.TablesApi.as_view(), name="tables"),
    path("tables/<uuid:game_id>", views.TableDetailApi.as_view(), name="table-detail"),
    path("tables/<uuid:game_id>/join", views.TableJoinApi.as_view(), name="table-join"),
    path("tables/<uuid:game_id>/leave", views.TableLeaveApi.as_view(), name="table-leave"),
    path("tables/<uuid:game_id>/start", views.TableStartApi.as_view(), name="table-start"),
    path("games/<uuid:game_id>", views.GameApi.as_view(), name="game"),
    path("games/<uuid:game_id>/commands", views.GameCommandsApi.as_view(), name="game-commands"),
    path("games/<uuid:game_id>/events", views.GameEventsApi.as_view(), name="game-events"),
    path("games/<uuid:game_id>/replay", views.GameReplayApi.as_view(), name="game-replay"),
    path("games/<uuid:game_id>/audit", views.GameAuditApi.as_view(), name="game-audit"),
]
