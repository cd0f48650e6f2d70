"""The store's operations are typed in the OpenAPI schema, each refusal's code in its enum."""

import pytest
import yaml
from django.core.management import call_command


@pytest.fixture(scope="module")
def schema(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("schema") / "openapi.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    return yaml.safe_load(path.read_text())


def _codes(schema: dict, path: str, status: str) -> set[str]:
    response = schema["paths"][path]["post"]["responses"][status]
    name = response["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    return set(schema["components"]["schemas"][name]["properties"]["code"]["enum"])


def test_the_store_is_typed_in_the_schema(schema):
    components = schema["components"]["schemas"]
    credited = components["Credited"]["properties"]
    assert credited["chips"]["type"] == "integer" and credited["replayed"]["type"] == "boolean"
    assert credited["wallet"]["allOf"][0]["$ref"].endswith("/Wallet")
    assert components["Wallet"]["properties"]["owed"]["type"] == "integer"
    assert set(components["Product"]["properties"]) == {"store", "product_id", "chips"}
    apple = "/api/v1/store/apple/transactions"
    assert {"200", "201", "400", "409", "422", "503"} <= set(
        schema["paths"][apple]["post"]["responses"]
    )
    assert _codes(schema, apple, "422") >= {
        "unknown_product",
        "wrong_app",
        "wrong_environment",
        "purchase_revoked",
    }
    assert "purchase_claimed" in _codes(schema, apple, "409")
    google = "/api/v1/store/google/purchases"
    assert _codes(schema, google, "422") >= {
        "purchase_pending",
        "purchase_cancelled",
        "purchase_consumed",
        "invalid_purchase_token",
    }
    assert "invalid_push_token" in _codes(schema, "/api/v1/store/google/notifications", "401")
    settlement = components["Settlement"]["properties"]
    assert {"fee_percent", "fees", "net"} <= set(settlement)
    assert "chips_owed" in _codes(schema, "/api/v1/me/wallet/daily", "409")
