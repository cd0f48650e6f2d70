"""Settlement (once, whatever the number of runs), placements, what each state queues, the
sweeper's thresholds, and a broker failure that must not fail a player's move."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from kombu.exceptions import OperationalError

from games import scheduling, services, tasks
from games.models import Game, MatchResult
from tests.tasks.support import drive, game_url, greedy, quick_table, view, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(
    ("wins", "chips", "places"),
    [
        ([1, 0, 0], [4, -1, -3], [1, 2, 3]),
        ([0, 3, 1], [-5, 7, -2], [3, 1, 2]),
        ([3, 1, 1], [6, -3, -3], [1, 2, 2]),  # equal on both: the same place
        ([3, 2, 2], [-1, 4, -3], [1, 2, 3]),  # rounds first, then chips
    ],
)
def test_placements(wins, chips, places):
    assert services.placements(wins, chips) == places


def test_settling_twice_changes_nothing(stopped_worker, broker, auth_client_factory, run_on_worker):
    human = auth_client_factory()
    rules = {"preset": "standard", "turn_seconds": 0, "wins_to_match": 1}
    game_id = quick_table(human, rules, human_seat=2)
    assert services.settle(game_id=game_id) == []  # not over: nothing to settle
    assert not MatchResult.objects.filter(game_id=game_id).exists()
    game = drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.SETTLE)
    assert game.status == Game.Status.FINISHED and game.settled_at is None
    broker.purge()
    stopped_worker.start()

    assert run_on_worker(tasks.settle_match, game_id, game.version) == "settled"
    first = list(MatchResult.objects.filter(game_id=game_id).order_by("seat").values())
    game.refresh_from_db()
    settled_at, updated_at = game.settled_at, game.updated_at
    assert len(first) == 3 and settled_at is not None and game.awaiting == Game.Awaiting.NONE
    assert first[2]["user_id"] == human.user.pk
    assert sorted(r["placement"] for r in first)[0] == 1
    assert {r["settled_at"] for r in first} == {settled_at}

    run_on_worker(tasks.settle_match, game_id, game.version)  # a redelivered task
    services.settle(game_id=game_id)  # and the service itself
    assert list(MatchResult.objects.filter(game_id=game_id).order_by("seat").values()) == first
    game.refresh_from_db()
    assert (game.settled_at, game.updated_at) == (settled_at, updated_at)
    assert scheduling.sweep(now=timezone.now() + timedelta(hours=1))[scheduling.SETTLE_MATCH] == 0


def test_what_each_state_queues(stopped_worker, broker, auth_client_factory, settings):
    settings.TONGITS_BOT_DELAY_SECONDS = 0.5
    settings.TONGITS_NEXT_ROUND_DELAY_SECONDS = 2.0
    human = auth_client_factory()
    game_id = quick_table(human, {"preset": "standard", "turn_seconds": 20}, human_seat=0)
    game = drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.BOT)
    assert scheduling.follow_ups(game) == [
        (scheduling.PLAY_BOT_TURN, {"countdown": 0.5}),
        (scheduling.EXPIRE_TURN, {"eta": game.turn_deadline}),
    ]
    game = drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.USER)
    assert scheduling.follow_ups(game) == [(scheduling.EXPIRE_TURN, {"eta": game.turn_deadline})]
    game = drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.DEAL)
    assert game.turn_deadline is None
    assert scheduling.follow_ups(game) == [(scheduling.DEAL_NEXT_ROUND, {"countdown": 2.0})]


def test_the_sweeper_waits_for_the_delay_and_its_grace(
    stopped_worker, broker, auth_client_factory, settings
):
    settings.TONGITS_SWEEP_GRACE_SECONDS = 5.0
    settings.TONGITS_BOT_DELAY_SECONDS = 1.0
    human = auth_client_factory()
    game_id = quick_table(human, {"preset": "standard", "turn_seconds": 20}, human_seat=0)
    drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.BOT)
    now = timezone.now()
    nothing = dict.fromkeys(
        [
            scheduling.EXPIRE_TURN,
            scheduling.PLAY_BOT_TURN,
            scheduling.DEAL_NEXT_ROUND,
            scheduling.SETTLE_MATCH,
        ],
        0,
    )
    assert scheduling.sweep(now=now) == nothing  # just queued: not late
    late_bot = scheduling.sweep(now=now + timedelta(seconds=7))
    assert late_bot == {**nothing, scheduling.PLAY_BOT_TURN: 1}
    overdue = scheduling.sweep(now=now + timedelta(seconds=26))
    assert overdue == {**nothing, scheduling.PLAY_BOT_TURN: 1, scheduling.EXPIRE_TURN: 1}


def test_a_broker_failure_does_not_fail_the_move(
    worker, auth_client_factory, monkeypatch, run_on_worker
):
    human = auth_client_factory()
    game_id = quick_table(human, {"preset": "standard", "turn_seconds": 0}, human_seat=0)
    payload = wait_for(lambda: (p := view(human, game_id))["legal_commands"] and p, 5)

    def broker_down(*args, **kwargs):
        raise OperationalError("connection refused")

    for _ in range(20):  # until a move hands the turn to a bot, with no broker to queue it on
        with monkeypatch.context() as patch:
            patch.setattr(tasks.play_bot_turn, "apply_async", broker_down)
            response = human.post(
                game_url(game_id, "/commands"),
                {"command": greedy(payload), "expected_version": payload["version"]},
                "json",
            )
        assert response.status_code == 200, response.content
        payload = response.json()["game"]
        if not payload["legal_commands"]:
            break
    stalled = Game.objects.get(pk=game_id)
    assert stalled.awaiting == Game.Awaiting.BOT
    assert run_on_worker(tasks.sweep)[scheduling.PLAY_BOT_TURN] == 1
    assert wait_for(lambda: Game.objects.get(pk=game_id).version > stalled.version, 5)
