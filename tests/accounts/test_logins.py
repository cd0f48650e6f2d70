"""Linking: a guest keeps their account by adding Apple, Google or a password; an identity is
never moved between accounts; the last way in stays."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from accounts.models import Login, User
from accounts.tasks import settle_match_now
from games import lobby
from tests.accounts.keyserver import GOOGLE_CLIENT, GOOGLE_ISSUER
from tests.chips.support import available, play_to_the_end

pytestmark = pytest.mark.django_db

KEY = "guest-phone-key-" + "x" * 24


def google_token(keys, sub: str, **claims) -> str:
    key = keys.keys[0] if keys.keys else keys.add_key("ES256")
    return keys.token(key, iss=GOOGLE_ISSUER, aud=GOOGLE_CLIENT, sub=sub, **claims)


def signed_in(body: dict) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {body['token']}")
    return client


def guest(device_key: str = KEY) -> tuple[APIClient, dict]:
    answer = APIClient().post("/api/v1/auth/device", {"device_key": device_key}, format="json")
    assert answer.status_code in (200, 201), answer.content
    return signed_in(answer.json()), answer.json()["user"]


def wallet(client: APIClient) -> dict:
    """The wallet as GET /me/wallet shows it, but the moment the next bonus falls due (now)."""
    body = client.get("/api/v1/me/wallet").json()
    body["daily_bonus"].pop("next_at")
    return body


def methods(client: APIClient) -> list[str]:
    answer = client.get("/api/v1/me/logins")
    assert answer.status_code == 200
    return [entry["method"] for entry in answer.json()]


def test_a_guest_who_links_google_has_the_same_wallet_history_and_rating_on_a_second_device(
    providers,
):
    phone, me = guest()
    user = User.objects.get(pk=me["id"])
    seats = [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}]
    rules = {"preset": "standard", "wins_to_match": 1, "turn_seconds": 30}
    game = lobby.table_create(user=user, rules=rules, seats=seats, rated=True, buy_in=100)
    play_to_the_end(game.pk, {0: user})
    assert settle_match_now(str(game.pk)) == "settled"
    before = {
        "wallet": wallet(phone),
        "history": phone.get(f"/api/v1/players/{me['username']}/matches").json(),
        "stats": phone.get(f"/api/v1/players/{me['username']}/stats").json(),
    }
    assert before["stats"]["matches"] == 1 and len(before["history"]["results"]) == 1

    linked = phone.post(
        "/api/v1/me/logins",
        {"method": "google", "id_token": google_token(providers, "g-guest")},
        format="json",
    )
    assert linked.status_code == 201, linked.content
    assert linked.json()["login"]["method"] == "google"
    assert methods(phone) == ["device", "google"]

    second = APIClient().post(
        "/api/v1/auth/google",
        {"id_token": google_token(providers, "g-guest"), "device": "tablet"},
        format="json",
    )
    assert second.status_code == 200, second.content
    tablet = signed_in(second.json())
    assert second.json()["user"]["id"] == me["id"]
    assert wallet(tablet) == before["wallet"]
    assert tablet.get(f"/api/v1/players/{me['username']}/matches").json() == before["history"]
    assert tablet.get(f"/api/v1/players/{me['username']}/stats").json() == before["stats"]
    assert before["wallet"]["available"] == available(user)
    # The phone's session lives on beside the tablet's.
    assert phone.get("/api/v1/me").status_code == 200
    assert len(tablet.get("/api/v1/me/sessions").json()) == 2


def test_an_identity_of_another_account_is_refused_and_never_moved(providers):
    first, _ = guest("a" * 40)
    assert (
        first.post(
            "/api/v1/me/logins",
            {"method": "google", "id_token": google_token(providers, "g-1")},
            format="json",
        ).status_code
        == 201
    )
    second, _ = guest("b" * 40)
    refused = second.post(
        "/api/v1/me/logins",
        {"method": "google", "id_token": google_token(providers, "g-1")},
        format="json",
    )
    assert refused.status_code == 409 and refused.json()["code"] == "login_in_use"
    device = second.post(
        "/api/v1/me/logins", {"method": "device", "device_key": "a" * 40}, format="json"
    )
    assert device.status_code == 409 and device.json()["code"] == "login_in_use"
    assert methods(second) == ["device"]
    assert Login.objects.get(subject="g-1").user.logins.count() == 2


def test_the_same_identity_again_is_no_change_and_another_of_its_kind_is_refused(providers):
    client, _ = guest()
    link = {"method": "google", "id_token": google_token(providers, "g-1")}
    assert client.post("/api/v1/me/logins", link, format="json").status_code == 201
    again = client.post("/api/v1/me/logins", link, format="json")
    assert again.status_code == 200 and again.json()["login"]["method"] == "google"
    other = {"method": "google", "id_token": google_token(providers, "g-2")}
    refused = client.post("/api/v1/me/logins", other, format="json")
    assert refused.status_code == 409 and refused.json()["code"] == "login_exists"
    device = client.post(
        "/api/v1/me/logins", {"method": "device", "device_key": "z" * 40}, format="json"
    )
    assert device.status_code == 409 and device.json()["code"] == "login_exists"


def test_the_last_way_in_cannot_be_removed(providers):
    client, _ = guest()
    last = client.delete("/api/v1/me/logins/device")
    assert last.status_code == 409 and last.json()["code"] == "last_login"
    link = {"method": "google", "id_token": google_token(providers, "g-1")}
    assert client.post("/api/v1/me/logins", link, format="json").status_code == 201
    assert client.delete("/api/v1/me/logins/device").status_code == 204
    assert methods(client) == ["google"]
    assert client.delete("/api/v1/me/logins/google").json()["code"] == "last_login"
    assert client.delete("/api/v1/me/logins/apple").status_code == 404
    assert client.delete("/api/v1/me/logins/carrier-pigeon").status_code == 404
    # The removed key is free: it signs up afresh, as a new guest.
    fresh = APIClient().post("/api/v1/auth/device", {"device_key": KEY}, format="json")
    assert fresh.status_code == 201


def test_a_guest_becomes_a_named_account_with_a_username_and_password(user_factory):
    user_factory(username="taken")
    client, me = guest()
    taken = client.post(
        "/api/v1/me/logins",
        {"method": "password", "username": "TAKEN", "password": "tongits-forever-7"},
        format="json",
    )
    assert taken.status_code == 400 and taken.json()["code"] == "username_taken"
    reserved = client.post(
        "/api/v1/me/logins",
        {"method": "password", "username": "bot-mine", "password": "tongits-forever-7"},
        format="json",
    )
    assert reserved.status_code == 400 and reserved.json()["code"] == "username_reserved"
    weak = client.post(
        "/api/v1/me/logins",
        {"method": "password", "username": "dana", "password": "12345678"},
        format="json",
    )
    assert weak.status_code == 400 and weak.json()["code"] == "invalid"
    named = client.post(
        "/api/v1/me/logins",
        {"method": "password", "username": "dana", "password": "tongits-forever-7"},
        format="json",
    )
    assert named.status_code == 201, named.content
    assert [e["method"] for e in named.json()["logins"]] == ["password", "device"]
    assert methods(client) == ["password", "device"]
    me_now = client.get("/api/v1/me").json()
    assert me_now["username"] == "dana" and me_now["guest"] is False and me_now["id"] == me["id"]
    token = APIClient().post(
        "/api/v1/auth/token",
        {"username": "dana", "password": "tongits-forever-7"},
        format="json",
    )
    assert token.status_code == 200
    assert signed_in(token.json()).get("/api/v1/me").json()["id"] == me["id"]
    again = client.post(
        "/api/v1/me/logins",
        {"method": "password", "username": "dana2", "password": "tongits-forever-7"},
        format="json",
    )
    assert again.status_code == 409 and again.json()["code"] == "login_exists"


def test_a_body_must_fit_its_method(auth_client):
    missing = auth_client.post("/api/v1/me/logins", {"method": "google"}, format="json")
    assert missing.status_code == 400 and "id_token" in missing.json()["fields"]
    foreign = auth_client.post(
        "/api/v1/me/logins",
        {"method": "device", "device_key": "k" * 40, "password": "x"},
        format="json",
    )
    assert foreign.status_code == 400 and "password" in foreign.json()["fields"]
    unknown = auth_client.post("/api/v1/me/logins", {"method": "sms"}, format="json")
    assert unknown.status_code == 400 and "method" in unknown.json()["fields"]


def test_the_list_of_logins_never_holds_a_secret(providers):
    client, _ = guest()
    token = google_token(providers, "g-secret-sub", email="ana@example.com", email_verified=True)
    client.post("/api/v1/me/logins", {"method": "google", "id_token": token}, format="json")
    listing = client.get("/api/v1/me/logins")
    text = listing.content.decode()
    assert KEY not in text and "g-secret-sub" not in text
    assert Login.objects.get(method="device").subject not in text
    google = next(e for e in listing.json() if e["method"] == "google")
    assert google["email"] == "ana@example.com"


def test_deleting_an_account_frees_its_identities_and_the_export_lists_them(providers):
    client, me = guest()
    token = google_token(providers, "g-leaving")
    client.post("/api/v1/me/logins", {"method": "google", "id_token": token}, format="json")
    export = client.get("/api/v1/me/export").json()
    assert [e["method"] for e in export["logins"]] == ["device", "google"]

    wrong = client.delete("/api/v1/me", {"confirm": "someone-else"}, format="json")
    assert wrong.status_code == 400 and wrong.json()["code"] == "wrong_confirmation"
    deleted = client.delete("/api/v1/me", {"confirm": me["username"]}, format="json")
    assert deleted.status_code == 204
    assert not Login.objects.filter(user_id=me["id"]).exists()

    again = APIClient().post("/api/v1/auth/google", {"id_token": token}, format="json")
    assert again.status_code == 201 and again.json()["user"]["id"] != me["id"]
