"""The live schema validates with openapi-spec-validator, and the generator stays warning-free."""

import pytest
import yaml
from django.core.management import call_command
from openapi_spec_validator import OpenAPIV30SpecValidator

pytestmark = pytest.mark.django_db


def test_live_schema_passes_openapi_spec_validator(api_client):
    response = api_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in OpenAPIV30SpecValidator(response.json()).iter_errors()
    ]
    assert errors == []


def test_spectacular_validate_fail_on_warn(tmp_path):
    path = tmp_path / "openapi.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    assert yaml.safe_load(path.read_text())["openapi"].startswith("3.")


def test_every_example_fits_its_schema(api_client):
    from openapi_schema_validator import OAS30Validator

    schema = api_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    checked = 0
    for methods in schema["paths"].values():
        for operation in methods.values():
            media = [operation.get("requestBody", {}).get("content", {}).get("application/json")]
            media += [
                r.get("content", {}).get("application/json")
                for r in operation["responses"].values()
            ]
            for content in filter(None, media):
                for name, example in content.get("examples", {}).items():
                    document = {**content["schema"], "components": schema["components"]}
                    errors = [
                        e.message for e in OAS30Validator(document).iter_errors(example["value"])
                    ]
                    assert errors == [], (operation["operationId"], name, errors)
                    checked += 1
    assert checked > 50


def test_history_dates_accept_a_date_time_or_a_date(api_client):
    schema = api_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    operation = schema["paths"]["/api/v1/players/{username}/matches"]["get"]
    for parameter in operation["parameters"]:
        if parameter["name"] in ("since", "until"):
            formats = {s["format"] for s in parameter["schema"]["oneOf"]}
            assert formats == {"date-time", "date"}
