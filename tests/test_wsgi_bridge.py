"""The REST API's one-hop bridge from the ASGI event loop into Django's WSGI handler."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from runtime.wsgi_bridge import OneHopWSGI

LIMIT = 64


def run(app: Any, scope: dict[str, Any], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Call the ASGI ``app`` with ``messages`` as what the client sends; what it sent back."""
    sent: list[dict[str, Any]] = []
    inbox = list(messages)

    async def receive() -> dict[str, Any]:
        if inbox:
            return inbox.pop(0)
        await asyncio.sleep(3600)  # the client sends nothing more
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(asyncio.wait_for(app(scope, receive, send), 10))
    return sent


def http_scope(method: str = "POST", path: str = "/x", headers: Any = ()) -> dict[str, Any]:
    return {
        "type": "http",
        "http_version": "1.1",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "scheme": "http",
        "query_string": b"a=1",
        "headers": list(headers),
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }


class Echo:
    """A WSGI app that answers with what it read, and notes whether its iterable was closed."""

    def __init__(self) -> None:
        self.closed = False
        self.environ: dict[str, Any] = {}

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        self.environ = environ
        body = environ["wsgi.input"].read()
        start_response("201 Created", [("Content-Type", "text/plain"), ("X-Seen", str(len(body)))])
        app = self

        class Result(list):
            def close(self) -> None:
                app.closed = True

        return Result([b"got:", body])


def test_body_in_chunks_reaches_the_app_whole_and_the_answer_comes_back() -> None:
    echo = Echo()
    sent = run(
        OneHopWSGI(echo, workers=1, max_body=LIMIT),
        http_scope(headers=[(b"content-type", b"text/plain")]),
        [
            {"type": "http.request", "body": b"abc", "more_body": True},
            {"type": "http.request", "body": b"def", "more_body": False},
        ],
    )
    assert sent[0] == {
        "type": "http.response.start",
        "status": 201,
        "headers": [(b"content-type", b"text/plain"), (b"x-seen", b"6")],
    }
    assert sent[1] == {"type": "http.response.body", "body": b"got:abcdef"}
    assert echo.closed
    assert echo.environ["PATH_INFO"] == "/x"
    assert echo.environ["QUERY_STRING"] == "a=1"
    assert echo.environ["REQUEST_METHOD"] == "POST"


def test_a_body_without_length_is_cut_one_byte_past_the_limit() -> None:
    echo = Echo()
    chunk = {"type": "http.request", "body": b"x" * 40, "more_body": True}
    sent = run(OneHopWSGI(echo, workers=1, max_body=LIMIT), http_scope(), [chunk, chunk, chunk])
    assert sent[1]["body"] == b"got:" + b"x" * (LIMIT + 1)  # the parser refuses it as too long


def test_a_declared_length_over_the_limit_is_not_read() -> None:
    echo = Echo()
    sent = run(
        OneHopWSGI(echo, workers=1, max_body=LIMIT),
        http_scope(headers=[(b"content-length", b"100000")]),
        [],  # nothing is received: the app answers from the header
    )
    assert sent[1]["body"] == b"got:"


def test_a_client_gone_before_its_body_gets_no_answer() -> None:
    echo = Echo()
    sent = run(
        OneHopWSGI(echo, workers=1, max_body=LIMIT),
        http_scope(),
        [
            {"type": "http.request", "body": b"ab", "more_body": True},
            {"type": "http.disconnect"},
        ],
    )
    assert sent == [] and echo.environ == {}


def test_the_project_answers_through_it_as_json() -> None:
    from tongits_site.asgi import application, rest

    assert isinstance(rest, OneHopWSGI)
    sent = run(
        application,
        http_scope(
            path="/api/v1/games/00000000-0000-0000-0000-000000000000/commands",
            headers=[
                (b"host", b"localhost"),
                (b"content-type", b"application/json"),
                (b"content-length", b"10000000"),
            ],
        ),
        [],
    )
    assert sent[0]["status"] == 413
    assert json.loads(sent[1]["body"])["code"] == "payload_too_large"
    no_body = {"type": "http.request", "body": b"", "more_body": False}
    sent = run(
        application, http_scope("GET", "/api/v1/no-such", [(b"host", b"localhost")]), [no_body]
    )
    assert sent[0]["status"] == 404
    assert json.loads(sent[1]["body"])["code"] == "not_found"
