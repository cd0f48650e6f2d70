"""The per-process memory of token look-ups: revocation at once here, within the TTL elsewhere."""

from __future__ import annotations

import time

import pytest

from accounts import token_cache
from accounts.models import Session
from tests.api.games_support import assert_error

pytestmark = pytest.mark.django_db


def test_a_token_revoked_elsewhere_stops_working_within_the_ttl(auth_client, settings):
    settings.TONGITS_TOKEN_CACHE_SECONDS = 0.3
    token_cache.clear()
    assert auth_client.get("/api/v1/me").status_code == 200  # looked up, remembered
    Session.objects.filter(pk=auth_client.auth_session.pk).delete()  # as another process's logout
    assert auth_client.get("/api/v1/me").status_code == 200  # still remembered here
    time.sleep(0.35)
    assert_error(auth_client.get("/api/v1/me"), 401, "authentication_failed")


def test_logout_in_this_process_takes_effect_at_once(auth_client, settings):
    settings.TONGITS_TOKEN_CACHE_SECONDS = 60.0
    assert auth_client.get("/api/v1/me").status_code == 200
    assert auth_client.post("/api/v1/auth/logout").status_code == 204
    assert_error(auth_client.get("/api/v1/me"), 401, "authentication_failed")


def test_a_zero_ttl_looks_up_every_request(auth_client, settings):
    settings.TONGITS_TOKEN_CACHE_SECONDS = 0.0
    token_cache.clear()
    assert auth_client.get("/api/v1/me").status_code == 200
    Session.objects.filter(pk=auth_client.auth_session.pk).delete()
    assert_error(auth_client.get("/api/v1/me"), 401, "authentication_failed")
