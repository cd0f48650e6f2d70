"""Live views: SSE streams, stream tickets, the long-poll of /events, and the player's own feed.

These are DRF views like the others (same authentication, errors, schema). The streams are
plain DRF views, served like any REST request in one hop of the web process's pool
(``runtime.wsgi_bridge``); the long-poll is ``async_api_view``, an async Django view that runs
the DRF view in ``games.live.db``'s pool between its waits. A stream's DRF view only checks the
request (401/403/404/409/400 as JSON, before any byte of the stream), takes one of the
account's stream slots (429 ``too_many_streams`` when it holds ``TONGITS_MAX_STREAMS_PER_USER``
open: ``ops.stream_slots``) and answers with a ``StreamingHttpResponse`` over an async
generator, which the event loop then feeds: an open stream holds no thread, no worker process
and no database connection while it waits, only its slot, freed when it ends.
"""

from __future__ import annotations

import asyncio
import math
import uuid
from collections.abc import Callable
from functools import partial
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponseBase, StreamingHttpResponse
from django.utils.translation import gettext_lazy
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, serializers
from rest_framework.authentication import BaseAuthentication
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from core import error_texts
from core.api_errors import ErrorSerializer, error_responses
from games import selectors
from games.api.serializers import EventFeedSerializer, EventsQuerySerializer
from games.api.views import GAMES
from games.errors import TooManyStreams
from games.live import db, feed, listener, streams
from games.live.models import StreamTicket
from ops import stream_slots

LIVE = ["live"]
MAX_WAIT_SECONDS = 30
STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


# ---------------------------------------------------------------- plumbing


def async_api_view(view_cls: type[APIView], **initkwargs: Any) -> Callable[..., Any]:
    """``view_cls.as_view()`` as an async view: the DRF view runs in the live pool.

    The returned function keeps ``cls``/``initkwargs`` so drf-spectacular documents it.
    """
    sync_view = view_cls.as_view(**initkwargs)

    async def view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        return await db.run(_rendered, sync_view, request, *args, **kwargs)

    view.cls = view_cls  # type: ignore[attr-defined]
    view.initkwargs = initkwargs  # type: ignore[attr-defined]
    view.view_class = view_cls  # type: ignore[attr-defined]
    view.csrf_exempt = True  # type: ignore[attr-defined]
    return view


def _rendered(view: Callable[..., Any], request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
    response = view(request, *args, **kwargs)
    if hasattr(response, "render") and not getattr(response, "is_rendered", True):
        response.render()  # here, not in the event loop
    return response


class JsonOnly(BaseContentNegotiation):
    """Errors are JSON whatever the client accepts (an EventSource sends text/event-stream)."""

    def select_parser(self, request: Request, parsers: list) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(self, request: Request, renderers: list, format_suffix: Any = None):
        return renderers[0], renderers[0].media_type


INVALID_TICKET = gettext_lazy(
    "Invalid stream ticket: unknown, already used, expired or for another stream."
)
error_texts.register("invalid_ticket", INVALID_TICKET)


class StreamTicketAuthentication(BaseAuthentication):
    """``?ticket=`` from POST .../stream-ticket: once only, within 60 s, for that stream only,
    while the session that asked for it lasts and the account is not suspended. The ticket is
    ``request.auth``: it names that session (``holder``)."""

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        ticket = request.query_params.get("ticket")
        if ticket is None:
            return None
        game_id = (getattr(request, "parser_context", None) or {}).get("kwargs", {}).get("game_id")
        used = feed.use_ticket(ticket, game_id) if ticket else None
        if used is None:
            raise exceptions.AuthenticationFailed(INVALID_TICKET, code="invalid_ticket")
        return used.user, used


def holder(request: Request) -> feed.Holder | None:
    """The stream's account and the session it was opened with: the header's session, or the
    one that asked for the ticket (``request.auth`` either way)."""
    if request.user.pk is None:
        return None
    auth = request.auth
    session_id = auth.session_id if isinstance(auth, StreamTicket) else getattr(auth, "pk", None)
    return feed.holder_of(request.user.pk, session_id)


def session_of(request: Request) -> Any:
    """The session a ticket is asked for with (None: a test's forced log-in)."""
    return getattr(request.auth, "pk", None)


class StreamTicketScheme(OpenApiAuthenticationExtension):
    target_class = "games.api.live_views.StreamTicketAuthentication"
    name = "streamTicket"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "apiKey",
            "in": "query",
            "name": "ticket",
            "description": "A one-time ticket from POST .../stream-ticket (valid 60 s).",
        }


def stream_slot(user: Any) -> stream_slots.Slot:
    """One of the user's stream slots, or 429 ``too_many_streams`` (before any byte)."""
    slot = stream_slots.take(user.pk)
    if slot is None:
        raise TooManyStreams(stream_slots.limit())
    return slot


def event_stream(slot: stream_slots.Slot, content: Any) -> StreamingHttpResponse:
    """The SSE response over ``content``, holding ``slot`` until the stream ends."""
    return StreamingHttpResponse(
        stream_slots.holding(slot, content),
        content_type="text/event-stream",
        headers=STREAM_HEADERS,
    )


SSE_RESPONSE = OpenApiResponse(
    response=OpenApiTypes.STR,
    description="Server-Sent Events (`text/event-stream`); see docs/live.md.",
)
TOO_MANY_STREAMS = OpenApiResponse(
    response=ErrorSerializer,
    description='Code "too_many_streams": your account already holds '
    "TONGITS_MAX_STREAMS_PER_USER streams open (game streams and /me/stream together; close one "
    'you no longer read), or "throttled" (the read rate); retry_after and the Retry-After header.',
)
LAST_EVENT_ID = OpenApiParameter(
    "Last-Event-ID",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=False,
    description="Resume after this seq (an EventSource sends it when it reconnects). Wins over "
    "`after`. 400 `invalid_last_event_id` if it is not a whole number or is past the version.",
)
AFTER = OpenApiParameter(
    "after",
    OpenApiTypes.INT,
    OpenApiParameter.QUERY,
    required=False,
    description="Start after this seq (default 0: the whole feed).",
)
TICKET = OpenApiParameter(
    "ticket",
    OpenApiTypes.STR,
    OpenApiParameter.QUERY,
    required=False,
    description="A one-time ticket from the matching stream-ticket endpoint, instead of the "
    "Authorization header (which a browser's EventSource cannot send).",
)


class StreamView(APIView):
    # The API's own token authentication (settings), then the one-time tickets of EventSource.
    authentication_classes = [
        *api_settings.DEFAULT_AUTHENTICATION_CLASSES,
        StreamTicketAuthentication,
    ]
    content_negotiation_class = JsonOnly


# ---------------------------------------------------------------- a game's stream


class GameStreamApi(StreamView):
    @extend_schema(
        operation_id="games_stream",
        summary="Follow a game live: Server-Sent Events of your feed and view",
        description=(
            "Each event as `id: <seq>`, `event: <type>`, `data: <the JSON /events gives you "
            "for that seq>`; after each batch `event: view` (your view: version, phase, turn, "
            "deadline, legal commands, `server_time`); a `:` comment every 15 s; `event: end` "
            "once the match is settled, then the stream closes. Resume with `Last-Event-ID` or "
            "`?after=N`. Errors come before the stream, as JSON; 429 `too_many_streams` when "
            "your account already holds TONGITS_MAX_STREAMS_PER_USER streams open (this and "
            "/me/stream together)."
        ),
        tags=GAMES,
        parameters=[LAST_EVENT_ID, AFTER, TICKET],
        responses={
            (200, "text/event-stream"): SSE_RESPONSE,
            **error_responses(400, 401, 403, 404, 409),
            429: TOO_MANY_STREAMS,
        },
    )
    def get(self, request: Request, game_id: uuid.UUID) -> StreamingHttpResponse:
        header = feed.parse_resume_point(request.headers.get("Last-Event-ID"))
        after = (
            header
            if header is not None
            else feed.parse_resume_point(request.query_params.get("after"))
        )
        opened = feed.open_game_stream(game_id=game_id, user=request.user, after=after or 0)
        stream = streams.game_stream(opened, holder(request))
        return event_stream(stream_slot(request.user), stream)


class TicketSerializer(serializers.Serializer):
    ticket = serializers.CharField(help_text="Use once, as ?ticket=, within 60 seconds.")
    expires_at = serializers.DateTimeField()
    expires_in = serializers.IntegerField(help_text="Seconds.")


class GameStreamTicketApi(APIView):
    @extend_schema(
        operation_id="games_stream_ticket",
        summary="A one-time ticket (60 s) for ?ticket= on this game's stream (browsers)",
        tags=GAMES,
        request=None,
        responses={201: TicketSerializer, **error_responses(401, 403, 404, 409)},
    )
    def post(self, request: Request, game_id: uuid.UUID) -> Response:
        return Response(
            feed.issue_ticket(user=request.user, game_id=game_id, session_id=session_of(request)),
            status=201,
        )


# ---------------------------------------------------------------- /events with ?wait=


class EventsWaitQuerySerializer(EventsQuerySerializer):
    wait = serializers.FloatField(
        min_value=0,
        max_value=MAX_WAIT_SECONDS,
        default=0,
        help_text="Long-poll: when nothing is newer than `after`, wait up to this many seconds "
        "for the next event (answers within 100 ms of it) before answering with no events.",
    )


class GameEventsLiveApi(APIView):
    @extend_schema(
        operation_id="games_events",
        summary="Events after seq N, redacted for you (seq and type always kept); long-poll",
        tags=GAMES,
        parameters=[EventsWaitQuerySerializer],
        responses={200: EventFeedSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def get(self, request: Request, game_id: uuid.UUID) -> Response:
        query = EventsWaitQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        options = dict(query.validated_data)
        with_game = options.pop("wait") > 0
        return Response(
            selectors.event_feed(game_id=game_id, user=request.user, with_game=with_game, **options)
        )


def _wait_seconds(value: str | None) -> float:
    try:
        seconds = float(value) if value else 0.0
    except ValueError:
        return 0.0  # the DRF view answers 400
    return seconds if math.isfinite(seconds) and 0 < seconds <= MAX_WAIT_SECONDS else 0.0


def game_events_view() -> Callable[..., Any]:
    """GET /games/{id}/events: at once, or (``wait``) when the next event is committed.

    Without ``wait`` the DRF view runs exactly as a sync view would (thread-sensitive, as Django
    runs every sync view); the long-poll reads in the live pool, so a waiting request holds
    neither a thread nor a database connection.
    """
    answer = async_api_view(GameEventsLiveApi)
    at_once = sync_to_async(partial(_rendered, GameEventsLiveApi.as_view()), thread_sensitive=True)

    async def view(request: HttpRequest, game_id: uuid.UUID) -> HttpResponseBase:
        wait = _wait_seconds(request.GET.get("wait"))
        if not wait:
            return await at_once(request, game_id=game_id)
        live = listener.get()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        async with live.game(str(game_id)) as hub:
            while True:
                changed = hub.changed  # before the read: a commit during it wakes us
                response = await answer(request, game_id=game_id)
                data = getattr(response, "data", None)
                if response.status_code != 200 or not isinstance(data, dict) or data["events"]:
                    return response
                remaining = deadline - loop.time()
                if live.closing or remaining <= 0:
                    return response
                try:
                    await asyncio.wait_for(changed.wait(), remaining)
                except TimeoutError:
                    return response

    view.cls = answer.cls  # type: ignore[attr-defined]
    view.initkwargs = answer.initkwargs  # type: ignore[attr-defined]
    view.view_class = answer.view_class  # type: ignore[attr-defined]
    view.csrf_exempt = True  # type: ignore[attr-defined]
    return view


# ---------------------------------------------------------------- the player's own feed


class MyTableSerializer(serializers.Serializer):
    game_id = serializers.UUIDField()
    status = serializers.CharField(help_text='"waiting" or "active".')
    seat = serializers.IntegerField()
    version = serializers.IntegerField()
    phase = serializers.CharField()
    round = serializers.IntegerField()
    is_my_turn = serializers.BooleanField()
    draw_answer = serializers.BooleanField(help_text="Your turn is to answer a Draw call.")
    turn_deadline = serializers.DateTimeField(allow_null=True)
    settled = serializers.BooleanField()
    invitation = serializers.ChoiceField(
        choices=["pending", "accepted"],
        allow_null=True,
        help_text='"pending": you are invited and have not answered (POST '
        "/tables/{id}/invitation); null: you took the seat yourself.",
    )
    invitation_expires_at = serializers.DateTimeField(
        allow_null=True, help_text="When a pending invitation lapses."
    )


class MyGamesSerializer(serializers.Serializer):
    games = MyTableSerializer(many=True, help_text="Your turn first, then by deadline.")
    server_time = serializers.DateTimeField()


class MeGamesApi(APIView):
    @extend_schema(
        operation_id="me_games",
        summary="Your waiting and active tables and invitations, your turn first",
        tags=LIVE,
        responses={200: MyGamesSerializer, **error_responses(401)},
    )
    def get(self, request: Request) -> Response:
        return Response(feed.my_games(request.user))


class MeStreamApi(StreamView):
    @extend_schema(
        operation_id="me_stream",
        summary="Your notices, live: seated, match started, your turn, match ended, settled",
        description=(
            "Server-Sent Events. First `event: games` (as GET /me/games); then, as they happen, "
            "`seated`, `table_changed` (a waiting table's seats changed), `match_started`, "
            "`your_turn` (game_id, version, turn_deadline, "
            "draw_answer), `match_ended`, `settled`, `unseated`, `table_closed`, each followed "
            "by a fresh `games`; a `:` comment every 15 s. 429 `too_many_streams` when your "
            "account already holds TONGITS_MAX_STREAMS_PER_USER streams open (game streams "
            "included)."
        ),
        tags=LIVE,
        parameters=[TICKET],
        responses={
            (200, "text/event-stream"): SSE_RESPONSE,
            **error_responses(401),
            429: TOO_MANY_STREAMS,
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        stream = streams.me_stream(request.user.pk, holder(request))
        return event_stream(stream_slot(request.user), stream)


class MeStreamTicketApi(APIView):
    @extend_schema(
        operation_id="me_stream_ticket",
        summary="A one-time ticket (60 s) for ?ticket= on /me/stream (browsers)",
        tags=LIVE,
        request=None,
        responses={201: TicketSerializer, **error_responses(401)},
    )
    def post(self, request: Request) -> Response:
        return Response(
            feed.issue_ticket(user=request.user, game_id=None, session_id=session_of(request)),
            status=201,
        )
