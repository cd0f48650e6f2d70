"""A rematch's proposal and answers reach the match's people on /me/stream, and nobody else."""

from __future__ import annotations

from games import lobby, play, store
from games.models import Game
from tests.live.support import Live, SseReader

SHORT = {"preset": "house", "wins_to_match": 1, "turn_seconds": 0}


def _finished(owner, other) -> str:
    """A finished match of two people and a bot (both people resign; the server plays on)."""
    seats = [{"kind": "user"}, {"kind": "user", "username": other.username}, {"kind": "bot"}]
    game = lobby.table_create(user=owner, rules=SHORT, seats=seats)
    lobby.table_respond(game_id=game.pk, user=other, accept=True)
    lobby.table_start(game_id=game.pk, user=owner)
    play.resign(game.pk, owner.pk)
    play.resign(game.pk, other.pk)
    for _ in range(5000):
        head = store.read(game.pk)
        if head.status == Game.Status.FINISHED:
            return str(game.pk)
        play.play_bot_turn(game_id=game.pk, expected_version=head.version)
    raise AssertionError("the match does not end")


def _next_rematch(reader: SseReader, timeout: float = 10.0) -> dict:
    while True:
        frame = reader.next(timeout)
        if frame.event == "rematch":
            return frame.json


def test_rematch_frames_reach_the_people_of_the_match(live: Live) -> None:
    ann, ben, stranger = live.player(), live.player(), live.player()
    game_id = _finished(ann.user, ben.user)
    ann_stream = live.stream("/api/v1/me/stream", ann)
    ben_stream = live.stream("/api/v1/me/stream", ben)
    theirs = live.stream("/api/v1/me/stream", stranger)
    for reader in (ann_stream, ben_stream, theirs):
        assert reader.next().event == "games"

    proposed = ann.http.post(f"/api/v1/games/{game_id}/rematch")
    assert proposed.status_code == 201, proposed.text
    frame = _next_rematch(ben_stream)
    assert frame["game_id"] == game_id and frame["status"] == "open"
    assert [a["answer"] for a in frame["answers"]] == ["accepted", "pending"]
    assert frame["next_game_id"] is None and frame["server_time"]
    assert _next_rematch(ann_stream)["status"] == "open"

    accepted = ben.http.post(f"/api/v1/games/{game_id}/rematch/answer", json={"answer": "accept"})
    assert accepted.status_code == 200, accepted.text
    new_id = accepted.json()["next_game_id"]
    for reader in (ann_stream, ben_stream):
        frame = _next_rematch(reader)
        assert frame["status"] == "started" and frame["next_game_id"] == new_id
        assert [a["answer"] for a in frame["answers"]] == ["accepted", "accepted"]
    assert all(f.event != "rematch" for f in theirs.all)
