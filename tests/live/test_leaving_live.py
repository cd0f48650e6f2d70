"""After an account's deletion its name is in no stream a former opponent reads: the game's
events (game_started names players by id; the name is resolved at read time) and views."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.utils import timezone

from accounts.models import User
from games import play
from games.models import Game
from tests.api.games_support import choose
from tests.conftest import DEFAULT_PASSWORD
from tests.live.support import Live

NAME = "zora_deleted_live"


def test_streams_after_a_deletion_name_a_deleted_player(live: Live) -> None:
    players = [live.player(username=NAME, email="zora@mail.example"), live.player(), live.player()]
    game_id = live.table(players)
    for _ in range(4):
        live.play_one(players, game_id)
    # Someone follows the game before the deletion: its frames are rendered by this server.
    early = live.stream(f"/api/v1/games/{game_id}/stream", players[1])
    version = live.view(players[1], game_id)["version"]
    assert NAME.encode() in b"".join(f.raw for f in early.until_view(version))

    # Her password as the server hashes it (this process's tests hash with MD5, the server not).
    hashed = PBKDF2PasswordHasher().encode(DEFAULT_PASSWORD, PBKDF2PasswordHasher().salt())
    User.objects.filter(pk=players[0].user.pk).update(password=hashed)
    response = players[0].http.request("DELETE", "/api/v1/me", json={"password": DEFAULT_PASSWORD})
    assert response.status_code == 204, response.text
    # The table moves on (a new view for every reader): her seat is timed out at her turn.
    payload = live.view(players[1], game_id)
    if payload["view"]["turn"] == 0:
        Game.objects.filter(pk=game_id).update(turn_deadline=timezone.now() - timedelta(1))
        outcome = play.expire_turn(game_id=game_id, expected_version=payload["version"])
        assert outcome == play.Outcome.DONE
    else:
        actor = players[payload["view"]["turn"]]
        mine = live.view(actor, game_id)
        response = actor.http.post(
            f"/api/v1/games/{game_id}/commands",
            json={"command": choose(mine), "expected_version": mine["version"]},
        )
        assert response.status_code == 200, response.text
    version = live.view(players[1], game_id)["version"]
    for reader_of in players[1:]:
        reader = live.stream(f"/api/v1/games/{game_id}/stream", reader_of)
        frames = reader.until_view(version)
        text = b"".join(f.raw for f in frames)
        assert NAME.encode() not in text and b"zora@mail.example" not in text
        assert b"deleted player" in text
        assert frames[-1].json["seats"][0]["username"] == "deleted player"
    # The reader that was following all along gets the new view without the name too.
    assert NAME.encode() not in b"".join(f.raw for f in early.until_view(version))
