"""GET /healthz: the health check of load balancers and of docker/compose.yaml's web service.
The database taken away from a running server: tests/live/test_health_database_away.py."""

from __future__ import annotations

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from ops import health


@pytest.mark.django_db
def test_healthy_when_the_database_answers(client: Client) -> None:
    from games import scheduling

    scheduling.heartbeat(scheduling.SWEEPER)  # the sweeper ran just now
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]
    assert client.head("/healthz").status_code == 200


@pytest.mark.django_db
def test_only_reads(client: Client) -> None:
    assert client.post("/healthz").status_code == 405


def test_not_part_of_the_api_schema() -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    assert "/healthz" not in schema["paths"]


@pytest.mark.django_db
def test_503_naming_the_sweeper_when_it_is_late(
    client: Client, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from games import scheduling

    settings.TONGITS_SWEEP_INTERVAL_SECONDS = 10
    monkeypatch.setattr(health, "STARTED", 0.0)  # the web process is not starting up
    scheduling.heartbeat(scheduling.SWEEPER, timezone.now() - timedelta(seconds=25))
    assert client.get("/healthz").status_code == 200  # 2.5 intervals: not late yet
    scheduling.heartbeat(scheduling.SWEEPER, timezone.now() - timedelta(seconds=31))
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable" and body["late"] == ["sweeper"]
    assert "sweeper last ran 31 s ago" in body["detail"]
    scheduling.sweep()  # a sweep records its heartbeat
    assert client.get("/healthz").json() == {"status": "ok"}


@pytest.mark.django_db
def test_a_sweeper_that_never_ran_is_late_once_the_process_is_old(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    monkeypatch.setattr(health, "STARTED", time.time())
    assert client.get("/healthz").status_code == 200  # just started: the sweeper has time
    monkeypatch.setattr(health, "STARTED", time.time() - 3600)
    assert client.get("/healthz").json()["late"] == ["sweeper"]


@pytest.mark.django_db
def test_the_health_command_checks_the_same_heartbeat(settings) -> None:
    from datetime import timedelta

    from django.core.management import CommandError, call_command
    from django.utils import timezone

    from games import scheduling

    scheduling.heartbeat(scheduling.SWEEPER)
    call_command("health")
    late = timezone.now() - timedelta(seconds=3 * settings.TONGITS_SWEEP_INTERVAL_SECONDS + 5)
    scheduling.heartbeat(scheduling.SWEEPER, late)
    with pytest.raises(CommandError, match="late: sweeper"):
        call_command("health")


@pytest.mark.django_db
def test_the_node_scope_leaves_the_sweeper_out(
    client: Client, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A balancer's probe of one node (make cluster's HAProxy): a late sweeper is every node's
    news at once and takes none of them out (a database that does not answer does:
    tests/live/test_health_database_away.py)."""
    from datetime import timedelta

    from django.utils import timezone

    from games import scheduling

    monkeypatch.setattr(health, "STARTED", 0.0)
    scheduling.heartbeat(scheduling.SWEEPER, timezone.now() - timedelta(hours=1))
    assert client.get("/healthz").status_code == 503
    response = client.get("/healthz?scope=node")
    assert response.status_code == 200 and response.json() == {"status": "ok"}
