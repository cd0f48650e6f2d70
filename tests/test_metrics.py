"""/metrics in process: who is answered, and what the exposition holds
(tests/live/test_metrics_live.py counts a real server's requests and streams)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import translation
from prometheus_client.parser import text_string_to_metric_families


def _families(body: bytes) -> dict[str, object]:
    return {family.name: family for family in text_string_to_metric_families(body.decode())}


@pytest.mark.django_db
def test_a_local_client_is_answered_without_the_token(client: Client) -> None:
    response = client.get("/metrics")  # REMOTE_ADDR 127.0.0.1
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    families = _families(response.content)
    for name in (
        "tongits_http_request_duration_seconds",
        "tongits_streams_open",
        "tongits_heartbeat_age_seconds",
        "tongits_notifier_lag_seconds",
        "tongits_ledger_balance",
    ):
        assert name in families, name


@pytest.mark.django_db
def test_refused_from_another_address_without_the_token(client: Client, settings) -> None:
    settings.TONGITS_METRICS_TOKEN = "s3cret-metrics-token"
    far = {"REMOTE_ADDR": "203.0.113.7"}
    response = client.get("/metrics", **far)
    assert response.status_code == 403 and response.json()["code"] == "metrics_refused"
    wrong = client.get("/metrics", HTTP_AUTHORIZATION="Bearer nope", **far)
    assert wrong.status_code == 403
    right = client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-metrics-token", **far)
    assert right.status_code == 200 and b"tongits_streams_open" in right.content


@pytest.mark.django_db
def test_the_refusal_speaks_the_requests_language(client: Client, settings) -> None:
    settings.TONGITS_METRICS_TOKEN = "s3cret-metrics-token"
    far = {"REMOTE_ADDR": "203.0.113.7"}
    english = client.get("/metrics", **far).json()
    assert english["detail"] == "Metrics are served to this machine, or with the metrics token."
    for language in ("fil", "es", "vi", "tr", "ar"):
        answer = client.get("/metrics", HTTP_ACCEPT_LANGUAGE=language, **far)
        assert answer.status_code == 403 and answer.json()["code"] == "metrics_refused"
        with translation.override(language):
            expected = translation.gettext(english["detail"])
        assert answer.json()["detail"] == expected != english["detail"], language
        assert answer["Content-Language"] == language


@pytest.mark.django_db
def test_without_a_token_set_only_this_machine_is_answered(client: Client, settings) -> None:
    settings.TONGITS_METRICS_TOKEN = ""
    assert (
        client.get("/metrics", REMOTE_ADDR="203.0.113.7", HTTP_AUTHORIZATION="Bearer ").status_code
        == 403
    )
    assert client.get("/metrics", REMOTE_ADDR="::1").status_code == 200


@pytest.mark.django_db
def test_a_proxied_request_counts_as_its_client(client: Client, settings) -> None:
    """Behind a trusted proxy on this machine, the client named in X-Forwarded-For decides."""
    settings.TONGITS_NUM_PROXIES = 1
    settings.TONGITS_METRICS_TOKEN = "s3cret-metrics-token"
    response = client.get("/metrics", HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert response.status_code == 403


@pytest.mark.django_db
def test_the_ledger_totals_are_the_balances_by_kind(client: Client, settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    answer = client.post(  # a wallet with its sign-up grant
        "/api/v1/auth/register",
        {"username": "ana", "password": "a-long-pass-123!"},
        content_type="application/json",
    )
    assert answer.status_code == 201, answer.content
    families = _families(client.get("/metrics").content)
    balances = {s.labels["kind"]: s.value for s in families["tongits_ledger_balance"].samples}
    assert balances["wallet"] == settings.TONGITS_SIGNUP_GRANT
