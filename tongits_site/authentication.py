"""``CachedTokenAuthentication``: DRF's token authentication with ``tongits_site.token_cache``.

Clients send ``Authorization: Token <key>``. A token's user is remembered for
``TONGITS_TOKEN_CACHE_SECONDS`` per process (1 s; 0 turns it off), so revocation takes effect at
once in the process that revoked it and within that second everywhere else.
"""

from __future__ import annotations

from typing import Any

from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from tongits_site import token_cache


class CachedTokenAuthentication(TokenAuthentication):
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
