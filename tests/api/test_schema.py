"""The OpenAPI schema generates without warnings, validates, and documents the API."""

import pytest
import yaml
from django.core.management import call_command


@pytest.fixture(scope="module")
def schema(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("schema") / "openapi.yaml"
    # --fail-on-warn turns any generator warning (e.g. an undocumented view) into a failure.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    return yaml.safe_load(path.read_text())


def test_schema_documents_the_accounts_api(schema):
    assert schema["info"]["title"] == "Tongits server API"
    paths = schema["paths"]
    register = paths["/api/v1/auth/register"]["post"]
    assert "RegisterInput" in str(register["requestBody"])
    assert {"201", "400"} <= set(register["responses"])
    assert "401" in paths["/api/v1/auth/token"]["post"]["responses"]
    assert "204" in paths["/api/v1/auth/logout"]["post"]["responses"]
    assert "200" in paths["/api/v1/me"]["get"]["responses"]
    assert "tokenAuth" in schema["components"]["securitySchemes"]


NEW_ACCOUNT_OPERATIONS = {
    ("/api/v1/auth/logout-all", "post", "204"),
    ("/api/v1/auth/password-reset", "post", "202"),
    ("/api/v1/auth/password-reset/confirm", "post", "204"),
    ("/api/v1/me", "delete", "204"),
    ("/api/v1/me/sessions", "get", "200"),
    ("/api/v1/me/sessions/{session_id}", "delete", "204"),
    ("/api/v1/me/password", "post", "204"),
    ("/api/v1/me/export", "get", "200"),
}


def test_schema_documents_sessions_passwords_and_leaving(schema):
    paths = schema["paths"]
    for path, method, status in NEW_ACCOUNT_OPERATIONS:
        operation = paths[path][method]
        assert status in operation["responses"], (path, method)
        assert operation.get("summary"), (path, method)
    # Log-in keeps answering {"token": ...} and adds the session.
    login = paths["/api/v1/auth/token"]["post"]["responses"]["200"]["content"]
    ref = login["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert {"token", "session"} <= set(schema["components"]["schemas"][ref]["properties"])
    assert "401" in paths["/api/v1/me/sessions"]["get"]["responses"]
    assert "400" in paths["/api/v1/auth/password-reset/confirm"]["post"]["responses"]


#: Phone sign-in, linking and profiles (docs/accounts.md), with the codes each documents.
SIGN_IN_OPERATIONS = {
    ("/api/v1/auth/device", "post", "201"): {"401": {"invalid_credentials"}},
    ("/api/v1/auth/apple", "post", "201"): {
        "401": {"invalid_id_token"},
        "409": {"login_method_not_configured"},
        "503": {"identity_provider_unavailable", "database_unavailable"},
    },
    ("/api/v1/auth/google", "post", "201"): {"401": {"invalid_id_token"}},
    ("/api/v1/me/logins", "get", "200"): {},
    ("/api/v1/me/logins", "post", "201"): {
        "409": {"login_in_use", "login_exists", "login_method_not_configured"},
        "400": {"username_taken", "username_reserved", "invalid"},
    },
    ("/api/v1/me/logins/{method}", "delete", "204"): {"409": {"last_login"}},
    ("/api/v1/me", "patch", "200"): {"400": {"display_name_refused", "invalid"}},
    ("/api/v1/avatars", "get", "200"): {},
}


def test_schema_documents_sign_in_linking_and_profiles(schema):
    components = schema["components"]["schemas"]
    for (path, method, status), errors in SIGN_IN_OPERATIONS.items():
        operation = schema["paths"][path][method]
        assert status in operation["responses"] and operation.get("summary"), (path, method)
        for code_status, codes in errors.items():
            media = operation["responses"][code_status]["content"]["application/json"]
            ref = media["schema"]["$ref"].rsplit("/", 1)[-1]
            assert codes <= set(components[ref]["properties"]["code"]["enum"]), (path, ref)


def test_errors_are_documented(schema):
    error = schema["components"]["schemas"]["Error"]
    assert {"code", "detail"} <= set(error["required"])


@pytest.mark.django_db
def test_schema_is_served(api_client):
    response = api_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    assert response.json()["info"]["title"] == "Tongits server API"
