from django.urls import path

from matchmaking.api import error_codes  # noqa: F401  (the operations' error codes, for the schema)
from matchmaking.api.views import (
    MyTicketApi,
    TicketApi,
    TicketDeclineApi,
    TicketJoinApi,
    TicketListApi,
)

urlpatterns = [
    path("matchmaking/tickets", TicketListApi.as_view(), name="matchmaking-tickets"),
    path("matchmaking/tickets/<uuid:ticket_id>", TicketApi.as_view(), name="matchmaking-ticket"),
    path(
        "matchmaking/tickets/<uuid:ticket_id>/join",
        TicketJoinApi.as_view(),
        name="matchmaking-ticket-join",
    ),
    path(
        "matchmaking/tickets/<uuid:ticket_id>/decline",
        TicketDeclineApi.as_view(),
        name="matchmaking-ticket-decline",
    ),
    path("me/matchmaking", MyTicketApi.as_view(), name="me-matchmaking"),
]
