"""The OpenAPI schema documents the live endpoints: streams as text/event-stream."""

import pytest
import yaml
from django.core.management import call_command


@pytest.fixture(scope="module")
def schema(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("schema") / "openapi.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    return yaml.safe_load(path.read_text())


@pytest.mark.parametrize(
    ("path", "errors"),
    [
        ("/api/v1/games/{game_id}/stream", {"400", "401", "403", "404", "409", "429"}),
        ("/api/v1/me/stream", {"401", "429"}),
    ],
)
def test_streams_are_event_streams_with_json_errors(schema, path, errors):
    operation = schema["paths"][path]["get"]
    assert set(operation["responses"]["200"]["content"]) == {"text/event-stream"}
    assert errors <= set(operation["responses"])
    for status in errors:
        content = operation["responses"][status]["content"]["application/json"]
        assert content["schema"]["$ref"].endswith(f"StreamError{status}")  # a code enum
    # The cap on open streams: 429 too_many_streams (beside the read throttle's code), with
    # retry_after and the Retry-After header.
    too_many = operation["responses"]["429"]
    assert "Retry-After" in too_many["headers"]
    name = too_many["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    error = schema["components"]["schemas"][name]["properties"]
    assert error["code"]["enum"] == ["throttled", "too_many_streams"]
    assert error["retry_after"]["type"] == "integer"
    names = {p["name"] for p in operation["parameters"]}
    assert "ticket" in names
    assert {"tokenAuth": []} in operation["security"]
    assert {"streamTicket": []} in operation["security"]


def test_long_poll_and_feeds_are_documented(schema):
    paths = schema["paths"]
    events = paths["/api/v1/games/{game_id}/events"]["get"]
    assert {"after", "limit", "wait"} <= {p["name"] for p in events["parameters"]}
    assert "Last-Event-ID" in {
        p["name"] for p in paths["/api/v1/games/{game_id}/stream"]["get"]["parameters"]
    }
    for path in ("/api/v1/games/{game_id}/stream-ticket", "/api/v1/me/stream-ticket"):
        assert "201" in paths[path]["post"]["responses"]
    assert "200" in paths["/api/v1/me/games"]["get"]["responses"]
    payload = schema["components"]["schemas"]["GamePayload"]["properties"]
    assert "server_time" in payload
