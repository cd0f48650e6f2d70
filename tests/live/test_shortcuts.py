"""The move's shortcut (``runtime.shortcuts``, ``games.api.shortcuts``) answers exactly as Django.

Two real servers on the test database: the live server (shortcuts on, the default) and one with
``TONGITS_SHORTCUTS=0`` (every request through Django's handler). A move played through one and
replayed (the same ``Idempotency-Key``) through the other gets the same bytes and headers both
ways; every request the view refuses gets the same answer from both; and the shortcut plays a
move without Django's handler, while a refused one reaches it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from django.core.signals import request_started
from django.db import connections

from games.api.shortcuts import SHORTCUTS
from runtime.wsgi_bridge import OneHopWSGI
from tests.live.support import Live, choose

pytestmark = pytest.mark.django_db(transaction=True)

#: Headers each server writes for itself.
OWN = {"date", "server"}


@pytest.fixture(scope="module")
def django_url(live_servers) -> Iterator[str]:
    with live_servers({"TONGITS_SHORTCUTS": "0"}) as url:
        yield url


def _post(url: str, token: str, game_id: str, body: Any, **headers: str) -> httpx.Response:
    return httpx.post(
        f"{url}/api/v1/games/{game_id}/commands",
        json=body,
        headers={"Authorization": f"Token {token}", **headers},
        timeout=10,
    )


def _headers(response: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k not in OWN}


def test_a_move_and_its_replay_are_the_same_bytes_through_either_door(live, django_url):
    players = [live.player() for _ in range(3)]
    game_id = live.table(players)
    doors = [live.url, django_url]
    for move in range(8):
        view = live.view(players[0], game_id)
        actor = players[view["view"]["turn"]]
        mine = live.view(actor, game_id)
        body = {"command": choose(mine), "expected_version": mine["version"]}
        key = f"move-{move}-{uuid.uuid4()}"
        first, second = doors[move % 2], doors[1 - move % 2]
        played = _post(first, actor.token, game_id, body, **{"Idempotency-Key": key})
        replayed = _post(second, actor.token, game_id, body, **{"Idempotency-Key": key})
        assert played.status_code == replayed.status_code == 200, (played.text, replayed.text)
        assert played.content == replayed.content
        assert replayed.headers["idempotent-replayed"] == "true"
        assert _headers(played) == {
            k: v for k, v in _headers(replayed).items() if k != "idempotent-replayed"
        }
        again = _post(first, actor.token, game_id, body, **{"Idempotency-Key": key})
        assert again.content == played.content and _headers(again) == _headers(replayed)


def test_every_refusal_is_djangos_own_answer(live, django_url, settings):
    players = [live.player() for _ in range(3)]
    game_id = live.table(players)
    view = live.view(players[0], game_id)
    actor = players[view["view"]["turn"]]
    waiting = players[(view["view"]["turn"] + 1) % 3]
    mine = live.view(actor, game_id)
    good = {"command": choose(mine), "expected_version": mine["version"]}
    stranger = live.player()
    deep: Any = 1
    for _ in range(40):
        deep = [deep]
    refused: list[tuple[str, dict[str, Any]]] = [
        ("no token", {"token": "", "body": good}),
        ("unknown token", {"token": "x" * 40, "body": good}),
        ("a stranger", {"token": stranger.token, "body": good}),
        ("not your turn", {"token": waiting.token, "body": good}),
        ("stale version", {"body": {**good, "expected_version": mine["version"] - 1}}),
        ("future version", {"body": {**good, "expected_version": mine["version"] + 5}}),
        ("unknown command", {"body": {**good, "command": {"type": "shuffle"}}}),
        ("unknown field", {"body": {**good, "command": {**good["command"], "x": 1}}}),
        ("not an object", {"raw": b"[1, 2]"}),
        ("not JSON", {"raw": b"{nope"}),
        ("too deep", {"body": {**good, "extra": deep}}),
        ("too large", {"raw": b'{"a": "' + b"x" * 70_000 + b'"}'}),
        ("wrong seat", {"body": {**good, "seat": (view["view"]["turn"] + 1) % 3}}),
        ("bad seed", {"body": {**good, "client_seed": "no spaces allowed"}}),
        ("bad key", {"body": good, "headers": {"Idempotency-Key": "k" * 300}}),
        ("as form", {"raw": b"a=1", "headers": {"Content-Type": "text/plain"}}),
        ("html only", {"body": good, "headers": {"Accept": "text/html"}}),
        ("a query", {"body": {**good, "expected_version": 0}, "query": "?debug=1"}),
        ("no game", {"body": good, "game": str(uuid.uuid4())}),
        ("upper-case id", {"body": good, "game": game_id.upper()}),
    ]
    for name, case in refused:
        answers = []
        for door in (live.url, django_url):
            token = case.get("token", actor.token)
            headers = {"Content-Type": "application/json", **case.get("headers", {})}
            if token:
                headers["Authorization"] = f"Token {token}"
            raw = case.get("raw")
            if raw is None:
                raw = httpx.Request("POST", "/", json=case["body"]).read()
            path = f"/api/v1/games/{case.get('game', game_id)}/commands{case.get('query', '')}"
            answers.append(httpx.post(door + path, content=raw, headers=headers, timeout=10))
        ours, djangos = answers
        assert ours.status_code == djangos.status_code, (name, ours.text, djangos.text)
        assert ours.status_code >= 400, (name, ours.text)
        assert ours.content == djangos.content, name
        assert _headers(ours) == _headers(djangos), name
    # Nothing above was played: the good command still is.
    assert _post(live.url, actor.token, game_id, good).status_code == 200


def _call(app: Any, path: str, body: bytes, token: str) -> tuple[int, bytes]:
    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "POST",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "scheme": "http",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"authorization", f"Token {token}".encode()),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    sent: list[dict[str, Any]] = []
    inbox = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if inbox:
            return inbox.pop(0)
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(asyncio.wait_for(app(scope, receive, send), 10))
    return sent[0]["status"], sent[1]["body"]


def test_a_playable_move_skips_the_handler_and_a_refused_one_reaches_it(live: Live):
    from django.core.wsgi import get_wsgi_application

    players = [live.player() for _ in range(3)]
    game_id = live.table(players)
    app = OneHopWSGI(get_wsgi_application(), workers=1, max_body=65536, shortcuts=SHORTCUTS)
    handled: list[Any] = []

    def seen(**kwargs: Any) -> None:
        handled.append(kwargs)

    request_started.connect(seen)
    try:
        view = live.view(players[0], game_id)
        actor = players[view["view"]["turn"]]
        mine = live.view(actor, game_id)
        path = f"/api/v1/games/{game_id}/commands"
        stale = {"command": choose(mine), "expected_version": mine["version"] - 1}
        status, _ = _call(app, path, httpx.Request("POST", "/", json=stale).read(), actor.token)
        assert status == 409 and len(handled) == 1  # refused: Django answered
        good = {"command": choose(mine), "expected_version": mine["version"]}
        status, body = _call(app, path, httpx.Request("POST", "/", json=good).read(), actor.token)
        assert status == 200 and len(handled) == 1  # played without the handler
        assert b'"version":' in body
    finally:
        request_started.disconnect(seen)
        app.executor.submit(connections.close_all).result()  # the connection a shortcut kept
        app.executor.shutdown()
