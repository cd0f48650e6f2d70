"""Helpers of the live tests: HTTP players on the real server and an independent SSE reader."""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from rest_framework.authtoken.models import Token

from tests.api.games_support import choose

TABLES = "/api/v1/tables"
# Quick matches, no turn clock (nothing but the test moves the table).
RULES = {"preset": "standard", "wins_to_match": 1, "turn_seconds": 0}


@dataclass(frozen=True)
class Frame:
    """One SSE frame as it came over the wire."""

    raw: bytes
    id: int | None
    event: str | None
    data: bytes | None

    @property
    def json(self) -> Any:
        return json.loads(self.data) if self.data is not None else None


def parse_frame(raw: bytes) -> Frame:
    event_id = event = data = None
    for line in raw.split(b"\n"):
        if line.startswith(b"id: "):
            event_id = int(line[4:])
        elif line.startswith(b"event: "):
            event = line[7:].decode()
        elif line.startswith(b"data: "):
            data = line[6:]
    return Frame(raw, event_id, event, data)


class SseReader:
    """Reads one stream in a thread of its own; ``frames`` (a queue) gets every frame."""

    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        self.url = url
        self.headers = {"Accept": "text/event-stream", **(headers or {})}
        self.frames: queue.Queue[Frame] = queue.Queue()
        self.all: list[Frame] = []
        self.status: int | None = None
        self.error_body: bytes | None = None
        self.ended = threading.Event()
        self.started = threading.Event()
        self._stop = threading.Event()
        self._socket: socket.socket | None = None
        self._client = httpx.Client(timeout=httpx.Timeout(5.0, read=60.0))
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self.started.wait(10), f"{url}: no answer"

    def _run(self) -> None:
        try:
            with self._client.stream("GET", self.url, headers=self.headers) as response:
                self.status = response.status_code
                if response.status_code != 200:
                    self.error_body = response.read()
                    self.started.set()
                    return
                stream = response.extensions.get("network_stream")
                self._socket = stream.get_extra_info("socket") if stream else None
                self.started.set()
                buffer = b""
                for chunk in response.iter_raw():
                    buffer += chunk
                    while b"\n\n" in buffer:
                        raw, buffer = buffer.split(b"\n\n", 1)
                        frame = parse_frame(raw)
                        self.all.append(frame)
                        self.frames.put(frame)
                    if self._stop.is_set():
                        return
        except (httpx.HTTPError, OSError):
            if not self._stop.is_set():
                raise
        finally:
            self.started.set()
            self.ended.set()

    def next(self, timeout: float = 10.0, skip_comments: bool = True) -> Frame:
        deadline = time.monotonic() + timeout
        while True:
            try:
                frame = self.frames.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"{self.url}: no frame within {timeout} s") from None
            if frame.event is None and frame.data is None and skip_comments:
                continue
            return frame

    def until_view(self, version: int, timeout: float = 10.0) -> list[Frame]:
        """Frames up to the ``view`` of ``version`` (inclusive)."""
        got = []
        while True:
            frame = self.next(timeout)
            got.append(frame)
            if frame.event == "view" and frame.json["version"] >= version:
                assert frame.json["version"] == version, (frame.json["version"], version)
                return got

    def close(self) -> None:
        """Hang up now (the server sees the client go), even in the middle of a read."""
        self._stop.set()
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.shutdown(socket.SHUT_RDWR)
        self._thread.join(10)
        self._client.close()


@dataclass
class Player:
    user: Any
    token: str
    http: httpx.Client
    readers: list[SseReader] = field(default_factory=list)


class Live:
    def __init__(self, url: str, user_factory: Callable[..., Any]) -> None:
        self.url = url
        self.user_factory = user_factory
        self.players: list[Player] = []
        self.readers: list[SseReader] = []

    def __enter__(self) -> Live:
        return self

    def __exit__(self, *exc: object) -> None:
        for reader in self.readers:
            reader.close()
        for player in self.players:
            player.http.close()

    def player(self, **fields: Any) -> Player:
        user = self.user_factory(**fields)
        token = Token.objects.create(user=user).key
        http = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Token {token}"}, timeout=10.0
        )
        player = Player(user, token, http)
        self.players.append(player)
        return player

    def table(self, players: list[Player], rules: Any = None, start: bool = True) -> str:
        owner, *others = players
        seats = [{"kind": "user"}] + [{"kind": "user", "username": p.user.username} for p in others]
        response = owner.http.post(TABLES, json={"rules": rules or RULES, "seats": seats})
        assert response.status_code == 201, response.text
        game_id = response.json()["id"]
        for other in others:
            response = other.http.post(f"{TABLES}/{game_id}/invitation", json={"answer": "accept"})
            assert response.status_code == 200, response.text
        if start:
            response = owner.http.post(f"{TABLES}/{game_id}/start")
            assert response.status_code == 200, response.text
        return game_id

    def stream(
        self, path: str, player: Player | None = None, headers: dict[str, str] | None = None
    ) -> SseReader:
        sent = dict(headers or {})
        if player is not None:
            sent["Authorization"] = f"Token {player.token}"
        reader = SseReader(self.url + path, sent)
        self.readers.append(reader)
        return reader

    def view(self, player: Player, game_id: str) -> dict[str, Any]:
        response = player.http.get(f"/api/v1/games/{game_id}")
        assert response.status_code == 200, response.text
        return response.json()

    def play_one(self, players: list[Player], game_id: str) -> dict[str, Any] | None:
        """The seat to act plays a greedy legal command; its result, or None (match over)."""
        payload = self.view(players[0], game_id)
        if payload["status"] == "finished":
            return None
        actor = players[payload["view"]["turn"]]
        mine = self.view(actor, game_id)
        response = actor.http.post(
            f"/api/v1/games/{game_id}/commands",
            json={"command": choose(mine), "expected_version": mine["version"]},
        )
        assert response.status_code == 200, response.text
        return response.json()
