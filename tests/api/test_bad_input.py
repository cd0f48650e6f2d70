"""Hostile and malformed requests, one table: every row gets a 4xx JSON answer with a code,
quotes at most about 100 characters of its input, and appends nothing (no event, no game, no
user)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from games.models import Event, Game
from tests.api.games_support import TABLES, game_url

pytestmark = pytest.mark.django_db

DEEP = b"[" * 5000 + b"]" * 5000
NESTED = (
    b'{"command": {"type": "draw", "cards": ' + b"[" * 40 + b"]" * 40 + b'}, "expected_version": 2}'
)
BIG = b'{"username": "' + b"a" * 70_000 + b'", "password": "x"}'
LONG_TYPE = b'{"command": {"type": "' + b"x" * 50_000 + b'"}, "expected_version": 2}'

# name, method, path ({game} is a started game's id), body, extra headers, status, code
ROWS = [
    (
        "body over the limit (login)",
        "post",
        "/api/v1/auth/token",
        BIG,
        {},
        413,
        "payload_too_large",
    ),
    (
        "body over the limit (command)",
        "post",
        "{commands}",
        b"[" + b"0," * 40_000 + b"0]",
        {},
        413,
        "payload_too_large",
    ),
    (
        "Content-Length not a number",
        "post",
        "/api/v1/auth/token",
        b"{}",
        {"CONTENT_LENGTH": "x"},
        400,
        "bad_request",
    ),
    ("deep JSON (login)", "post", "/api/v1/auth/token", DEEP, {}, 400, "parse_error"),
    ("deep JSON (register)", "post", "/api/v1/auth/register", DEEP, {}, 400, "parse_error"),
    (
        "deep JSON (table)",
        "post",
        TABLES,
        b'{"seats": ' + b"[" * 30 + b"]" * 30 + b"}",
        {},
        400,
        "parse_error",
    ),
    ("deep JSON (command)", "post", "{commands}", NESTED, {}, 400, "parse_error"),
    ("not JSON", "post", "/api/v1/auth/token", b"\x00\xff{", {}, 400, "parse_error"),
    (
        "NUL in a username path (stats)",
        "get",
        "/api/v1/players/ab%00cd/stats",
        None,
        {},
        404,
        "not_found",
    ),
    (
        "NUL in a username path (matches)",
        "get",
        "/api/v1/players/ab%00cd/matches",
        None,
        {},
        404,
        "not_found",
    ),
    (
        "control character in a path",
        "get",
        "/api/v1/players/a%01b/stats",
        None,
        {},
        404,
        "not_found",
    ),
    (
        "NUL in a query value",
        "get",
        "/api/v1/players/ab/matches?opponent=a%00b",
        None,
        {},
        400,
        "bad_request",
    ),
    (
        "control character in a query key",
        "get",
        TABLES + "?st%1Batus=waiting",
        None,
        {},
        400,
        "bad_request",
    ),
    (
        "NUL in a username (login)",
        "post",
        "/api/v1/auth/token",
        b'{"username": "a\\u0000b", "password": "x"}',
        {},
        400,
        "invalid",
    ),
    (
        "NUL in a seated username",
        "post",
        TABLES,
        b'{"seats": [{"kind": "user"}, {"kind": "user", "username": "a\\u0000b"}, '
        b'{"kind": "open"}]}',
        {},
        400,
        "invalid",
    ),
    ("unknown command type of 50 KB", "post", "{commands}", LONG_TYPE, {}, 400, "invalid"),
    (
        "unknown command field",
        "post",
        "{commands}",
        b'{"command": {"type": "draw", "card_s": ["AS"]}, "expected_version": 2}',
        {},
        400,
        "invalid",
    ),
    (
        "a long invalid choice is not echoed",
        "get",
        TABLES + "?status=" + "z" * 5000,
        None,
        {},
        400,
        "invalid",
    ),
    (
        "a long rules preset is not echoed",
        "post",
        TABLES,
        b'{"rules": "' + b"q" * 20_000 + b'"}',
        {},
        400,
        "invalid_rules",
    ),
]


@pytest.fixture
def started(auth_client) -> str:
    seats = [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}]
    response = auth_client.post(TABLES, {"seats": seats}, "json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def counts() -> tuple[int, int, int]:
    return Event.objects.count(), Game.objects.count(), get_user_model().objects.count()


@pytest.mark.parametrize(
    ("method", "path", "body", "headers", "status", "code"),
    [row[1:] for row in ROWS],
    ids=[row[0] for row in ROWS],
)
def test_bad_input_is_a_4xx_json_answer_and_appends_nothing(
    auth_client, started, method, path, body, headers, status, code
):
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {auth_client.token}")
    path = path.format(commands=game_url(started, "/commands"))
    before = counts()
    kwargs = dict(headers)
    if body is not None:
        kwargs.update(data=body, content_type="application/json")
    response = getattr(client, method)(path, **kwargs)
    assert response.status_code == status, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json")
    answer = response.json()
    assert answer["code"] == code, answer
    assert isinstance(answer["detail"], str) and answer["detail"]
    assert len(response.content) < 1000, "an error answer must not echo its input"
    assert counts() == before
