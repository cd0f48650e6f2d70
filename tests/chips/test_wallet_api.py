"""The chips API: a wallet, its statement, the daily bonus, staff adjustments, rooms, the
leaderboard's chips order, export and deletion."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chips import ledger, services
from chips.models import Entry
from tests.api.games_support import assert_error
from tests.chips.support import assert_sound, available
from tests.conftest import DEFAULT_PASSWORD

pytestmark = pytest.mark.django_db
WALLET = "/api/v1/me/wallet"


@pytest.fixture(autouse=True)
def grants(settings):
    settings.TONGITS_SIGNUP_GRANT = 1000
    settings.TONGITS_DAILY_BONUS = 200


def test_registration_opens_a_wallet_with_the_signup_grant(api_client):
    body = {"username": "newcomer", "password": DEFAULT_PASSWORD}
    response = api_client.post("/api/v1/auth/register", body, "json")
    assert response.status_code == 201
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    wallet = api_client.get(WALLET).json()
    assert wallet["balance"] == wallet["available"] == 1000 and wallet["in_play"] == 0
    assert wallet["listed"] is False and wallet["daily_bonus"]["available"] is True
    entries = api_client.get(f"{WALLET}/entries").json()["results"]
    assert [(e["cause"], e["amount"], e["balance_after"]) for e in entries] == [
        ("signup_grant", 1000, 1000)
    ]


def test_an_account_older_than_the_ledger_gets_its_wallet_on_first_read(auth_client):
    assert ledger.wallet_of(auth_client.user.pk) is None
    assert auth_client.get(WALLET).json()["available"] == 1000
    assert auth_client.get(WALLET).json()["available"] == 1000  # granted once


def test_the_daily_bonus_once_per_utc_day(auth_client):
    first = auth_client.post(f"{WALLET}/daily")
    assert first.status_code == 201, first.content
    assert (
        first.json()["entry"]["cause"] == "daily_bonus" and first.json()["entry"]["amount"] == 200
    )
    assert first.json()["wallet"]["available"] == 1200
    assert first.json()["wallet"]["daily_bonus"]["available"] is False
    again = assert_error(auth_client.post(f"{WALLET}/daily"), 409, "already_claimed")
    next_at = datetime.fromisoformat(again["next_at"])
    assert next_at > datetime.now(UTC) and (next_at.hour, next_at.minute) == (0, 0)
    assert auth_client.get(WALLET).json()["daily_bonus"]["next_at"] == again["next_at"]
    assert available(auth_client.user) == 1200  # paid once
    # The next UTC day (the service takes the clock), one more.
    tomorrow = next_at + timedelta(minutes=1)
    services.daily_bonus_claim(user_id=auth_client.user.pk, now=tomorrow)
    assert available(auth_client.user) == 1400
    assert_sound()


def test_no_daily_bonus_when_the_setting_is_zero(auth_client, settings):
    settings.TONGITS_DAILY_BONUS = 0
    assert_error(auth_client.post(f"{WALLET}/daily"), 409, "no_daily_bonus")
    assert auth_client.get(WALLET).json()["daily_bonus"]["available"] is False


def test_the_statement_pages_by_cursor_newest_first(auth_client):
    user = auth_client.user
    for n in range(1, 26):
        services.adjust(user_id=user.pk, amount=n, reason=f"n{n}", staff_id=None)
    page = auth_client.get(f"{WALLET}/entries?page_size=10").json()
    amounts = [e["amount"] for e in page["results"]]
    assert amounts == list(range(25, 15, -1))
    seen = amounts
    while page["next"]:
        page = auth_client.get(page["next"]).json()
        seen += [e["amount"] for e in page["results"]]
    assert seen == [*range(25, 0, -1), 1000]
    assert all(e["match"] is None and e["game_id"] is None for e in page["results"])
    assert_error(auth_client.get(f"{WALLET}/entries?page_size=0"), 400, "invalid")
    assert_error(auth_client.get(f"{WALLET}/entries?cursor=%F2%86"), 400, "invalid")


def test_listing_ones_balance_on_the_chips_leaderboard(auth_client_factory):
    shy, proud = auth_client_factory(), auth_client_factory()
    shy.get(WALLET)
    services.adjust(user_id=proud.user.pk, amount=77, reason="prize", staff_id=None)
    assert proud.patch(WALLET, {"listed": True}, "json").json()["listed"] is True
    assert_error(proud.patch(WALLET, {"listed": "maybe"}, "json"), 400, "invalid")
    board = shy.get("/api/v1/leaderboard?order=chips").json()
    assert board["count"] == 1
    assert [(e["rank"], e["username"], e["chips"]) for e in board["results"]] == [
        (1, proud.user.username, 1077)
    ]
    proud.patch(WALLET, {"listed": False}, "json")
    assert shy.get("/api/v1/leaderboard?order=chips").json()["count"] == 0
    assert_error(shy.get("/api/v1/leaderboard?order=money"), 400, "invalid")


def test_staff_adjust_a_players_chips_with_a_reason(auth_client_factory, user_factory):
    staff = auth_client_factory(user_factory(is_staff=True))
    player = auth_client_factory()
    url = f"/api/v1/wallets/{player.user.username}/adjustments"
    assert_error(player.post(url, {"amount": 5, "reason": "me"}, "json"), 403, "permission_denied")
    response = staff.post(
        url, {"amount": 300, "reason": "ticket 12"}, "json", HTTP_IDEMPOTENCY_KEY="t12"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["balance_after"] == 1300 and body["replayed"] is False
    again = staff.post(
        url, {"amount": 300, "reason": "ticket 12"}, "json", HTTP_IDEMPOTENCY_KEY="t12"
    )
    assert again.json()["entry"] == body["entry"] and again.json()["replayed"] is True
    assert_error(
        staff.post(url, {"amount": 301, "reason": "ticket 12"}, "json", HTTP_IDEMPOTENCY_KEY="t12"),
        422,
        "idempotency_key_reused",
    )
    assert_error(
        staff.post(url, {"amount": -5000, "reason": "x"}, "json"), 409, "insufficient_chips"
    )
    assert_error(staff.post(url, {"amount": 0, "reason": "x"}, "json"), 400, "invalid_adjustment")
    assert_error(staff.post(url, {"amount": 5}, "json"), 400, "invalid")
    assert_error(
        staff.post("/api/v1/wallets/nobody/adjustments", {"amount": 5, "reason": "x"}, "json"),
        404,
        "not_found",
    )
    entry = Entry.objects.get(pk=body["entry"])
    assert (entry.cause, entry.reason, entry.created_by_id) == (
        "adjustment",
        "ticket 12",
        staff.user.pk,
    )
    wallet = staff.get(f"/api/v1/wallets/{player.user.username}").json()
    assert wallet["username"] == player.user.username and wallet["available"] == 1300
    assert_error(player.get(f"/api/v1/wallets/{player.user.username}"), 403, "permission_denied")
    assert_sound()


def test_rooms_say_which_buy_ins_one_can_cover(auth_client, settings):
    settings.TONGITS_ROOMS = [
        {"buy_in": 100, "stake": 5, "bot_level": "easy"},
        {"buy_in": 10000, "stake": 500, "bot_level": "hard"},
    ]
    settings.TONGITS_MATCH_BOTS_AFTER_SECONDS = 15.0
    rooms = auth_client.get("/api/v1/rooms").json()
    assert rooms == [
        {
            "key": "100:5",
            "buy_in": 100,
            "stake": 5,
            "bot_level": "easy",
            "bots_after": 15.0,
            "fee_percent": 0,
            "affordable": True,
        },
        {
            "key": "10000:500",
            "buy_in": 10000,
            "stake": 500,
            "bot_level": "hard",
            "bots_after": 15.0,
            "fee_percent": 0,
            "affordable": False,
        },
    ]


def test_a_table_refuses_what_a_wallet_cannot_cover(auth_client):
    services.open_wallet(auth_client.user.pk)
    seats = [{"kind": "user"}, {"kind": "bot"}, {"kind": "bot"}]
    body = {"rules": {"preset": "standard", "stake": 50}, "seats": seats, "buy_in": 1001}
    refused = assert_error(
        auth_client.post("/api/v1/tables", body, "json"), 409, "insufficient_chips"
    )
    assert refused["seat"] == 0
    assert_error(auth_client.post("/api/v1/tables", {**body, "buy_in": -1}, "json"), 400, "invalid")
    assert_error(
        auth_client.post("/api/v1/tables", {**body, "buy_in": "lots"}, "json"), 400, "invalid"
    )
    response = auth_client.post("/api/v1/tables", {**body, "buy_in": 1000}, "json")
    assert response.status_code == 201 and response.json()["buy_in"] == 1000
    wallet = auth_client.get(WALLET).json()
    assert (wallet["available"], wallet["in_play"], wallet["balance"]) == (0, 1000, 1000)
    entries = auth_client.get(f"{WALLET}/entries").json()["results"]
    assert entries[0]["cause"] == "buy_in" and entries[0]["amount"] == -1000
    assert entries[0]["match"] == f"/api/v1/matches/{response.json()['id']}"


def test_export_holds_the_wallet_and_deletion_sends_it_to_the_house(auth_client):
    user = auth_client.user
    auth_client.post(f"{WALLET}/daily")
    export = auth_client.get("/api/v1/me/export").json()
    assert export["chips"]["wallet"]["available"] == 1200
    assert [e["cause"] for e in export["chips"]["entries"]] == ["signup_grant", "daily_bonus"]
    house = ledger.house_balance()
    response = auth_client.delete("/api/v1/me", {"password": DEFAULT_PASSWORD}, "json")
    assert response.status_code == 204
    assert available(user) == 0 and ledger.house_balance() == house + 1200
    entry = Entry.objects.get(key=f"account_deleted:{user.pk}")
    assert entry.cause == "account_deleted" and entry.data == {"amount": 1200}
    assert_sound()
