"""``CachedTokenAuthentication``: DRF's token authentication with ``tongits_site.token_cache``.

Clients send ``Authorization: Bearer <key>`` (what OpenAPI generators send for the documented
``http``/``bearer`` scheme) or ``Authorization: Token <key>`` (DRF's own spelling); both are
``KEYWORDS``. A token's user is remembered for ``TONGITS_TOKEN_CACHE_SECONDS`` per process (1 s;
0 turns it off), so revocation takes effect at once in the process that revoked it and within
that second everywhere else.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import TokenAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

from tongits_site import token_cache

#: The accepted ``Authorization`` prefixes (case-insensitive); the first is the one 401s name.
KEYWORDS = ("Token", "Bearer")


class CachedTokenAuthentication(TokenAuthentication):
    keyword = KEYWORDS[0]

    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        # DRF's TokenAuthentication matches one keyword; check the prefix against every one of
        # KEYWORDS here and let DRF parse the rest of the header as usual.
        prefix = get_authorization_header(request).split(b" ", 1)[0].lower()
        for keyword in KEYWORDS:
            if prefix == keyword.lower().encode():
                self.keyword = keyword
                return super().authenticate(request)
        return None

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        hit = token_cache.get(key)
        if hit is not None:
            return hit
        try:
            user, token = super().authenticate_credentials(key)
        except AuthenticationFailed:
            token_cache.forget(key)
            raise
        token_cache.put(key, user, token)
        return user, token


class CachedTokenScheme(OpenApiAuthenticationExtension):
    """Documented as HTTP bearer, so generated clients send ``Bearer <token>``, which works."""

    target_class = "tongits_site.authentication.CachedTokenAuthentication"
    name = "tokenAuth"
    match_subclasses = True

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": 'The token from auth/register or auth/token: "Authorization: Bearer '
            '<token>" ("Authorization: Token <token>" works too).',
        }
