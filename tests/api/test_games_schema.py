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
        if status.startswith(("4", "5")):  # its own error component, with a code enum
            name = "".join(w.capitalize() for w in operation["operationId"].split("_"))
            assert ref == {"$ref": f"#/components/schemas/{name}Error{status}"}
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


#: The fields each command type must carry (a generated client cannot build one without them).
REQUIRED_COMMAND_FIELDS = {
    "draw": {"type"},
    "take_discard": {"type"},  # cards or meld_id: exactly one, checked by the rules core
    "meld": {"type", "cards"},
    "lay_off": {"type", "card", "meld_id"},
    "discard": {"type", "card"},
    "call_draw": {"type"},
    "challenge": {"type"},
    "fold": {"type"},
}


def _resolve(schema: dict, ref: str) -> dict:
    return schema["components"]["schemas"][ref.rsplit("/", 1)[1]]


@pytest.mark.parametrize("component", ["CommandRequest", "Command"])
def test_commands_are_a_oneof_on_type_with_required_fields(schema, component):
    command = schema["components"]["schemas"][component]
    assert command["discriminator"]["propertyName"] == "type"
    mapping = command["discriminator"]["mapping"]
    assert set(mapping) == set(REQUIRED_COMMAND_FIELDS)
    assert sorted(m["$ref"] for m in command["oneOf"]) == sorted(mapping.values())
    for command_type, ref in mapping.items():
        member = _resolve(schema, ref)
        assert set(member["required"]) == REQUIRED_COMMAND_FIELDS[command_type], command_type
        type_enum = member["properties"]["type"]
        if "$ref" in type_enum:
            type_enum = _resolve(schema, type_enum["$ref"])
        assert type_enum["enum"] == [command_type]
        for card_field in ("card",):
            if card_field in member["properties"]:
                assert member["properties"][card_field]["pattern"]


def test_command_body_and_legal_commands_use_the_oneof(schema):
    components = schema["components"]["schemas"]
    body = components["CommandInputRequest"]["properties"]["command"]
    assert body == {"$ref": "#/components/schemas/CommandRequest"}
    legal = components["GamePayload"]["properties"]["legal_commands"]
    assert legal["items"] == {"$ref": "#/components/schemas/Command"}
