"""The OpenAPI schema documents every games endpoint: parameters, bodies, answers and errors."""

import pytest
import yaml
from django.core.management import call_command

GAME_OPERATIONS = {
    ("/api/v1/tables", "post"): {"201", "400", "401"},
    ("/api/v1/tables", "get"): {"200", "400", "401"},
    ("/api/v1/tables/{game_id}", "get"): {"200", "401", "404"},
    ("/api/v1/tables/{game_id}/join", "post"): {"200", "400", "401", "404", "409"},
    ("/api/v1/tables/{game_id}/leave", "post"): {"200", "401", "403", "404", "409"},
    ("/api/v1/tables/{game_id}/start", "post"): {"200", "401", "403", "404", "409"},
    ("/api/v1/tables/{game_id}/invitation", "post"): {"200", "400", "401", "404", "409", "429"},
    ("/api/v1/games/{game_id}", "get"): {"200", "401", "403", "404", "409"},
    ("/api/v1/games/{game_id}/commands", "post"): {
        "200",
        "400",
        "401",
        "403",
        "404",
        "409",
        "422",
    },
    ("/api/v1/games/{game_id}/resign", "post"): {"200", "401", "403", "404", "409", "429"},
    ("/api/v1/games/{game_id}/events", "get"): {"200", "400", "401", "403", "404"},
    ("/api/v1/games/{game_id}/replay", "get"): {"200", "400", "401", "403", "404"},
    ("/api/v1/games/{game_id}/audit", "get"): {"200", "401", "403", "404"},
}


@pytest.fixture(scope="module")
def schema(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("schema") / "openapi.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    return yaml.safe_load(path.read_text())


@pytest.mark.parametrize(("path", "method"), sorted(GAME_OPERATIONS))
def test_every_game_operation_is_documented(schema, path, method):
    operation = schema["paths"][path][method]
    assert operation["summary"] and operation["operationId"]
    assert GAME_OPERATIONS[(path, method)] <= set(operation["responses"])
    for status, response in operation["responses"].items():
        ref = response["content"]["application/json"]["schema"]
        if status.startswith(("4", "5")):
            assert ref == {"$ref": "#/components/schemas/Error"}
        else:
            assert ref  # a documented body
    assert {"tokenAuth": []} in operation["security"]


def test_request_bodies_and_parameters(schema):
    paths = schema["paths"]
    command = paths["/api/v1/games/{game_id}/commands"]["post"]
    body = command["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert body.endswith("/CommandInputRequest")
    assert {p["name"] for p in command["parameters"]} == {"game_id", "Idempotency-Key"}
    inputs = schema["components"]["schemas"]["CommandInputRequest"]
    assert set(inputs["required"]) == {"command", "expected_version"}
    events = paths["/api/v1/games/{game_id}/events"]["get"]
    assert {"after", "limit"} <= {p["name"] for p in events["parameters"]}
    replay = paths["/api/v1/games/{game_id}/replay"]["get"]
    assert "at" in {p["name"] for p in replay["parameters"]}
    tables = paths["/api/v1/tables"]["get"]
    assert {"status", "limit", "offset"} <= {p["name"] for p in tables["parameters"]}
    create = paths["/api/v1/tables"]["post"]["requestBody"]["content"]["application/json"]
    assert create["schema"]["$ref"].endswith("/TableCreateInputRequest")


def test_command_types_are_enumerated(schema):
    components = schema["components"]["schemas"]
    command = components["CommandSchemaRequest"]["properties"]["type"]
    enum = components[command["$ref"].rsplit("/", 1)[1]]["enum"]
    assert set(enum) == {
        "draw",
        "take_discard",
        "meld",
        "lay_off",
        "discard",
        "call_draw",
        "challenge",
        "fold",
    }
