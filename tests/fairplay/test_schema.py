"""Fair play is typed in the OpenAPI schema: its operations, their codes, and 403
account_suspended wherever a suspended account's key or log-in is refused."""

import pytest
import yaml
from django.core.management import call_command


@pytest.fixture(scope="module")
def schema(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("schema") / "openapi.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    return yaml.safe_load(path.read_text())


def _codes(schema: dict, path: str, method: str, status: str) -> set[str]:
    response = schema["paths"][path][method]["responses"][status]
    name = response["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    return set(schema["components"]["schemas"][name]["properties"]["code"]["enum"])


def test_fair_play_is_typed(schema):
    components = schema["components"]["schemas"]
    assert components["CaseKindEnum"]["enum"] == ["collusion", "chip_dumping", "cheating"]
    entry = components["CaseEntry"]["properties"]
    assert entry["accounts"]["items"]["type"] == "string" and entry["score"]["type"] == "number"
    detail = components["CaseDetail"]["properties"]
    assert {"events", "reports", "chip_flow", "links", "exports", "accounts"} <= set(detail)
    decision = components["DecisionInputRequest"]["properties"]
    assert decision["decision"]["$ref"] == "#/components/schemas/DecisionInputDecisionEnum"
    assert components["DecisionInputDecisionEnum"]["enum"] == [
        "dismiss",
        "warn",
        "suspend",
        "confiscate",
    ]
    assert components["SuspensionInputRequest"]["properties"]["until"]["nullable"] is True
    report = "/api/v1/games/{game_id}/reports"
    assert _codes(schema, report, "post", "409") >= {"already_reported", "game_not_finished"}
    assert "throttled" in _codes(schema, report, "post", "429")
    assert "case_decided" in _codes(schema, "/api/v1/staff/cases/{case_id}/decision", "post", "409")
    assert _codes(schema, "/api/v1/me/appeals", "post", "409") == {
        "not_suspended",
        "already_appealed",
    }
    assert "permission_denied" in _codes(schema, "/api/v1/staff/cases", "get", "403")


def test_account_suspended_is_documented_where_it_is_answered(schema):
    for path, method in (
        ("/api/v1/auth/token", "post"),
        ("/api/v1/auth/device", "post"),
        ("/api/v1/me", "get"),
        ("/api/v1/tables", "post"),
        ("/api/v1/matchmaking/tickets", "post"),
        ("/api/v1/me/wallet/daily", "post"),
        ("/api/v1/games/{game_id}/chat", "post"),
    ):
        assert "account_suspended" in _codes(schema, path, method, "403"), path
    token = schema["paths"]["/api/v1/auth/token"]["post"]["responses"]["403"]
    name = token["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    suspension = schema["components"]["schemas"][name]["properties"]["suspension"]
    assert set(suspension["properties"]) == {"until", "appeal", "appeal_token"}
    for path in ("/api/v1/me/sanctions", "/api/v1/me/appeals", "/api/v1/auth/logout"):
        responses = next(iter(schema["paths"][path].values()))["responses"]
        assert "403" not in responses, path  # a suspended account's key opens these
