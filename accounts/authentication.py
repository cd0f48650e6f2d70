"""``CachedTokenAuthentication``: django-rest-knox sessions with ``accounts.token_cache``.

Clients send ``Authorization: Bearer <key>`` (what OpenAPI generators send for the documented
``http``/``bearer`` scheme) or ``Authorization: Token <key>`` (DRF's own spelling); both are
``KEYWORDS``. Each key is one session (``accounts.Session``, a knox token stored as its SHA-512
digest). A key's (user, session) is remembered for ``TONGITS_TOKEN_CACHE_SECONDS`` per process
(1 s; 0 turns it off), so an ended session stops working at once in the process that ended it
and within that second everywhere else.

A suspended account's key answers 403 ``account_suspended`` (``accounts.sanctions``) on every
view but those that set ``allow_suspended``; the check reads the user row the look-up already
holds. A found session past its ``expiry`` answers 401 ``token_expired`` (the client should log in
again), any unknown key 401 ``authentication_failed``. Each use slides the expiry to now + the
idle time, written at most once per knox ``MIN_REFRESH_INTERVAL`` (60 s), so a request costs one
indexed SELECT (none when remembered) and a write at most once a minute per session.
"""

from __future__ import annotations

import functools
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from knox.auth import TokenAuthentication
from knox.crypto import hash_token
from knox.models import get_token_model
from knox.settings import knox_settings
from rest_framework.authentication import get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, PermissionDenied

from accounts import sanctions, token_cache
from core import error_texts
from runtime import i18n

#: The accepted ``Authorization`` prefixes (case-insensitive); the first is the one 401s name.
KEYWORDS = ("Token", "Bearer")


@functools.cache
def _look_up_query() -> tuple[str, Any, list[str], Any, list[str]]:
    """The session-with-user SELECT, and the model and attribute names of each half of its
    columns (session, then user)."""
    session_model = get_token_model()
    user_model = session_model._meta.get_field("user").related_model
    session_fields = session_model._meta.concrete_fields
    user_fields = user_model._meta.concrete_fields
    for field in (*session_fields, *user_fields):  # from_db below applies no converters
        assert not hasattr(field, "from_db_value"), f"{field} needs a converter"
    columns = [f's."{f.column}"' for f in session_fields] + [f'u."{f.column}"' for f in user_fields]
    sql = (
        f'SELECT {", ".join(columns)} FROM "{session_model._meta.db_table}" s '
        f'JOIN "{user_model._meta.db_table}" u '
        f'ON u."{user_model._meta.pk.column}" = s."{session_model._meta.get_field("user").column}" '
        f'WHERE s."{session_model._meta.get_field("digest").column}" = %s'
    )
    session_names = [f.attname for f in session_fields]
    return sql, session_model, session_names, user_model, [f.attname for f in user_fields]


def _session_with_user(digest: str) -> Any:
    """The session of ``digest`` with its user attached, or None: one indexed SELECT.

    What ``Session.objects.select_related("user").get(digest=...)`` returns, without building
    the query each time, because the ORM's query building was most of a look-up's CPU and a web
    process under load makes one per token per second, the cache's life (docs/scaling.md, "The
    web process's choices")."""
    sql, session_model, session_names, user_model, user_names = _look_up_query()
    with connection.cursor() as cursor:
        cursor.execute(sql, [digest])
        row = cursor.fetchone()
    if row is None:
        return None
    split = len(session_names)
    session = session_model.from_db(DEFAULT_DB_ALIAS, session_names, row[:split])
    session.user = user_model.from_db(DEFAULT_DB_ALIAS, user_names, row[split:])
    return session


def _allows_suspended(request: Any) -> bool:
    """Whether the view answers a suspended account (its sanctions, its appeal, logging out):
    views say so with ``allow_suspended = True``."""
    view = (getattr(request, "parser_context", None) or {}).get("view")
    return bool(getattr(view, "allow_suspended", False))


class Suspended(PermissionDenied):
    """403 ``account_suspended`` raised where DRF authenticates (it handles only its own
    exceptions there); ``extra`` joins the body as ``core.api_errors`` writes it."""

    def __init__(self, refused: sanctions.AccountSuspended) -> None:
        super().__init__(str(refused.detail), refused.code)
        self.extra = refused.extra


class TokenExpired(AuthenticationFailed):
    default_detail = gettext_lazy("This session has expired; log in again.")
    default_code = "token_expired"


error_texts.register("token_expired", TokenExpired.default_detail)


class CachedTokenAuthentication(TokenAuthentication):
    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        # knox matches one prefix (AUTH_HEADER_PREFIX); accept every one of KEYWORDS, then parse
        # the header as knox does (one credential, no spaces).
        auth = get_authorization_header(request).split()
        if not auth or auth[0].lower() not in {k.lower().encode() for k in KEYWORDS}:
            return None
        if len(auth) == 1:
            raise AuthenticationFailed(_("Invalid token header. No credentials provided."))
        if len(auth) > 2:
            raise AuthenticationFailed(_("Invalid token header. It should not contain spaces."))
        user, session = self.authenticate_credentials(auth[1])
        # The suspension rides on the user row the look-up read (accounts.sanctions): one
        # attribute test for everyone, no query.
        if user.suspended and sanctions.suspended_now(user) and not _allows_suspended(request):
            raise Suspended(sanctions.refusal(user))
        return user, session

    def authenticate_header(self, request: Any) -> str:
        return KEYWORDS[0]

    def authenticate_credentials(self, key: bytes | str) -> tuple[Any, Any]:
        if isinstance(key, bytes):
            try:
                key = key.decode()
            except UnicodeDecodeError:
                raise AuthenticationFailed(_("Invalid token.")) from None
        hit = token_cache.get(key)
        if hit is not None:
            expiry = getattr(hit[1], "expiry", None)
            if expiry is None or expiry > timezone.now():
                i18n.use_account(hit[0])
                return hit
            token_cache.forget(key)  # expired while remembered: the look-up says so
        try:
            user, session = self._look_up(key)
        except AuthenticationFailed:
            token_cache.forget(key)
            raise
        token_cache.put(key, user, session)
        i18n.use_account(user)  # the answer speaks the account's language from here on
        return user, session

    def _look_up(self, key: str) -> tuple[Any, Any]:
        """The session whose digest is the key's SHA-512 (knox's hash), by its unique index.

        knox itself filters on the key's first characters and compares digests in Python; one
        equality on the digest is the same check in one indexed row, and cheaper
        (docs/scaling.md, "The web process's choices"), and it leaks nothing usable: an index
        walk over digests of 512-bit hashes tells nothing about a key. Unlike knox, an expired
        session is kept, to say so.
        """
        session = _session_with_user(hash_token(key))
        if session is None:
            raise AuthenticationFailed(_("Invalid token."))
        now = timezone.now()
        if session.expiry is not None and session.expiry <= now:
            raise TokenExpired()
        self._slide(session, now)
        return self.validate_user(session)

    @staticmethod
    def _slide(session: Any, now: Any) -> None:
        new_expiry = now + knox_settings.TOKEN_TTL
        if session.expiry is None:
            return
        if (new_expiry - session.expiry).total_seconds() > knox_settings.MIN_REFRESH_INTERVAL:
            session.expiry, session.last_used_at = new_expiry, now
            type(session).objects.filter(pk=session.pk).update(expiry=new_expiry, last_used_at=now)


class CachedTokenScheme(OpenApiAuthenticationExtension):
    """Documented as HTTP bearer, so generated clients send ``Bearer <token>``, which works."""

    target_class = "accounts.authentication.CachedTokenAuthentication"
    name = "tokenAuth"
    match_subclasses = True

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A session's key from auth/register or auth/token: \"Authorization: "
            'Bearer <token>" ("Authorization: Token <token>" works too).',
        }
