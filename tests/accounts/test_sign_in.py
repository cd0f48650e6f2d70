"""Phone sign-in: guests on a device's key, Sign in with Apple and Google against a real key
server on 127.0.0.1 serving keys the test made (RS256 and ES256)."""

from __future__ import annotations

import hashlib
import time

import pytest

from accounts import identity
from accounts.models import Login, Session, User
from tests.accounts.keyserver import (
    APPLE_CLIENT,
    APPLE_ISSUER,
    GOOGLE_CLIENT,
    GOOGLE_ISSUER,
    KeyServer,
    hs256_with_public_key,
    unsigned_token,
)
from tests.chips.support import available

pytestmark = pytest.mark.django_db

DEVICE_KEY = "k" * 20 + "-Z9_abcdefghijklmnop"  # 40 characters


@pytest.fixture(autouse=True)
def configured(providers):
    """Both providers configured against the key server (tests/accounts/conftest.py)."""


def apple_token(keys: KeyServer, key=None, **claims) -> str:
    key = key or keys.keys[0]
    return keys.token(key, **{"iss": APPLE_ISSUER, "aud": APPLE_CLIENT, **claims})


def google_token(keys: KeyServer, key=None, **claims) -> str:
    return keys.token(key, **{"iss": GOOGLE_ISSUER, "aud": GOOGLE_CLIENT, **claims})


# ---------------------------------------------------------------- guests


def test_a_new_device_key_makes_a_guest_account_and_the_same_key_opens_it_again(api_client):
    first = api_client.post(
        "/api/v1/auth/device", {"device_key": DEVICE_KEY, "device": "Pixel"}, format="json"
    )
    assert first.status_code == 201, first.content
    body = first.json()
    assert body["token"] and body["session"]["device"] == "Pixel"
    assert body["user"]["username"].startswith("guest-")
    assert body["user"]["guest"] is True
    user = User.objects.get(pk=body["user"]["id"])
    assert not user.has_usable_password()
    assert available(user) == 1000  # the sign-up grant, as a registration

    again = api_client.post("/api/v1/auth/device", {"device_key": DEVICE_KEY}, format="json")
    assert again.status_code == 200, again.content
    assert again.json()["user"]["id"] == user.pk
    assert again.json()["token"] != body["token"]
    assert Session.objects.filter(user=user).count() == 2
    me = api_client.get("/api/v1/me", HTTP_AUTHORIZATION=f"Token {again.json()['token']}")
    assert me.json()["username"] == user.username


def test_the_server_keeps_only_a_hash_of_the_device_key(api_client):
    api_client.post("/api/v1/auth/device", {"device_key": DEVICE_KEY}, format="json")
    login = Login.objects.get(method="device")
    assert login.subject == hashlib.sha256(DEVICE_KEY.encode()).hexdigest()
    stored = " ".join(str(v) for v in Login.objects.values_list().get())
    assert DEVICE_KEY not in stored


@pytest.mark.parametrize(
    "device_key",
    [
        "a" * 31,
        "a" * 129,
        "a" * 31 + "!",
        "a" * 31 + " ",
        "ä" * 40,
        12345678901234567890123456789012,
    ],
)
def test_a_device_key_of_the_wrong_length_or_characters_is_refused(api_client, device_key):
    answer = api_client.post("/api/v1/auth/device", {"device_key": device_key}, format="json")
    assert answer.status_code == 400
    assert answer.json()["code"] == "invalid"
    assert "device_key" in answer.json()["fields"]
    assert not User.objects.filter(is_bot=False).exists()


def test_two_device_keys_make_two_guests_with_distinct_names(api_client):
    a = api_client.post("/api/v1/auth/device", {"device_key": "a" * 32}, format="json").json()[
        "user"
    ]
    b = api_client.post("/api/v1/auth/device", {"device_key": "b" * 32}, format="json").json()[
        "user"
    ]
    assert a["id"] != b["id"] and a["username"] != b["username"]


def test_new_guests_count_against_the_registration_limit(api_client, settings):
    settings.TONGITS_THROTTLE_RATES = {**settings.TONGITS_THROTTLE_RATES, "register": "2/h"}
    for n in range(2):
        assert (
            api_client.post(
                "/api/v1/auth/device", {"device_key": f"{n}" * 32}, format="json"
            ).status_code
            == 201
        )
    refused = api_client.post("/api/v1/auth/device", {"device_key": "9" * 32}, format="json")
    assert refused.status_code == 429 and refused.json()["code"] == "throttled"
    assert int(refused["Retry-After"]) > 0
    # A known key still signs in: only new accounts are limited.
    assert (
        api_client.post("/api/v1/auth/device", {"device_key": "0" * 32}, format="json").status_code
        == 200
    )
    assert User.objects.filter(is_bot=False).count() == 2


# ---------------------------------------------------------------- Apple and Google


@pytest.mark.parametrize("algorithm", ["RS256", "ES256"])
def test_a_good_apple_token_makes_the_account_then_opens_it(api_client, keys, algorithm):
    key = keys.add_key(algorithm)
    token = apple_token(keys, key, sub="apple-1", email="a@privaterelay.appleid.com")
    first = api_client.post(
        "/api/v1/auth/apple", {"id_token": token, "device": "iPhone"}, format="json"
    )
    assert first.status_code == 201, first.content
    user_id = first.json()["user"]["id"]
    login = Login.objects.get(user_id=user_id)
    assert (login.method, login.subject, login.email) == ("apple", "apple-1", "")
    again = api_client.post(
        "/api/v1/auth/apple", {"id_token": apple_token(keys, key, sub="apple-1")}, format="json"
    )
    assert again.status_code == 200 and again.json()["user"]["id"] == user_id


@pytest.mark.parametrize("algorithm", ["RS256", "ES256"])
def test_a_good_google_token_signs_in_and_keeps_a_verified_email(api_client, keys, algorithm):
    key = keys.add_key(algorithm)
    token = google_token(keys, key, sub="g-1", email="ana@example.com", email_verified=True)
    answer = api_client.post("/api/v1/auth/google", {"id_token": token}, format="json")
    assert answer.status_code == 201, answer.content
    assert Login.objects.get(subject="g-1").email == "ana@example.com"
    assert answer.json()["user"]["email"] == "ana@example.com"


def test_an_unverified_email_is_not_kept(api_client, keys):
    key = keys.add_key("RS256")
    token = google_token(keys, key, sub="g-2", email="x@example.com", email_verified=False)
    assert (
        api_client.post("/api/v1/auth/google", {"id_token": token}, format="json").status_code
        == 201
    )
    assert Login.objects.get(subject="g-2").email == ""
    assert User.objects.get(logins__subject="g-2").email == ""


def test_google_accepts_both_of_its_issuer_spellings(api_client, keys):
    key = keys.add_key("RS256")
    for n, issuer in enumerate(["https://accounts.google.com", "accounts.google.com"]):
        token = google_token(keys, key, sub=f"iss-{n}", iss=issuer)
        assert (
            api_client.post("/api/v1/auth/google", {"id_token": token}, format="json").status_code
            == 201
        )


def test_the_account_is_found_by_subject_never_by_email(api_client, keys):
    key = keys.add_key("RS256")
    same_mail = {"email": "same@example.com", "email_verified": True}
    one = google_token(keys, key, sub="s-1", **same_mail)
    two = google_token(keys, key, sub="s-2", **same_mail)
    a = api_client.post("/api/v1/auth/google", {"id_token": one}, format="json").json()["user"][
        "id"
    ]
    b = api_client.post("/api/v1/auth/google", {"id_token": two}, format="json")
    assert b.status_code == 201 and b.json()["user"]["id"] != a


def _forgeries(keys: KeyServer) -> dict[str, str]:
    good = keys.add_key("RS256")
    other = keys.add_key("ES256")
    stranger = KeyServer().add_key("RS256")  # never published
    now = int(time.time())
    # The same claims signed by a key that is not the one the header names.
    impostor = type(good)(good.kid, "RS256", stranger.private)
    return {
        "wrong signature": apple_token(keys, impostor),
        "wrong aud": apple_token(keys, good, aud="com.someone.else"),
        "wrong iss": apple_token(keys, good, iss="https://evil.example.com"),
        "expired": apple_token(keys, good, iat=now - 7200, exp=now - 3600),
        "iat in the future": apple_token(keys, good, iat=now + 3600, exp=now + 7200),
        "alg none": unsigned_token(good.kid, iss=APPLE_ISSUER, aud=APPLE_CLIENT),
        "hs256 with the public key": hs256_with_public_key(
            good, iss=APPLE_ISSUER, aud=APPLE_CLIENT
        ),
        "ES256 key, RS256 header": apple_token(keys, type(good)(other.kid, "RS256", good.private)),
        "unknown kid": apple_token(keys, stranger),
        "no sub": apple_token(keys, good, sub=None),
        "not a jwt": "not.a.jwt",
        "valid": apple_token(keys, good),
    }


@pytest.mark.parametrize(
    ("case", "check"),
    [
        ("wrong signature", "signature"),
        ("wrong aud", "another app"),
        ("wrong iss", "another issuer"),
        ("expired", "expired"),
        ("iat in the future", "future"),
        ("alg none", "algorithm"),
        ("hs256 with the public key", "algorithm"),
        ("ES256 key, RS256 header", "algorithm"),
        ("unknown kid", "signing key is unknown"),
        ("no sub", "sub"),
        ("not a jwt", "not a JWT"),
    ],
)
def test_each_failed_check_is_a_401_naming_it_and_makes_no_account(api_client, keys, case, check):
    tokens = _forgeries(keys)
    answer = api_client.post("/api/v1/auth/apple", {"id_token": tokens[case]}, format="json")
    assert answer.status_code == 401, (case, answer.content)
    assert answer.json()["code"] == "invalid_id_token"
    assert check in answer.json()["detail"], answer.json()["detail"]
    assert not User.objects.filter(is_bot=False).exists() and not Login.objects.exists()
    # The same key set and client accept a good token: the refusal was the token's.
    assert (
        api_client.post(
            "/api/v1/auth/apple", {"id_token": tokens["valid"]}, format="json"
        ).status_code
        == 201
    )


def test_an_unknown_kid_is_looked_up_once_more_then_refused(api_client, keys):
    good = keys.add_key("RS256")
    assert (
        api_client.post(
            "/api/v1/auth/apple", {"id_token": apple_token(keys, good)}, format="json"
        ).status_code
        == 201
    )
    before = keys.fetches
    stranger = KeyServer().add_key("RS256")
    answer = api_client.post(
        "/api/v1/auth/apple", {"id_token": apple_token(keys, stranger)}, format="json"
    )
    assert answer.status_code == 401 and answer.json()["code"] == "invalid_id_token"
    assert keys.fetches == before + 1  # one refetch, then the verdict


def test_a_rotated_key_is_used_without_a_restart(api_client, keys):
    old = keys.add_key("RS256")
    assert (
        api_client.post(
            "/api/v1/auth/apple", {"id_token": apple_token(keys, old, sub="r")}, format="json"
        ).status_code
        == 201
    )
    new = keys.add_key("ES256")  # published after this process fetched the set
    keys.keys.remove(old)
    answer = api_client.post(
        "/api/v1/auth/apple", {"id_token": apple_token(keys, new, sub="r")}, format="json"
    )
    assert answer.status_code == 200, answer.content


def test_made_up_key_ids_cost_the_provider_one_fetch_per_cool_down(api_client, keys, settings):
    settings.TONGITS_JWKS_REFETCH_COOLDOWN_SECONDS = 600.0
    identity._clients.clear()
    good = keys.add_key("RS256")
    assert (
        api_client.post(
            "/api/v1/auth/apple", {"id_token": apple_token(keys, good)}, format="json"
        ).status_code
        == 201
    )
    before = keys.fetches
    for _ in range(10):
        stranger = KeyServer().add_key("RS256")
        token = apple_token(keys, stranger)
        assert (
            api_client.post("/api/v1/auth/apple", {"id_token": token}, format="json").status_code
            == 401
        )
    assert keys.fetches == before  # the first fetch started the cool-down


def test_the_nonce_must_be_the_apps_or_its_sha256(api_client, keys):
    key = keys.add_key("RS256")
    raw = "n-0nce-from-the-app"
    hashed = hashlib.sha256(raw.encode()).hexdigest()
    plain = apple_token(keys, key, sub="n1", nonce=raw)
    assert (
        api_client.post(
            "/api/v1/auth/apple", {"id_token": plain, "nonce": raw}, format="json"
        ).status_code
        == 201
    )
    as_hash = apple_token(keys, key, sub="n2", nonce=hashed)
    assert (
        api_client.post(
            "/api/v1/auth/apple", {"id_token": as_hash, "nonce": raw}, format="json"
        ).status_code
        == 201
    )
    other = apple_token(keys, key, sub="n3", nonce="someone-elses")
    refused = api_client.post(
        "/api/v1/auth/apple", {"id_token": other, "nonce": raw}, format="json"
    )
    assert refused.status_code == 401 and "nonce" in refused.json()["detail"]
    missing = apple_token(keys, key, sub="n4")
    assert (
        api_client.post(
            "/api/v1/auth/apple", {"id_token": missing, "nonce": raw}, format="json"
        ).status_code
        == 401
    )
    assert not Login.objects.filter(subject__in=["n3", "n4"]).exists()


def test_a_provider_without_a_client_id_is_not_configured(api_client, keys, settings):
    settings.TONGITS_GOOGLE_CLIENT_IDS = []
    key = keys.add_key("RS256")
    answer = api_client.post(
        "/api/v1/auth/google", {"id_token": google_token(keys, key)}, format="json"
    )
    assert answer.status_code == 409
    assert answer.json()["code"] == "login_method_not_configured"


def test_unreachable_keys_are_a_503_to_retry(api_client, keys, settings):
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.TONGITS_APPLE_JWKS_URL = f"http://127.0.0.1:{port}/keys"
    key = keys.add_key("RS256")
    answer = api_client.post(
        "/api/v1/auth/apple", {"id_token": apple_token(keys, key)}, format="json"
    )
    assert answer.status_code == 503
    assert answer.json()["code"] == "identity_provider_unavailable"
    assert answer["Retry-After"]
    assert not User.objects.filter(is_bot=False).exists()
