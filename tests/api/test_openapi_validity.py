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
