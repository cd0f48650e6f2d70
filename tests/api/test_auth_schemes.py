"""``Bearer`` and ``Token`` both authenticate; log-in, register and public reads ignore a stale
``Authorization`` header (a second device can log back in after the first logged out)."""

import pytest

from tests.conftest import DEFAULT_PASSWORD

pytestmark = pytest.mark.django_db

ME = "/api/v1/me"
PUBLIC_READS = [
    "/api/v1/leaderboard",
    "/api/v1/players/{username}/stats",
    "/api/v1/players/{username}/matches",
]


@pytest.mark.parametrize("keyword", ["Token", "Bearer", "bearer", "TOKEN"])
def test_both_keywords_authenticate(api_client, auth_client, keyword):
    api_client.credentials(HTTP_AUTHORIZATION=f"{keyword} {auth_client.token}")
    response = api_client.get(ME)
    assert response.status_code == 200, response.content
    assert response.json()["username"] == auth_client.user.username


@pytest.mark.parametrize("keyword", ["Bearer", "Token"])
def test_a_revoked_token_is_refused_with_either_keyword(api_client, auth_client, keyword):
    assert auth_client.post("/api/v1/auth/logout").status_code == 204
    api_client.credentials(HTTP_AUTHORIZATION=f"{keyword} {auth_client.token}")
    response = api_client.get(ME)
    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"


def test_another_scheme_is_not_authenticated(api_client, auth_client):
    api_client.credentials(HTTP_AUTHORIZATION=f"Basic {auth_client.token}")
    assert api_client.get(ME).json()["code"] == "not_authenticated"


def test_a_revoked_token_can_still_log_in_and_register(api_client, auth_client):
    user = auth_client.user
    assert auth_client.post("/api/v1/auth/logout").status_code == 204
    # The second device still sends the revoked token with its log-in.
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {auth_client.token}")
    login = api_client.post(
        "/api/v1/auth/token", {"username": user.username, "password": DEFAULT_PASSWORD}, "json"
    )
    assert login.status_code == 200, login.content
    assert login.json()["token"] != auth_client.token
    register = api_client.post(
        "/api/v1/auth/register", {"username": "newcomer", "password": DEFAULT_PASSWORD}, "json"
    )
    assert register.status_code == 201, register.content


@pytest.mark.parametrize("path", PUBLIC_READS)
def test_public_reads_ignore_a_bad_token(api_client, user_factory, path):
    user = user_factory()
    api_client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    response = api_client.get(path.format(username=user.username))
    assert response.status_code == 200, response.content


def test_schema_declares_bearer_and_no_auth_on_public_operations():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    scheme = schema["components"]["securitySchemes"]["tokenAuth"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    paths = schema["paths"]
    for path, method in [
        ("/api/v1/auth/token", "post"),
        ("/api/v1/auth/register", "post"),
        ("/api/v1/leaderboard", "get"),
        ("/api/v1/players/{username}/stats", "get"),
        ("/api/v1/players/{username}/matches", "get"),
        ("/api/v1/matches/{game_id}", "get"),
    ]:
        operation = paths[path][method]
        assert all("tokenAuth" not in s for s in operation.get("security", [{}])), path
        assert "401" not in operation["responses"] or path == "/api/v1/auth/token"
    assert {"tokenAuth": []} in paths["/api/v1/me"]["get"]["security"]
