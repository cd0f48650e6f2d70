"""Each bot seat plays at the level chosen for it when the table was created."""

from __future__ import annotations

import pytest

from games.models import Event, Game
from tests.tasks.support import TABLES, drive

pytestmark = pytest.mark.django_db(transaction=True)


def test_each_bot_seat_plays_at_its_own_level(stopped_worker, auth_client_factory):
    human = auth_client_factory()
    seats = [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "hard"}]
    response = human.post(TABLES, {"rules": {"preset": "standard"}, "seats": seats}, "json")
    assert response.status_code == 201, response.content
    game_id = response.json()["id"]

    def both_bots_have_moved(game: Game) -> bool:
        actors = set(Event.objects.filter(game_id=game.pk).values_list("actor", flat=True))
        return {"bot:easy", "bot:hard"} <= actors

    drive(game_id, human.user, both_bots_have_moved, limit=200)

    seats_by_actor: dict[str, set[int]] = {}
    for actor, data in Event.objects.filter(game_id=game_id).values_list("actor", "data"):
        if actor.startswith("bot:") and "seat" in data:
            seats_by_actor.setdefault(actor, set()).add(data["seat"])
    assert seats_by_actor == {"bot:easy": {1}, "bot:hard": {2}}
