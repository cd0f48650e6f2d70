"""Suspensions that hold: sessions end at once, every log-in answers 403 with the end and the
appeal route, a suspended account can neither queue, seat, chat nor claim a bonus, and the
check costs a request no query."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from accounts import token_cache
from accounts.models import Session
from fairplay.models import Suspension
from tests.conftest import DEFAULT_PASSWORD
from tests.fairplay.support import staff_client

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def remembered_tokens(settings):
    """Token look-ups remembered, as in production: a suspension must still reach them."""
    settings.TONGITS_TOKEN_CACHE_SECONDS = 60.0
    token_cache.clear()
    yield
    token_cache.clear()


def suspend(staff, username: str, until=None, reason: str = "chip dumping"):
    body = {"username": username, "reason": reason, "until": until.isoformat() if until else None}
    return staff.post("/api/v1/staff/suspensions", body, format="json")


def log_in(username: str) -> dict:
    response = APIClient().post(
        "/api/v1/auth/token", {"username": username, "password": DEFAULT_PASSWORD}, format="json"
    )
    return {"status": response.status_code, **response.json()}


def test_a_suspended_accounts_token_is_refused_at_once(auth_client_factory, user_factory):
    player = auth_client_factory()
    other_session = auth_client_factory(player.user)
    staff = staff_client(auth_client_factory, user_factory)
    assert player.get("/api/v1/me").status_code == 200  # remembered by this process now
    until = timezone.now() + timedelta(days=7)
    made = suspend(staff, player.user.username, until)
    assert made.status_code == 201, made.json()
    assert made.json()["ends_at"] is not None and made.json()["case"] is None
    for client in (player, other_session):
        refused = client.get("/api/v1/me")
        assert refused.status_code == 401  # every session ended, the remembered one too
    assert not Session.objects.filter(user=player.user).exists()


def test_log_in_answers_403_with_the_end_and_the_appeal_route(auth_client_factory, user_factory):
    player = user_factory()
    staff = staff_client(auth_client_factory, user_factory)
    until = (timezone.now() + timedelta(days=3)).replace(microsecond=0)
    suspend(staff, player.username, until)
    answer = log_in(player.username)
    assert answer["status"] == 403 and answer["code"] == "account_suspended"
    assert answer["suspension"]["until"] == until.isoformat()
    assert answer["suspension"]["appeal"] == "/api/v1/me/appeals"
    assert until.strftime("%Y-%m-%d %H:%M") in answer["detail"]
    assert "token" not in answer  # no session to play with: only the appeal's key
    # Until lifted: the end is null, and the text says so.
    other = user_factory()
    suspend(staff, other.username, None)
    answer = log_in(other.username)
    assert answer["status"] == 403 and answer["suspension"]["until"] is None
    assert "until staff lift it" in answer["detail"]
    # A wrong password is still a wrong password: nothing about the suspension leaks.
    wrong = APIClient().post(
        "/api/v1/auth/token", {"username": other.username, "password": "nope"}, format="json"
    )
    assert wrong.status_code == 401 and wrong.json()["code"] == "invalid_credentials"


def test_a_guests_device_sign_in_is_refused_too(auth_client_factory, user_factory):
    key = "k" * 40
    first = APIClient().post("/api/v1/auth/device", {"device_key": key}, format="json")
    assert first.status_code == 201
    staff = staff_client(auth_client_factory, user_factory)
    suspend(staff, first.json()["user"]["username"])
    again = APIClient().post("/api/v1/auth/device", {"device_key": key}, format="json")
    assert again.status_code == 403 and again.json()["code"] == "account_suspended"


def test_the_appeal_token_opens_the_sanctions_and_nothing_else(auth_client_factory, user_factory):
    player = user_factory()
    staff = staff_client(auth_client_factory, user_factory)
    suspend(staff, player.username, timezone.now() + timedelta(days=1))
    token = log_in(player.username)["suspension"]["appeal_token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    mine = client.get("/api/v1/me/sanctions")
    assert mine.status_code == 200 and mine.json()["suspended"] is True
    assert mine.json()["suspensions"][0]["reason"] == "chip dumping"
    table = {"rules": "standard", "seats": [{"kind": "user"}, {"kind": "bot"}, {"kind": "bot"}]}
    refused = {
        "queue": client.post("/api/v1/matchmaking/tickets", {"room": "casual"}, format="json"),
        "seat": client.post("/api/v1/tables", table, format="json"),
        "tournament": client.post(
            "/api/v1/tournaments/00000000-0000-0000-0000-000000000001/registration",
            {},
            format="json",
        ),
        "chat": client.post(
            "/api/v1/games/00000000-0000-0000-0000-000000000001/chat",
            {"text": "hi"},
            format="json",
        ),
        "bonus": client.post("/api/v1/me/wallet/daily", {}, format="json"),
        "read": client.get("/api/v1/me"),
    }
    for what, answer in refused.items():
        assert answer.status_code == 403, what
        assert answer.json()["code"] == "account_suspended", what
    assert client.post("/api/v1/auth/logout").status_code == 204  # leaving is allowed


def test_a_suspension_with_an_end_ends_by_itself(auth_client_factory, user_factory):
    """Nothing is written when a suspension ends: the check compares its end with the clock.
    Here the account's row holds an end that has passed, as it does the moment after it."""
    from accounts import sanctions

    player = user_factory()
    staff = staff_client(auth_client_factory, user_factory)
    suspend(staff, player.username, timezone.now() + timedelta(hours=1))
    assert log_in(player.username)["status"] == 403
    ended = timezone.now() - timedelta(seconds=1)
    sanctions.suspension_set(user_id=player.pk, suspended=True, until=ended)
    token = auth_client_factory(player)
    assert token.get("/api/v1/me").status_code == 200
    answer = log_in(player.username)
    assert answer["status"] == 200 and answer["token"]


def test_lifting_lets_the_account_in_again_and_is_recorded(auth_client_factory, user_factory):
    player = user_factory()
    staff = staff_client(auth_client_factory, user_factory)
    made = suspend(staff, player.username).json()
    lift = staff.post(
        f"/api/v1/staff/suspensions/{made['id']}/lift", {"reason": "mistaken"}, format="json"
    )
    assert lift.status_code == 201 and lift.json()["reason"] == "mistaken"
    assert log_in(player.username)["status"] == 200
    again = staff.post(
        f"/api/v1/staff/suspensions/{made['id']}/lift", {"reason": "twice"}, format="json"
    )
    assert again.status_code == 409 and again.json()["code"] == "already_lifted"
    gone = staff.post("/api/v1/staff/suspensions/999999/lift", {"reason": "x"}, format="json")
    assert gone.status_code == 404 and gone.json()["code"] == "suspension_not_found"


def test_staff_input_is_checked(auth_client_factory, user_factory):
    staff = staff_client(auth_client_factory, user_factory)
    player = user_factory()
    past = suspend(staff, player.username, timezone.now() - timedelta(minutes=1))
    assert past.status_code == 400 and past.json()["code"] == "invalid_until"
    nobody = suspend(staff, "nobody-at-all")
    assert nobody.status_code == 400 and nobody.json()["code"] == "unknown_account"
    blank = suspend(staff, player.username, reason="  ")
    assert blank.status_code == 400
    assert not Suspension.objects.exists()


def test_the_check_costs_no_query(auth_client_factory, user_factory, settings):
    """A suspended account's key is refused by the one look-up every key costs; a key that
    is remembered costs none, suspended or not."""
    from accounts.authentication import CachedTokenAuthentication

    player = user_factory()
    staff = staff_client(auth_client_factory, user_factory)
    suspend(staff, player.username)
    token = log_in(player.username)["suspension"]["appeal_token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    token_cache.clear()
    with CaptureQueriesContext(connection) as first:
        assert client.get("/api/v1/me").status_code == 403
    auth = [q for q in first.captured_queries if "accounts_session" in q["sql"]]
    assert len(first.captured_queries) == len(auth) == 1
    with CaptureQueriesContext(connection) as remembered:
        assert client.get("/api/v1/me").status_code == 403
    assert remembered.captured_queries == []
    assert CachedTokenAuthentication  # the class the settings name


def test_staff_routes_refuse_players(auth_client):
    for method, path in (
        ("get", "/api/v1/staff/cases"),
        ("get", "/api/v1/staff/cases/1"),
        ("post", "/api/v1/staff/cases/1/decision"),
        ("post", "/api/v1/staff/suspensions"),
        ("post", "/api/v1/staff/suspensions/1/lift"),
    ):
        answer = getattr(auth_client, method)(path, {}, format="json")
        assert answer.status_code == 403, path
        assert answer.json()["code"] == "permission_denied", path
    assert APIClient().get("/api/v1/staff/cases").status_code == 401


def test_a_suspension_ends_the_accounts_tickets(user_factory, auth_client_factory):
    from matchmaking import matcher
    from tests.matchmaking.support import person, queue

    ana, ben, cy = (person(user_factory) for _ in range(3))
    tickets = [queue(p) for p in (ana, ben, cy)]
    staff = staff_client(auth_client_factory, user_factory)
    assert suspend(staff, ben.username).status_code == 201
    tickets[1].refresh_from_db()
    assert (tickets[1].status, tickets[1].reason) == ("cancelled", "member_left")
    assert matcher.match_once() == 0  # two left searching: no table of three


def test_the_export_holds_the_players_fair_play_records(auth_client_factory, user_factory):
    player = user_factory()
    staff = staff_client(auth_client_factory, user_factory)
    suspend(staff, player.username, reason="abuse")
    token = log_in(player.username)["suspension"]["appeal_token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    exported = client.get("/api/v1/me/export")
    assert exported.status_code == 200  # a suspended account may still take its data
    section = exported.json()["fair_play"]
    assert section["suspended"] is True and section["suspensions"][0]["reason"] == "abuse"
    assert [s["address"] for s in section["sign_ins"]] == ["127.0.0.1"]
    assert section["reports"] == []


def test_ids_past_the_largest_row_id_name_nothing(auth_client_factory, user_factory):
    staff = staff_client(auth_client_factory, user_factory)
    huge = 2**64
    assert staff.get(f"/api/v1/staff/cases/{huge}").status_code == 404
    decided = staff.post(
        f"/api/v1/staff/cases/{huge}/decision", {"decision": "warn", "reason": "x"}, format="json"
    )
    assert decided.status_code == 404 and decided.json()["code"] == "case_not_found"
    lifted = staff.post(f"/api/v1/staff/suspensions/{huge}/lift", {"reason": "x"}, format="json")
    assert lifted.status_code == 404 and lifted.json()["code"] == "suspension_not_found"
