"""Thin views: validate input, call a service or selector, serialize the output."""

import uuid

from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, status
from rest_framework.pagination import CursorPagination
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import login_throttle, logins, profile, selectors, services
from accounts.api.serializers import (
    AcceptedSerializer,
    AccountDeleteInputSerializer,
    AccountExportSerializer,
    AvatarSerializer,
    DeviceSignInInputSerializer,
    LeaderboardPageSerializer,
    LeaderboardParamsSerializer,
    LoginAddedSerializer,
    LoginAddInputSerializer,
    LoginEntrySerializer,
    MatchDetailSerializer,
    PasswordChangeInputSerializer,
    PasswordResetConfirmInputSerializer,
    PasswordResetInputSerializer,
    PlayerMatchesParamsSerializer,
    PlayerMatchesQuerySerializer,
    PlayerMatchPageSerializer,
    PlayerStatsSerializer,
    ProfileInputSerializer,
    ProviderSignInInputSerializer,
    RegisterInputSerializer,
    RegisterOutputSerializer,
    SessionSerializer,
    TokenInputSerializer,
    TokenOutputSerializer,
    UserOutputSerializer,
)
from accounts.models import LOGIN_METHODS, Session
from core.api_errors import error_responses
from core.replica import reads_from_replica
from ops.throttling import (
    PasswordResetThrottle,
    RegisterThrottle,
    SignInThrottle,
    client_address,
)
from runtime import i18n

TAGS = ["accounts"]
#: No authentication on log-in, register and public reads: a stale or revoked token in the
#: Authorization header is ignored there, never a 401.
PUBLIC: list = []
PLAYERS = ["players"]


def _login_body(session: Session, key: str) -> dict:
    """The token (as ever) and the session it opens (added)."""
    return {"token": key, "session": selectors.session_entry(session, current=True)}


class RegisterApi(APIView):
    authentication_classes = PUBLIC
    permission_classes = [AllowAny]
    throttle_classes = [RegisterThrottle]

    @extend_schema(
        operation_id="auth_register",
        summary="Create an account and its first session (API token)",
        tags=TAGS,
        request=RegisterInputSerializer,
        responses={201: RegisterOutputSerializer, **error_responses(400, 415)},
    )
    def post(self, request: Request) -> Response:
        data = RegisterInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user, session, key = services.user_register(
            **data.validated_data, address=client_address(request)
        )
        body = RegisterOutputSerializer({"user": user, **_login_body(session, key)}).data
        return Response(body, status=status.HTTP_201_CREATED)


def _sign_up_limit(request: Request, view: APIView):
    """A new account made by a sign-in counts as a registration (``RegisterThrottle``)."""

    def check() -> None:
        throttle = RegisterThrottle()
        if not throttle.allow_request(request, view):
            raise exceptions.Throttled(throttle.wait())

    return check


def _signed_in(done: logins.SignIn) -> Response:
    """201 with the new account, or 200 with a new session of the known one: registration's
    body either way."""
    body = RegisterOutputSerializer({"user": done.user, **_login_body(done.session, done.key)})
    code = status.HTTP_201_CREATED if done.created else status.HTTP_200_OK
    return Response(body.data, status=code)


SIGN_IN_ANSWERS = {
    200: RegisterOutputSerializer,
    201: RegisterOutputSerializer,
}


class DeviceSignInApi(APIView):
    authentication_classes = PUBLIC
    permission_classes = [AllowAny]
    throttle_classes = [SignInThrottle]

    @extend_schema(
        operation_id="auth_device",
        summary="Sign in as a guest with this device's key (the account is made on first use)",
        description="The first call with a key makes an account (a generated guest-... "
        "username, the sign-up chips, no password) and answers 201 as registration does; the "
        "same key again answers 200 with a new session of that account. The key is the app's "
        "random secret: whoever holds it holds the account, so keep it in the keychain. POST "
        "/me/logins links Apple, Google or a password to keep the account past the device.",
        tags=TAGS,
        request=DeviceSignInInputSerializer,
        responses={**SIGN_IN_ANSWERS, **error_responses(400, 401, 415)},
    )
    def post(self, request: Request) -> Response:
        data = DeviceSignInInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        done = logins.device_sign_in(
            **data.validated_data,
            address=client_address(request),
            before_create=_sign_up_limit(request, self),
        )
        return _signed_in(done)


class _ProviderSignInApi(APIView):
    authentication_classes = PUBLIC
    permission_classes = [AllowAny]
    throttle_classes = [SignInThrottle]
    provider = ""

    def post(self, request: Request) -> Response:
        data = ProviderSignInInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        done = logins.provider_sign_in(
            provider=self.provider,
            **data.validated_data,
            address=client_address(request),
            before_create=_sign_up_limit(request, self),
        )
        return _signed_in(done)


def _provider_schema(name: str, label: str) -> dict:
    return {
        "operation_id": f"auth_{name}",
        "summary": f"Sign in with {label}: the ID token's account (made on first use)",
        "description": f"The ID token from {label}'s SDK is checked against {label}'s published "
        "keys: the signature (its key's algorithm only), iss, aud (one of the configured client "
        "ids), exp and iat, and nonce when given. The account is the one of the token's sub "
        "(never found by e-mail): 201 and a new account the first time, 200 after. Any failed "
        "check: 401 invalid_id_token naming it, and nothing is written.",
        "tags": TAGS,
        "request": ProviderSignInInputSerializer,
        "responses": {**SIGN_IN_ANSWERS, **error_responses(400, 401, 409, 415, 503)},
    }


class AppleSignInApi(_ProviderSignInApi):
    provider = "apple"

    @extend_schema(**_provider_schema("apple", "Apple"))
    def post(self, request: Request) -> Response:
        return super().post(request)


class GoogleSignInApi(_ProviderSignInApi):
    provider = "google"

    @extend_schema(**_provider_schema("google", "Google"))
    def post(self, request: Request) -> Response:
        return super().post(request)


class LoginListApi(APIView):
    @extend_schema(
        operation_id="me_logins",
        summary="The ways into my account (never a secret)",
        tags=TAGS,
        responses={200: LoginEntrySerializer(many=True), **error_responses(401)},
    )
    def get(self, request: Request) -> Response:
        return Response(
            LoginEntrySerializer(selectors.login_list(user=request.user), many=True).data
        )

    @extend_schema(
        operation_id="me_logins_add",
        summary="Add a way into my account: Apple, Google, a device's key, or a password",
        description='{"method": "google", "id_token": ...} (or "apple", with an optional '
        'nonce), {"method": "device", "device_key": ...}, or {"method": "password", '
        '"username": ..., "password": ...}, which gives an account without one (a guest\'s) '
        "a username and password. The account keeps its wallet, history, ratings and "
        "sessions. 201 when added, 200 when it was this account's already; 409 login_in_use "
        "when it is another account's (it is never moved), login_exists when the account has "
        "another of that method.",
        tags=TAGS,
        request=LoginAddInputSerializer,
        responses={
            200: LoginAddedSerializer,
            201: LoginAddedSerializer,
            **error_responses(400, 401, 409, 415, 503),
        },
    )
    def post(self, request: Request) -> Response:
        data = LoginAddInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        entries, added = logins.login_add(user=request.user, **data.validated_data)
        entry = next(e for e in entries if e["method"] == data.validated_data["method"])
        body = {"login": entry, "logins": entries}
        code = status.HTTP_201_CREATED if added else status.HTTP_200_OK
        return Response(LoginAddedSerializer(body).data, status=code)


class LoginApi(APIView):
    @extend_schema(
        operation_id="me_logins_remove",
        summary="Remove a way into my account (never the last one)",
        tags=TAGS,
        responses={204: None, **error_responses(401, 404, 409)},
    )
    def delete(self, request: Request, method: str) -> Response:
        if method not in LOGIN_METHODS:
            raise exceptions.NotFound()
        logins.login_remove(user=request.user, method=method)
        return Response(status=status.HTTP_204_NO_CONTENT)


class AvatarListApi(APIView):
    authentication_classes = PUBLIC
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="avatars",
        summary="The avatars a profile may choose, each with its picture's URL",
        tags=PLAYERS,
        responses={200: AvatarSerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        items = [{"key": key, "url": profile.avatar_url(key)} for key in profile.AVATARS]
        return Response(AvatarSerializer(items, many=True).data)


class TokenApi(APIView):
    authentication_classes = PUBLIC
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="auth_token",
        summary="Log in: a new session (API token) for this device",
        description="Each log-in opens a session of its own, named by the optional device; "
        "it expires after TONGITS_SESSION_IDLE_DAYS (30) without use.",
        tags=TAGS,
        request=TokenInputSerializer,
        responses={200: TokenOutputSerializer, **error_responses(400, 401, 415)},
    )
    def post(self, request: Request) -> Response:
        data = TokenInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        # Blocked attempts are refused before the password is hashed (accounts.login_throttle).
        with login_throttle.guard(request, data.validated_data["username"]):
            session, key = services.token_obtain(
                **data.validated_data, address=client_address(request)
            )
        return Response(TokenOutputSerializer(_login_body(session, key)).data)


class LogoutApi(APIView):
    allow_suspended = True  # a suspended account may still log out and take its data

    @extend_schema(
        operation_id="auth_logout",
        summary="Log out this device: end the session of this request's token",
        tags=TAGS,
        request=None,
        responses={204: None, **error_responses(401)},
    )
    def post(self, request: Request) -> Response:
        services.session_end(user=request.user, session_id=request.auth.pk)
        return Response(status=status.HTTP_204_NO_CONTENT)


class LogoutAllApi(APIView):
    allow_suspended = True  # a suspended account may still log out and take its data

    @extend_schema(
        operation_id="auth_logout_all",
        summary="Log out everywhere: end every session of the user, this one too",
        tags=TAGS,
        request=None,
        responses={204: None, **error_responses(401)},
    )
    def post(self, request: Request) -> Response:
        services.sessions_end_all(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class SessionListApi(APIView):
    @extend_schema(
        operation_id="me_sessions",
        summary="My sessions (one per log-in), newest first",
        tags=TAGS,
        responses={200: SessionSerializer(many=True), **error_responses(401)},
    )
    def get(self, request: Request) -> Response:
        sessions = selectors.session_list(user=request.user, current=request.auth)
        return Response(SessionSerializer(sessions, many=True).data)


class SessionApi(APIView):
    @extend_schema(
        operation_id="me_sessions_end",
        summary="End one of my sessions (log another device out)",
        tags=TAGS,
        responses={204: None, **error_responses(401, 404)},
    )
    def delete(self, request: Request, session_id: uuid.UUID) -> Response:
        services.session_end(user=request.user, session_id=session_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class PasswordChangeApi(APIView):
    @extend_schema(
        operation_id="me_password",
        summary="Change my password; every other session ends",
        tags=TAGS,
        request=PasswordChangeInputSerializer,
        responses={204: None, **error_responses(400, 401, 415)},
    )
    def post(self, request: Request) -> Response:
        data = PasswordChangeInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.password_change(user=request.user, current=request.auth, **data.validated_data)
        return Response(status=status.HTTP_204_NO_CONTENT)


class PasswordResetApi(APIView):
    permission_classes = [AllowAny]
    authentication_classes = PUBLIC
    throttle_classes = [PasswordResetThrottle]

    @extend_schema(
        operation_id="auth_password_reset",
        summary="Mail a password-reset link to this address",
        description="Answers 202 whether or not an account has the address (and in about the "
        "same time): the mail, if any, is sent by the worker.",
        tags=TAGS,
        request=PasswordResetInputSerializer,
        responses={202: AcceptedSerializer, **error_responses(400, 415)},
    )
    def post(self, request: Request) -> Response:
        data = PasswordResetInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.password_reset_request(**data.validated_data)
        body = {"detail": "If an account has this address, a reset link is on its way."}
        return Response(AcceptedSerializer(body).data, status=status.HTTP_202_ACCEPTED)


class PasswordResetConfirmApi(APIView):
    permission_classes = [AllowAny]
    authentication_classes = PUBLIC

    @extend_schema(
        operation_id="auth_password_reset_confirm",
        summary="Set a new password with the uid and token of a reset mail",
        description="The token works once and for PASSWORD_RESET_TIMEOUT; every session ends.",
        tags=TAGS,
        request=PasswordResetConfirmInputSerializer,
        responses={204: None, **error_responses(400, 415)},
    )
    def post(self, request: Request) -> Response:
        data = PasswordResetConfirmInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.password_reset_confirm(**data.validated_data)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeApi(APIView):
    @extend_schema(
        operation_id="me",
        summary="The authenticated user",
        tags=TAGS,
        responses={200: UserOutputSerializer, **error_responses(401)},
    )
    def get(self, request: Request) -> Response:
        return Response(UserOutputSerializer(request.user).data)

    @extend_schema(
        operation_id="me_update",
        summary="Change my profile: display name, avatar, country, language, presence",
        description="Only the fields sent change; null or empty resets one. Others see the "
        "display name and avatar beside the username at tables, in chat, on the leaderboard "
        "and in match history. The language is the one the server answers and notifies the "
        "account in. `show_presence: false` hides from friends whether you are online or "
        "playing and when you were last seen.",
        tags=TAGS,
        request=ProfileInputSerializer,
        responses={200: UserOutputSerializer, **error_responses(400, 401, 415)},
    )
    def patch(self, request: Request) -> Response:
        data = ProfileInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = logins.profile_update(user=request.user, **data.validated_data)
        i18n.use_account(user)  # this answer already speaks the language chosen
        return Response(UserOutputSerializer(user).data)

    @extend_schema(
        operation_id="me_delete",
        summary="Delete my account (with my password): nothing personal remains",
        description="Confirmed with the password, or for an account without one (a guest's, an "
        'Apple or Google one\'s) with `{"confirm": "<username>"}`. Sessions end; name, e-mail, '
        "password, profile and every way in (logins) are erased; history and stats "
        "leave the public reads. Finished games keep their events (hash chains intact) and show "
        '"deleted player"; a running match counts them as resigned. The wallet\'s chips go to '
        "the house (an `account_deleted` entry), and so do chips a running match pays the seat "
        "later.",
        tags=TAGS,
        request=AccountDeleteInputSerializer,
        responses={204: None, **error_responses(400, 401, 415)},
    )
    def delete(self, request: Request) -> Response:
        data = AccountDeleteInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.account_delete(user=request.user, **data.validated_data)
        return Response(status=status.HTTP_204_NO_CONTENT)


class AccountExportApi(APIView):
    allow_suspended = True  # a suspended account may still log out and take its data

    @extend_schema(
        operation_id="me_export",
        summary="All my data as one JSON document",
        description="Account, sessions, my wallet and every entry of it, match history, "
        "stats, and every game I sat at as my seat's feed (other seats' hidden cards stay "
        "hidden).",
        tags=TAGS,
        responses={200: AccountExportSerializer, **error_responses(401)},
    )
    def get(self, request: Request) -> Response:
        export = selectors.account_export(user=request.user, current=request.auth)
        return Response(AccountExportSerializer(export).data)


# ---------------------------------------------------------------- players (public)


class HistoryPagination(CursorPagination):
    """Newest first; a cursor stays right while new matches arrive, and costs the same deep in a
    long history as on the first page (no OFFSET, no COUNT)."""

    ordering = ("-ended_at", "-id")
    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 100


FILTERS = set(PlayerMatchesQuerySerializer().fields)


class PlayerMatchesApi(APIView):
    authentication_classes = PUBLIC
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="players_matches",
        summary="A player's finished matches, newest first (paginated by cursor)",
        description="Public. Each match links to its detail and to the game's replay. "
        "Bots have histories too: bot-easy, bot-normal, bot-hard.",
        tags=PLAYERS,
        parameters=[PlayerMatchesParamsSerializer],
        responses={200: PlayerMatchPageSerializer, **error_responses(400, 404)},
    )
    @reads_from_replica
    def get(self, request: Request, username: str) -> Response:
        params = PlayerMatchesParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        filters = {k: v for k, v in params.validated_data.items() if k in FILTERS}
        player = selectors.player_get(username=username)
        rows = selectors.player_match_list(player=player, **filters)
        paginator = HistoryPagination()  # reads cursor and page_size itself
        page = paginator.paginate_queryset(rows, request, view=self)
        body = {
            "next": paginator.get_next_link(),
            "previous": paginator.get_previous_link(),
            "results": [selectors.history_item(row) for row in page],
        }
        return Response(PlayerMatchPageSerializer(body).data)


class PlayerStatsApi(APIView):
    authentication_classes = PUBLIC
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="players_stats",
        summary="A player's totals over finished matches, and their rating",
        tags=PLAYERS,
        responses={200: PlayerStatsSerializer, **error_responses(404)},
    )
    @reads_from_replica
    def get(self, request: Request, username: str) -> Response:
        player = selectors.player_get(username=username)
        return Response(PlayerStatsSerializer(selectors.player_stats(player=player)).data)


class LeaderboardApi(APIView):
    authentication_classes = PUBLIC
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="leaderboard",
        summary="Players and bots by conservative rating (mu - 3 sigma), or players by chips",
        tags=PLAYERS,
        parameters=[LeaderboardParamsSerializer],
        responses={200: LeaderboardPageSerializer, **error_responses(400)},
    )
    @reads_from_replica
    def get(self, request: Request) -> Response:
        query = LeaderboardParamsSerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        body = selectors.leaderboard_page(**query.validated_data)
        return Response(LeaderboardPageSerializer(body).data)


class MatchDetailApi(APIView):
    authentication_classes = PUBLIC
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="matches_retrieve",
        summary="A finished match: seats, placements, chips, ratings, rounds; replay link",
        tags=PLAYERS,
        responses={200: MatchDetailSerializer, **error_responses(404)},
    )
    @reads_from_replica
    def get(self, request: Request, game_id: uuid.UUID) -> Response:
        return Response(MatchDetailSerializer(selectors.match_detail(game_id=game_id)).data)
