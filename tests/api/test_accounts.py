import pytest
from knox.crypto import hash_token

from accounts.models import Session
from tests.conftest import DEFAULT_PASSWORD

pytestmark = [pytest.mark.django_db, pytest.mark.real_password_hashing]

REGISTER = "/api/v1/auth/register"
TOKEN = "/api/v1/auth/token"
LOGOUT = "/api/v1/auth/logout"
ME = "/api/v1/me"


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["code"] == code, body
    assert isinstance(body["detail"], str) and body["detail"]
    return body


def register(client, username="alice", password=DEFAULT_PASSWORD, **extra):
    return client.post(REGISTER, {"username": username, "password": password, **extra}, "json")


def test_register_returns_user_and_a_working_token(api_client):
    response = register(api_client, email="alice@example.com")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["user"]["username"] == "alice"
    assert body["user"]["email"] == "alice@example.com"
    assert "password" not in body["user"]
    [session] = Session.objects.filter(user__username="alice")
    assert session.digest == hash_token(body["token"])
    assert body["session"]["id"] == str(session.pk) and body["session"]["current"] is True

    api_client.credentials(HTTP_AUTHORIZATION=f"Token {body['token']}")
    me = api_client.get(ME)
    assert me.status_code == 200
    assert me.json()["id"] == body["user"]["id"]


def test_register_email_is_optional(api_client):
    response = register(api_client)
    assert response.status_code == 201, response.content
    assert response.json()["user"]["email"] == ""


@pytest.mark.parametrize("username", ["bob", "BOB"])
def test_register_duplicate_username_is_refused(api_client, user_factory, username):
    user_factory(username="bob")
    assert_error(register(api_client, username=username), 400, "username_taken")


def test_register_weak_password_is_refused_with_field_messages(api_client):
    body = assert_error(register(api_client, password="123"), 400, "invalid")
    assert body["fields"]["password"]
    assert "password" in body["detail"]


def test_register_password_like_the_username_is_refused(api_client):
    body = assert_error(
        register(api_client, username="carolina", password="carolina1"), 400, "invalid"
    )
    assert "password" in body["fields"]


def test_register_missing_fields(api_client):
    body = assert_error(api_client.post(REGISTER, {}, "json"), 400, "invalid")
    assert set(body["fields"]) == {"username", "password"}


@pytest.mark.parametrize(
    "payload",
    [
        {"username": "bad name!", "password": DEFAULT_PASSWORD},
        {"username": "x" * 151, "password": DEFAULT_PASSWORD},
        {"username": "nul\x00", "password": DEFAULT_PASSWORD},
        {"username": "zo\u00eb", "password": DEFAULT_PASSWORD},
        {"username": ["alice"], "password": DEFAULT_PASSWORD},
        {"username": "dave", "password": DEFAULT_PASSWORD, "email": "not-an-email"},
        {"username": "dave", "password": "p" * 1000},
    ],
)
def test_register_bad_input_is_a_400_not_a_500(api_client, payload):
    assert_error(api_client.post(REGISTER, payload, "json"), 400, "invalid")


def test_register_body_that_is_not_an_object(api_client):
    assert_error(api_client.post(REGISTER, [1, 2], "json"), 400, "invalid")


def test_token_login(api_client, user_factory):
    user = user_factory(username="erin")
    response = api_client.post(TOKEN, {"username": "erin", "password": DEFAULT_PASSWORD}, "json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"token", "session"}
    assert Session.objects.get(user=user).digest == hash_token(body["token"])
    # Log-in ignores the case of the username; a second log-in is a second session.
    again = api_client.post(TOKEN, {"username": "ERIN", "password": DEFAULT_PASSWORD}, "json")
    assert again.status_code == 200 and again.json()["token"] != body["token"]
    assert Session.objects.filter(user=user).count() == 2


@pytest.mark.parametrize(
    ("username", "password"), [("frank", "wrong-password"), ("nobody", DEFAULT_PASSWORD)]
)
def test_token_bad_credentials(api_client, user_factory, username, password):
    user_factory(username="frank")
    response = api_client.post(TOKEN, {"username": username, "password": password}, "json")
    assert_error(response, 401, "invalid_credentials")
    assert response["WWW-Authenticate"] == "Token"


def test_token_inactive_user_cannot_log_in(api_client, user_factory):
    user_factory(username="grace", is_active=False)
    response = api_client.post(TOKEN, {"username": "grace", "password": DEFAULT_PASSWORD}, "json")
    assert_error(response, 401, "invalid_credentials")


def test_token_missing_password(api_client):
    body = assert_error(api_client.post(TOKEN, {"username": "x"}, "json"), 400, "invalid")
    assert "password" in body["fields"]


def test_logout_invalidates_the_token(auth_client):
    assert auth_client.get(ME).status_code == 200
    response = auth_client.post(LOGOUT)
    assert response.status_code == 204
    assert not Session.objects.filter(user=auth_client.user).exists()
    assert_error(auth_client.get(ME), 401, "authentication_failed")


def test_logout_requires_auth(api_client):
    assert_error(api_client.post(LOGOUT), 401, "not_authenticated")


def test_me(auth_client):
    response = auth_client.get(ME)
    assert response.status_code == 200
    body = response.json()
    assert body["username"] == auth_client.user.username
    assert set(body) == {
        "id",
        "username",
        "email",
        "date_joined",
        "display_name",
        "avatar",
        "country",
        "language",
        "guest",
        "show_presence",
    }
    assert body["display_name"] == auth_client.user.username  # until one is chosen
    assert body["guest"] is False and body["language"] == "" and body["country"] == ""


def test_me_requires_auth(api_client):
    response = api_client.get(ME)
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Token"


def test_me_with_a_bad_token(api_client):
    api_client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert_error(api_client.get(ME), 401, "authentication_failed")


def test_malformed_json_is_a_parse_error(api_client):
    response = api_client.post(REGISTER, '{"username": "x",', content_type="application/json")
    assert_error(response, 400, "parse_error")


def test_invalid_utf8_is_a_parse_error(api_client):
    response = api_client.post(REGISTER, b'{"username": "\xff"}', content_type="application/json")
    assert_error(response, 400, "parse_error")


def test_wrong_content_type_is_415(api_client):
    response = api_client.post(REGISTER, "username=x", content_type="text/plain")
    assert_error(response, 415, "unsupported_media_type")


def test_wrong_method_is_405(api_client):
    assert_error(api_client.get(REGISTER), 405, "method_not_allowed")


@pytest.mark.parametrize("path", ["/api/v1/nope", "/api/v1/auth/register/", "/api/", "/api/v2/me"])
def test_unknown_api_urls_are_json_404(api_client, path):
    assert_error(api_client.get(path), 404, "not_found")
