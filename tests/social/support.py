"""Helpers of the friends, blocks and presence tests."""

from __future__ import annotations

from typing import Any

FRIENDS = "/api/v1/me/friends"
BLOCKS = "/api/v1/me/blocks"


def ask(client: Any, username: str, status: int | None = None) -> dict:
    """``POST /me/friends``; the answer's body (its status checked when given)."""
    response = client.post(FRIENDS, {"username": username}, "json")
    if status is not None:
        assert response.status_code == status, (response.status_code, response.content)
    return response.json()


def befriend(a: Any, b: Any) -> None:
    """``a`` asks ``b``, who accepts."""
    assert ask(a, b.user.username, 201)["state"] == "sent"
    assert ask(b, a.user.username, 201)["state"] == "friends"


def block(client: Any, username: str, status: int = 201) -> dict:
    response = client.post(BLOCKS, {"username": username}, "json")
    assert response.status_code == status, (response.status_code, response.content)
    return response.json()


def listed(client: Any) -> dict[str, list[dict]]:
    response = client.get(FRIENDS)
    assert response.status_code == 200, response.content
    return response.json()


def names(entries: list[dict]) -> list[str]:
    return [e["username"] for e in entries]
