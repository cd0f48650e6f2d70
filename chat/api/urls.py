from django.urls import path

from chat.api import views

urlpatterns = [
    path("games/<uuid:game_id>/chat", views.ChatApi.as_view(), name="game-chat"),
    path(
        "games/<uuid:game_id>/chat/<int:message_id>/report",
        views.ChatReportApi.as_view(),
        name="game-chat-report",
    ),
    path(
        "games/<uuid:game_id>/chat/<int:message_id>/hide",
        views.ChatHideApi.as_view(),
        name="game-chat-hide",
    ),
    path("me/mutes", views.MutesApi.as_view(), name="me-mutes"),
    path("me/mutes/<str:username>", views.MuteApi.as_view(), name="me-mute"),
]
