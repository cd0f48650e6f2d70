"""Password change (ends the other sessions) and reset by mail (Django's token generator)."""

from __future__ import annotations

import re

import pytest
import redis
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from accounts import token_cache
from accounts.tasks import send_password_reset
from tests.api.games_support import assert_error
from tests.conftest import DEFAULT_PASSWORD, TEST_BROKER_URL

pytestmark = [pytest.mark.django_db, pytest.mark.real_password_hashing]

TOKEN = "/api/v1/auth/token"
ME = "/api/v1/me"
PASSWORD = "/api/v1/me/password"
RESET = "/api/v1/auth/password-reset"
CONFIRM = "/api/v1/auth/password-reset/confirm"
NEW_PASSWORD = "a-brand-new-passphrase"


def log_in(username: str, password: str = DEFAULT_PASSWORD) -> APIClient:
    response = APIClient().post(TOKEN, {"username": username, "password": password}, "json")
    assert response.status_code == 200, response.content
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    return client


def test_a_password_change_ends_the_other_sessions(user_factory, settings):
    settings.TONGITS_TOKEN_CACHE_SECONDS = 60.0
    token_cache.clear()
    user_factory(username="ann")
    phone, tablet = log_in("ann"), log_in("ann")
    assert tablet.get(ME).status_code == 200  # remembered by this process
    body = {"old_password": DEFAULT_PASSWORD, "new_password": NEW_PASSWORD}
    assert phone.post(PASSWORD, body, "json").status_code == 204
    assert phone.get(ME).status_code == 200  # this session stays
    assert_error(tablet.get(ME), 401, "authentication_failed")
    assert_error(
        APIClient().post(TOKEN, {"username": "ann", "password": DEFAULT_PASSWORD}, "json"),
        401,
        "invalid_credentials",
    )
    log_in("ann", NEW_PASSWORD)


def test_a_password_change_needs_the_old_password_and_a_good_new_one(user_factory):
    user_factory(username="bo")
    client, other = log_in("bo"), log_in("bo")
    wrong = {"old_password": "not-it-at-all", "new_password": NEW_PASSWORD}
    assert_error(client.post(PASSWORD, wrong, "json"), 400, "wrong_password")
    weak = {"old_password": DEFAULT_PASSWORD, "new_password": "12345678"}
    body = assert_error(client.post(PASSWORD, weak, "json"), 400, "invalid")
    assert body["fields"]["new_password"]  # Django's default validators: common, numeric
    assert other.get(ME).status_code == 200  # nothing changed, nothing ended
    assert_error(APIClient().post(PASSWORD, wrong, "json"), 401, "not_authenticated")


def reset_link(outbox_index: int = -1) -> tuple[str, str]:
    body = mail.outbox[outbox_index].body
    found = re.search(r"uid=([\w-]+)&token=([\w-]+)", body)
    assert found, body
    return found.group(1), found.group(2)


def test_a_reset_mail_carries_a_token_that_works_once(user_factory, api_client):
    user_factory(username="cy", email="cy@example.com")
    session = log_in("cy")
    response = api_client.post(RESET, {"email": "CY@example.com"}, "json")
    assert response.status_code == 202, response.content
    assert send_password_reset("cy@example.com") == 1  # the worker's part
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["cy@example.com"]
    uid, token = reset_link()

    body = {"uid": uid, "token": token, "new_password": NEW_PASSWORD}
    assert api_client.post(CONFIRM, body, "json").status_code == 204
    log_in("cy", NEW_PASSWORD)
    assert_error(session.get(ME), 401, "authentication_failed")  # a reset ends every session

    again = {**body, "new_password": "yet-another-passphrase"}
    assert_error(api_client.post(CONFIRM, again, "json"), 400, "invalid_reset_token")
    log_in("cy", NEW_PASSWORD)


def test_an_old_token_stops_working_once_the_password_changed(user_factory, api_client):
    user_factory(username="di", email="di@example.com")
    send_password_reset("di@example.com")
    uid, token = reset_link()
    client = log_in("di")
    change = {"old_password": DEFAULT_PASSWORD, "new_password": NEW_PASSWORD}
    assert client.post(PASSWORD, change, "json").status_code == 204
    body = {"uid": uid, "token": token, "new_password": "yet-another-passphrase"}
    assert_error(api_client.post(CONFIRM, body, "json"), 400, "invalid_reset_token")


@pytest.mark.parametrize(
    "change",
    [
        {"token": "wrong-token"},
        {"uid": "not-base64!"},
        {"uid": "OTk5OTk5OTk5"},  # base64 of 999999999: nobody
        {"uid": "OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5"},  # beyond bigint
    ],
)
def test_a_wrong_reset_token_is_400(user_factory, api_client, change):
    user_factory(username="ed", email="ed@example.com")
    send_password_reset("ed@example.com")
    uid, token = reset_link()
    body = {"uid": uid, "token": token, "new_password": NEW_PASSWORD, **change}
    assert_error(api_client.post(CONFIRM, body, "json"), 400, "invalid_reset_token")
    log_in("ed")  # the password is unchanged


def test_a_weak_new_password_keeps_the_token_usable(user_factory, api_client):
    user_factory(username="flo", email="flo@example.com")
    send_password_reset("flo@example.com")
    uid, token = reset_link()
    weak = {"uid": uid, "token": token, "new_password": "password"}
    assert_error(api_client.post(CONFIRM, weak, "json"), 400, "invalid")
    good = {**weak, "new_password": NEW_PASSWORD}
    assert api_client.post(CONFIRM, good, "json").status_code == 204


def test_the_reset_answer_is_the_same_for_known_and_unknown_addresses(user_factory, api_client):
    """Same status and bytes, no database query either way (the request never looks the address
    up), and one task queued on the broker for each: the same work, so about the same time."""
    user_factory(username="gil", email="gil@example.com")
    broker = redis.Redis.from_url(TEST_BROKER_URL)
    answers = []
    for email in ("gil@example.com", "nobody@example.com"):
        queued = broker.llen("celery")
        with CaptureQueriesContext(connection) as queries:
            response = api_client.post(RESET, {"email": email}, "json")
        assert response.status_code == 202
        assert queries.captured_queries == []
        assert broker.llen("celery") == queued + 1
        answers.append(response.content)
    assert answers[0] == answers[1]
    assert send_password_reset("nobody@example.com") == 0 and mail.outbox == []
    assert_error(api_client.post(RESET, {"email": "not an address"}, "json"), 400, "invalid")


def test_bots_and_people_without_a_password_get_no_mail(user_factory):
    user = user_factory(username="hugo", email="hugo@example.com")
    user.set_unusable_password()
    user.save()
    assert send_password_reset("hugo@example.com") == 0
    assert mail.outbox == []
