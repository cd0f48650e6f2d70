"""Turn deadlines: an idle seat is played for by expire_turn, and a time-out never races a move
into a double turn."""

from __future__ import annotations

import time
from functools import partial

import pytest

from accounts.models import MatchRecord
from games import play, store
from games.models import Event, Game
from games.rules import state_to_dict
from tests.tasks.support import drive, game_url, greedy, in_threads, quick_table, view, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

IDLE_MATCH_TIMEOUT_SECONDS = 60.0


def test_an_idle_human_is_played_for_and_the_match_still_ends(worker, auth_client_factory):
    human = auth_client_factory()
    started = time.monotonic()
    game_id = quick_table(
        human, {"preset": "standard", "turn_seconds": 1, "wins_to_match": 1}, human_seat=0
    )
    game = wait_for(
        lambda: (g := Game.objects.get(pk=game_id)).status == Game.Status.FINISHED and g,
        IDLE_MATCH_TIMEOUT_SECONDS,
        interval=0.1,
    )
    assert game, f"the match did not end within {IDLE_MATCH_TIMEOUT_SECONDS} s"
    events = list(Event.objects.filter(game_id=game_id).order_by("seq"))
    timed_out = [e for e in events if e.type == "turn_timed_out"]
    human_timeouts = [e for e in timed_out if e.data["seat"] == 0]
    assert human_timeouts and all(e.actor == "system" for e in timed_out)
    # Each time-out is followed by the moves played for that seat, as the system.
    for e in human_timeouts:
        after = events[e.seq]  # seq is 1-based: this is the next event
        assert after.actor == "system" and after.data.get("seat") == 0, after.data
    assert not [e for e in events if e.actor.startswith("user:") and e.type != "game_started"]
    assert events[-1].type == "match_ended"
    assert store.verify_chain(game_id) is None
    assert state_to_dict(store.fold_from_zero(game_id)) == game.snapshot
    assert wait_for(lambda: MatchRecord.objects.filter(game_id=game_id).exists(), 5)
    assert game.turn_deadline is None and game.current_seat is None
    assert view(human, game_id)["status"] == "finished"
    print(
        f"\nidle human: {len(human_timeouts)} time-outs of seat 0, {len(events)} events, "
        f"{time.monotonic() - started:.1f} s"
    )


def test_the_deadline_follows_the_turn(stopped_worker, auth_client_factory):
    """Game.turn_deadline restarts when a new seat is to act, not on each command."""
    human = auth_client_factory()
    game_id = quick_table(human, {"preset": "standard", "turn_seconds": 30}, human_seat=0)
    game = drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.USER)
    deadline = game.turn_deadline
    assert deadline is not None
    payload = view(human, game_id)
    assert payload["turn_deadline"] == deadline.isoformat().replace("+00:00", "Z")
    response = human.post(
        game_url(game_id, "/commands"),
        {"command": greedy(payload), "expected_version": payload["version"]},
        "json",
    )
    assert response.status_code == 200
    game.refresh_from_db()
    if game.current_seat == 0 and game.phase != "start":  # still the same turn
        assert game.turn_deadline == deadline
    else:
        assert game.turn_deadline is None or game.turn_deadline > deadline


def test_a_move_and_a_time_out_at_the_same_version_never_both_happen(
    stopped_worker, auth_client_factory
):
    """Race each pair on a separate table whose human turn is past its deadline."""
    human = auth_client_factory()
    tables = []
    for _ in range(6):
        game_id = quick_table(human, {"preset": "standard", "turn_seconds": 1}, human_seat=0)
        tables.append(drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.USER))
    wait_for(lambda: all(g.turn_deadline.timestamp() < time.time() for g in tables), 3)
    winners = []
    for game in tables:
        version = game.version
        command = greedy(view(human, str(game.pk)))
        timeout, move = in_threads(
            partial(play.expire_turn, game_id=game.pk, expected_version=version),
            partial(
                play.submit_command,
                game_id=game.pk,
                user=human.user,
                command=command,
                expected_version=version,
            ),
        )
        new = list(Event.objects.filter(game=game, seq__gt=version).order_by("seq"))
        if timeout == play.Outcome.DONE:
            assert isinstance(move, store.StaleVersion), move
            assert new[0].type == "turn_timed_out" and new[0].actor == "system"
            winners.append("time-out")
        else:
            assert timeout == play.Outcome.MOVED_ON, timeout
            assert isinstance(move, play.Written) and move.version > version, move
            assert new[0].actor == f"user:{human.user.pk}"
            assert "turn_timed_out" not in [e.type for e in new]
            winners.append("move")
        assert store.verify_chain(game.pk) is None
    print(f"\nraces won: {winners}")


def test_tasks_for_an_old_version_do_nothing(
    stopped_worker, broker, auth_client_factory, run_on_worker
):
    from accounts import tasks as account_tasks
    from games import tasks

    human = auth_client_factory()
    game_id = quick_table(human, {"preset": "standard", "turn_seconds": 0}, human_seat=0)
    game = drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.USER and g.version > 3)
    broker.purge()  # the bot tasks queued while driving: all stale now
    stopped_worker.start()
    old = game.version - 1
    for task in (tasks.play_bot_turn, tasks.expire_turn, tasks.deal_next_round):
        assert run_on_worker(task, game_id, old) == "moved_on"
    assert run_on_worker(account_tasks.settle_match, game_id, old) == "nothing_to_do"
    # At the current version, nothing of those kinds is due: a user's turn without time limit.
    for task in (tasks.play_bot_turn, tasks.expire_turn, tasks.deal_next_round):
        assert run_on_worker(task, game_id, game.version) == "nothing_to_do"
    assert run_on_worker(tasks.expire_turn, "0b9ff2a6-5b0e-4c9e-9a57-3d0f2a1c1a11", 1) == "no_game"
    assert Game.objects.get(pk=game_id).version == game.version
