"""Sessions per device (django-rest-knox): one hashed token per log-in, sliding idle expiry,
logout of one device, of every device, and of another device by its id."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from knox.crypto import hash_token
from rest_framework.test import APIClient

from accounts import token_cache
from accounts.models import Session
from tests.api.games_support import assert_error
from tests.conftest import DEFAULT_PASSWORD

pytestmark = [pytest.mark.django_db, pytest.mark.real_password_hashing]

TOKEN = "/api/v1/auth/token"
ME = "/api/v1/me"
SESSIONS = "/api/v1/me/sessions"


@pytest.fixture(autouse=True)
def _fresh_token_memory():
    token_cache.clear()
    yield
    token_cache.clear()


def log_in(username: str, device: str | None = None) -> tuple[APIClient, dict]:
    body = {"username": username, "password": DEFAULT_PASSWORD}
    if device is not None:
        body["device"] = device
    response = APIClient().post(TOKEN, body, "json")
    assert response.status_code == 200, response.content
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    return client, response.json()


def test_two_log_ins_are_two_sessions_and_one_logout_leaves_the_other(user_factory):
    user_factory(username="dana")
    phone, first = log_in("dana", device="phone")
    tablet, second = log_in("dana", device="tablet")
    assert first["token"] != second["token"]
    assert first["session"]["device"] == "phone" and second["session"]["device"] == "tablet"

    listed = phone.get(SESSIONS).json()
    assert [(s["device"], s["current"]) for s in listed] == [("tablet", False), ("phone", True)]
    assert all("token" not in s and "digest" not in s for s in listed)

    assert phone.post("/api/v1/auth/logout").status_code == 204
    assert_error(phone.get(ME), 401, "authentication_failed")
    assert tablet.get(ME).status_code == 200
    assert [s["device"] for s in tablet.get(SESSIONS).json()] == ["tablet"]


def test_logout_all_ends_every_session(user_factory):
    user_factory(username="eli")
    phone, _ = log_in("eli", device="phone")
    tablet, _ = log_in("eli")
    assert phone.get(ME).status_code == 200 and tablet.get(ME).status_code == 200
    assert tablet.post("/api/v1/auth/logout-all").status_code == 204
    assert_error(phone.get(ME), 401, "authentication_failed")
    assert_error(tablet.get(ME), 401, "authentication_failed")
    assert not Session.objects.filter(user__username="eli").exists()


def test_logout_all_reaches_sessions_this_process_remembers(user_factory, settings):
    """Sessions ended by id are forgotten at once, not after TONGITS_TOKEN_CACHE_SECONDS."""
    settings.TONGITS_TOKEN_CACHE_SECONDS = 60.0
    user_factory(username="fay")
    phone, _ = log_in("fay")
    tablet, _ = log_in("fay")
    assert phone.get(ME).status_code == 200  # remembered for a minute
    assert tablet.post("/api/v1/auth/logout-all").status_code == 204
    assert_error(phone.get(ME), 401, "authentication_failed")


def test_ending_another_device_by_its_id(user_factory):
    user_factory(username="gus")
    phone, first = log_in("gus", device="phone")
    tablet, _ = log_in("gus", device="tablet")
    assert phone.get(ME).status_code == 200
    response = tablet.delete(f"{SESSIONS}/{first['session']['id']}")
    assert response.status_code == 204
    assert_error(phone.get(ME), 401, "authentication_failed")
    assert tablet.get(ME).status_code == 200
    # Gone now, and nobody may end another user's session (the same 404 as a missing one).
    assert_error(tablet.delete(f"{SESSIONS}/{first['session']['id']}"), 404, "not_found")
    user_factory(username="hal")
    other, theirs = log_in("hal")
    assert_error(tablet.delete(f"{SESSIONS}/{theirs['session']['id']}"), 404, "not_found")
    assert other.get(ME).status_code == 200


def test_the_token_is_stored_only_as_a_hash(user_factory):
    user_factory(username="ivy")
    _, body = log_in("ivy")
    key = body["token"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM accounts_session")
        rows = cursor.fetchall()
    assert len(rows) == 1
    stored = " ".join(str(value) for value in rows[0])
    assert key not in stored
    assert hash_token(key) in stored  # the SHA-512 digest, and only the key's first 15 chars
    assert key[:15] in stored and key[15:] not in stored


def test_an_idle_session_expires_with_token_expired(user_factory):
    user_factory(username="jo")
    client, body = log_in("jo")
    Session.objects.filter(pk=body["session"]["id"]).update(
        expiry=timezone.now() - timedelta(seconds=1)
    )
    response = client.get(ME)
    assert_error(response, 401, "token_expired")
    assert response["WWW-Authenticate"] == "Token"
    assert_error(client.get(ME), 401, "token_expired")  # still told apart from a wrong key
    assert log_in("jo")[0].get(ME).status_code == 200


def test_use_slides_the_expiry_at_most_once_a_minute(user_factory, settings):
    settings.TONGITS_TOKEN_CACHE_SECONDS = 0.0
    user_factory(username="kim")
    client, body = log_in("kim")
    session = Session.objects.get(pk=body["session"]["id"])
    assert abs(session.expiry - (timezone.now() + timedelta(days=30))) < timedelta(minutes=1)
    # Used a minute later than its last write: pushed on to now + 30 days.
    Session.objects.filter(pk=session.pk).update(expiry=session.expiry - timedelta(minutes=2))
    assert client.get(ME).status_code == 200
    slid = Session.objects.get(pk=session.pk)
    assert slid.expiry > session.expiry - timedelta(seconds=5)
    assert slid.last_used_at is not None
    # Used again at once: no write.
    assert client.get(ME).status_code == 200
    assert Session.objects.get(pk=session.pk).expiry == slid.expiry


def test_a_deactivated_user_is_refused(user_factory):
    user = user_factory(username="lee")
    client, _ = log_in("lee")
    user.is_active = False
    user.save()
    assert_error(client.get(ME), 401, "authentication_failed")


@pytest.mark.parametrize("header", ["Token", "Token a b", "Token \u00e9t\u00e9", "Token zz"])
def test_malformed_keys_are_401_not_500(api_client, header):
    api_client.credentials(HTTP_AUTHORIZATION=header)
    assert_error(api_client.get(ME), 401, "authentication_failed")


def test_sessions_require_auth(api_client):
    assert_error(api_client.get(SESSIONS), 401, "not_authenticated")
    assert_error(api_client.post("/api/v1/auth/logout-all"), 401, "not_authenticated")


def test_register_opens_a_named_session(api_client):
    response = api_client.post(
        "/api/v1/auth/register",
        {"username": "mo", "password": DEFAULT_PASSWORD, "device": "laptop"},
        "json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["session"]["device"] == "laptop"
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {body['token']}")
    assert api_client.get(ME).json()["username"] == "mo"


def test_drf_tokens_are_migrated_to_hashed_sessions_with_the_same_key(user_factory):
    """Migration accounts.0003: a client holding an old DRF token stays logged in."""
    import importlib

    from django.apps import apps
    from rest_framework.authtoken.models import Token

    migration = importlib.import_module("accounts.migrations.0003_sessions")
    user = user_factory(username="ned")
    old = Token.objects.create(user=user)
    migration.migrate_drf_tokens(apps, None)

    assert not Token.objects.exists()  # no key left in clear
    [session] = Session.objects.filter(user=user)
    assert session.device == migration.LEGACY_DEVICE and session.expiry > timezone.now()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {old.key}")
    assert client.get(ME).json()["username"] == "ned"
    assert client.post("/api/v1/auth/logout").status_code == 204
    assert_error(client.get(ME), 401, "authentication_failed")


def test_long_expired_sessions_are_purged(user_factory):
    from accounts.tasks import purge_sessions

    user_factory(username="ola")
    old, fresh = log_in("ola")[1], log_in("ola")[1]
    Session.objects.filter(pk=old["session"]["id"]).update(
        expiry=timezone.now() - timedelta(days=31)
    )
    Session.objects.filter(pk=fresh["session"]["id"]).update(
        expiry=timezone.now() - timedelta(days=29)
    )
    assert purge_sessions() == 1
    remaining = [str(pk) for pk in Session.objects.values_list("pk", flat=True)]
    assert remaining == [fresh["session"]["id"]]


def test_a_log_in_sets_last_login(user_factory):
    user = user_factory(username="pia")
    assert user.last_login is None
    log_in("pia")
    user.refresh_from_db()
    assert user.last_login is not None
