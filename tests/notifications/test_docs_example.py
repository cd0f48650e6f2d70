"""The receiver's example of docs/notifications.md ("Verifying a webhook") stays true: its code,
taken from the document as written, accepts a request this server signs
(``notifications.webhooks.signed_request``) and refuses a tampered or stale one."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from standardwebhooks import WebhookVerificationError

from notifications import webhooks
from notifications.models import WebhookEndpoint, WebhookMessage

DOC = Path(__file__).resolve().parents[2] / "docs" / "notifications.md"
HEADING = "### Verifying a webhook"
CREATED = datetime(2026, 5, 1, 12, 30, 15, 250000, tzinfo=UTC)


def example_source() -> str:
    """The first python block under the heading."""
    text = DOC.read_text(encoding="utf-8")
    assert text.count(HEADING) == 1, f"{DOC.name} needs exactly one {HEADING!r}"
    found = re.search(r"^```python\n(.*?)^```", text.split(HEADING, 1)[1], re.S | re.M)
    assert found, f"no python block under {HEADING!r}"
    return found.group(1)


def example_verify() -> Callable[[bytes, dict, str], dict]:
    namespace: dict = {"__name__": "docs_example"}
    exec(compile(example_source(), str(DOC), "exec"), namespace)  # noqa: S102  (our own doc)
    return namespace["verify"]


def test_the_example_is_short() -> None:
    lines = [line for line in example_source().splitlines() if line.strip()]
    assert len(lines) <= 10


@pytest.fixture
def signed(db) -> tuple[WebhookEndpoint, WebhookMessage]:
    endpoint = WebhookEndpoint.objects.create(
        url="https://studio.example.com/tongits/hooks", secret=webhooks.new_secret()
    )
    game_id = str(uuid.uuid4())
    data = {
        "game_id": game_id,
        "winner_seat": 2,
        "rounds": 3,
        "round_wins": [0, 0, 3],
        "chips": [-5, -4, 9],
        "rated": True,
        "buy_in": 0,
        "seats": [
            {"seat": 0, "kind": "user", "user_id": 4},
            {"seat": 1, "kind": "bot", "level": "normal"},
            {"seat": 2, "kind": "user", "user_id": 5},
        ],
    }
    kind = WebhookMessage.Kind.MATCH_FINISHED
    assert webhooks.record(kind, f"{kind}:{game_id}", data, CREATED) is not None
    # As a worker sends it: the message read back from the database.
    return endpoint, WebhookMessage.objects.get(cause=f"{kind}:{game_id}")


def test_the_example_accepts_a_genuine_request(signed) -> None:
    endpoint, message = signed
    verify = example_verify()
    body, headers = webhooks.signed_request(endpoint, message)
    got = verify(body, headers, endpoint.secret)
    assert got == message.payload
    assert got["type"] == "match.finished"
    assert got["timestamp"] == "2026-05-01T12:30:15.250000Z"
    assert got["data"]["seats"][1] == {"seat": 1, "kind": "bot", "level": "normal"}
    # Header names as a web framework may give them (Django's request.headers: Webhook-Id).
    assert verify(body, {k.title(): v for k, v in headers.items()}, endpoint.secret) == got


def test_the_example_refuses_a_tampered_body(signed) -> None:
    endpoint, message = signed
    verify = example_verify()
    body, headers = webhooks.signed_request(endpoint, message)
    tampered = body.replace(b'"winner_seat":2', b'"winner_seat":0')
    assert tampered != body
    with pytest.raises(WebhookVerificationError):
        verify(tampered, headers, endpoint.secret)


def test_the_example_refuses_another_secret_id_or_a_stale_request(signed) -> None:
    endpoint, message = signed
    verify = example_verify()
    body, headers = webhooks.signed_request(endpoint, message)
    with pytest.raises(WebhookVerificationError):
        verify(body, headers, webhooks.new_secret())
    with pytest.raises(WebhookVerificationError):
        verify(body, {**headers, "webhook-id": "msg_" + "a" * 26}, endpoint.secret)
    stale_body, stale = webhooks.signed_request(
        endpoint, message, sent_at=datetime.now(UTC) - timedelta(minutes=10)
    )
    with pytest.raises(WebhookVerificationError):
        verify(stale_body, stale, endpoint.secret)
