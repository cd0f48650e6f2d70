"""End to end on a real Celery worker: the match is played (bots by the worker), settle_match
settles it and projects it in the same transaction; the task run again changes nothing."""

from __future__ import annotations

import pytest

from accounts import tasks
from accounts.models import MatchRecord, PlayerMatch
from games.models import Game
from tests.accounts.test_history_api import snapshot

# The worker fixtures of tests/tasks (a real worker thread on the test Redis database).
from tests.tasks.conftest import (  # noqa: F401
    broker,
    game_timing,
    run_on_worker,
    task_runs,
    worker,
)
from tests.tasks.support import game_url, greedy, view, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def deal_at_once():
    """Overrides the package's fixture: here the worker deals, as in production."""


def test_the_settle_task_projects_the_match_once(worker, auth_client_factory, run_on_worker):  # noqa: F811
    human = auth_client_factory()
    seats = [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot"}]
    rules = {"preset": "standard", "wins_to_match": 1}
    response = human.post("/api/v1/tables", {"rules": rules, "seats": seats}, "json")
    assert response.status_code == 201 and response.json()["status"] == "active"
    game_id = response.json()["id"]
    payload = view(human, game_id)
    for _ in range(500):
        if payload["status"] == "finished":
            break
        if payload["legal_commands"]:
            command = {"command": greedy(payload), "expected_version": payload["version"]}
            response = human.post(game_url(game_id, "/commands"), command, "json")
            assert response.status_code == 200, response.content
        payload = wait_for(
            lambda: (
                (p := view(human, game_id))
                and (p["legal_commands"] or p["status"] == "finished")
                and p
            ),
            10,
        )
        assert payload, "the bots did not move"
    assert wait_for(lambda: Game.objects.get(pk=game_id).settled_at, 10), "never settled"

    rows = list(PlayerMatch.objects.filter(match_id=game_id).select_related("player"))
    assert {r.player.username for r in rows} == {human.user.username, "bot-easy", "bot-normal"}
    record = MatchRecord.objects.get(game_id=game_id)
    assert {r.seat: r.placement for r in rows} == dict(enumerate(record.placements))
    history = human.get(f"/api/v1/players/{human.user.username}/matches").json()["results"]
    assert [h["game_id"] for h in history] == [game_id]

    once = snapshot()
    version = Game.objects.get(pk=game_id).version
    assert run_on_worker(tasks.settle_match, game_id, version) == "settled"  # redelivered
    assert snapshot() == once
