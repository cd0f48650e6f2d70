"""The per-process memory of token look-ups: revocation at once here, within the TTL elsewhere."""

from __future__ import annotations

import time
from datetime import timedelta

import psycopg
import pytest
from django.utils import timezone

from accounts import token_cache
from accounts.models import Session
from core import notices
from games.live import listener
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


@pytest.fixture
def hearing():
    """This process hears revocations, as it does once its live listener is connected."""
    notices.set_hearing(True)
    yield
    notices.set_hearing(False)


def _heard(action) -> list[str]:
    """The notices ``action`` sends once committed, as a listener hears them."""
    with psycopg.connect(**listener.connection_params(), autocommit=True) as conn:
        conn.execute(f"LISTEN {notices.CHANNEL}")
        action()
        return [n.payload for n in conn.notifies(timeout=1.0, stop_after=None)]


@pytest.mark.django_db(transaction=True)
def test_while_hearing_a_look_up_is_kept_longer_and_a_revocation_reaches_it_on_commit(
    auth_client, settings, hearing
):
    settings.TONGITS_TOKEN_CACHE_SECONDS = 0.3
    settings.TONGITS_TOKEN_CACHE_HEARING_SECONDS = 60.0
    token_cache.clear()
    assert auth_client.get("/api/v1/me").status_code == 200  # looked up, remembered 60 s
    session = auth_client.auth_session.pk
    # Another process's logout: the row goes, and its notice is sent on commit.
    heard = _heard(lambda: Session.objects.filter(pk=session).delete())
    assert f"forget-session:{session}" in heard
    time.sleep(0.35)
    assert auth_client.get("/api/v1/me").status_code == 200  # past the short time: still kept
    for payload in heard:  # the listener hands each notice on
        notices.dispatch(payload)
    assert_error(auth_client.get("/api/v1/me"), 401, "authentication_failed")


@pytest.mark.django_db(transaction=True)
def test_a_deactivated_user_is_forgotten_by_every_process_that_hears(
    auth_client, settings, hearing
):
    settings.TONGITS_TOKEN_CACHE_HEARING_SECONDS = 60.0
    token_cache.clear()
    assert auth_client.get("/api/v1/me").status_code == 200
    user = auth_client.user

    def deactivate() -> None:
        user.is_active = False
        user.save(update_fields=["is_active"])

    heard = _heard(deactivate)
    assert f"forget-user:{user.pk}" in heard
    assert token_cache.get(auth_client.token) is None  # this process forgot at once
    token_cache.put(auth_client.token, user, auth_client.auth_session)  # another process's
    for payload in heard:
        notices.dispatch(payload)
    assert token_cache.get(auth_client.token) is None


def test_when_hearing_stops_what_was_kept_long_is_dropped(auth_client, settings, hearing):
    settings.TONGITS_TOKEN_CACHE_HEARING_SECONDS = 60.0
    token_cache.clear()
    assert auth_client.get("/api/v1/me").status_code == 200
    assert token_cache.get(auth_client.token) is not None
    Session.objects.filter(pk=auth_client.auth_session.pk).delete()  # its notice unheard
    notices.set_hearing(False)  # the listener's connection went down
    assert token_cache.ttl() == settings.TONGITS_TOKEN_CACHE_SECONDS
    assert_error(auth_client.get("/api/v1/me"), 401, "authentication_failed")


def test_a_session_that_expires_while_remembered_is_refused(auth_client, settings, hearing):
    settings.TONGITS_TOKEN_CACHE_HEARING_SECONDS = 60.0
    token_cache.clear()
    assert auth_client.get("/api/v1/me").status_code == 200
    Session.objects.filter(pk=auth_client.auth_session.pk).update(
        expiry=timezone.now() - timedelta(seconds=1)
    )
    user, session = token_cache.get(auth_client.token)
    session.expiry = timezone.now() - timedelta(seconds=1)  # the remembered copy too
    assert_error(auth_client.get("/api/v1/me"), 401, "token_expired")


@pytest.mark.django_db(transaction=True)
def test_any_change_a_request_reads_of_its_user_reaches_every_process_but_a_log_in(
    auth_client, settings, hearing
):
    settings.TONGITS_TOKEN_CACHE_HEARING_SECONDS = 600.0
    token_cache.clear()
    assert auth_client.get("/api/v1/me").status_code == 200
    user = auth_client.user

    def log_in() -> None:
        user.save(update_fields=["last_login"])

    assert f"forget-user:{user.pk}" not in _heard(log_in)

    def make_staff() -> None:
        user.is_staff = True
        user.save()

    heard = _heard(make_staff)
    assert f"forget-user:{user.pk}" in heard
    assert token_cache.get(auth_client.token) is None  # this process forgot at once
    token_cache.put(auth_client.token, user, auth_client.auth_session)  # another process's
    for payload in heard:
        notices.dispatch(payload)
    assert token_cache.get(auth_client.token) is None
