"""GET /healthz: the health check of load balancers and of docker/compose.yaml's web service."""

from __future__ import annotations

import pytest
from django.db import OperationalError
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from tongits_site import health


@pytest.mark.django_db
def test_healthy_when_the_database_answers(client: Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]
    assert client.head("/healthz").status_code == 200


@pytest.mark.django_db
def test_only_reads(client: Client) -> None:
    assert client.post("/healthz").status_code == 405


def test_unavailable_when_the_database_does_not_answer(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    class DeadConnection:
        def cursor(self) -> None:
            raise OperationalError("connection refused")

    monkeypatch.setattr(health, "connection", DeadConnection())
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"


def test_not_part_of_the_api_schema() -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    assert "/healthz" not in schema["paths"]
