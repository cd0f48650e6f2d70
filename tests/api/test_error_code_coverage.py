"""The session-wide error recorder (tests/error_codes.py) sees API errors and flags any code or
status an operation's schema does not declare; every operation's error codes are an enum."""

import pytest

from core.api_schema import codes_for
from tests import error_codes

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def schema() -> dict:
    return error_codes.live_schema()


def test_the_recorder_sees_an_error_by_its_path_template(auth_client):
    response = auth_client.get("/api/v1/games/00000000-0000-0000-0000-000000000000")
    assert response.status_code == 404
    assert ("/api/v1/games/{game_id}", "get", 404, "not_found") in error_codes.SEEN


def test_undeclared_codes_and_statuses_are_reported(schema):
    seen = {
        ("/api/v1/games/{game_id}/commands", "post", 409, "stale_version"),  # declared
        ("/api/v1/games/{game_id}/commands", "post", 409, "made_up_code"),
        ("/api/v1/me", "get", 418, "teapot"),
        ("/api/v1/no-such-endpoint", "get", 404, "not_found"),  # not an operation: skipped
    }
    problems = error_codes.undocumented_errors(seen, schema)
    assert len(problems) == 2
    assert any("made_up_code" in p for p in problems)
    assert any("418" in p for p in problems)


def test_every_error_response_has_a_code_enum(schema):
    components = schema["components"]["schemas"]
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            for status, response in operation["responses"].items():
                if int(status) < 400:
                    continue
                ref = response["content"]["application/json"]["schema"]["$ref"]
                error = components[ref.rsplit("/", 1)[1]]
                enum = error["properties"]["code"]["enum"]
                assert enum == list(codes_for(operation["operationId"], int(status)))
                assert response["content"]["application/json"]["examples"], (path, method)


def test_rules_codes_and_version_on_the_command_errors(schema):
    from games.rules.errors import CODES

    components = schema["components"]["schemas"]
    refused = components["GamesCommandError422"]["properties"]["code"]["enum"]
    assert set(CODES) | {"idempotency_key_reused"} <= set(refused)
    stale = components["GamesCommandError409"]
    assert "stale_version" in stale["properties"]["code"]["enum"]
    assert stale["properties"]["version"]["type"] == "integer"
    assert "fields" in components["GamesCommandError400"]["properties"]
