"""One human and two bots, through the API only: the worker plays the bots, deals the rounds and
settles the match; the human's next turn arrives within a second of their move."""

from __future__ import annotations

import statistics
import time

import pytest

from accounts.models import PlayerMatch
from games import store
from games.models import Event, Game
from games.rules import state_to_dict
from tests.tasks.support import game_url, greedy, quick_table, view, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

#: The acceptance bound: from the human's move to their next turn, bots and deals in between.
NEXT_TURN_SECONDS = 1.0
MATCH_TIMEOUT_SECONDS = 60.0
#: How often the human looks (the view is rendered in this process, next to the worker's threads).
POLL_SECONDS = 0.025


def my_turn(payload: dict) -> bool:
    return bool(payload["legal_commands"]) or payload["status"] == "finished"


def test_a_human_plays_a_whole_match_against_two_bots_through_the_api(
    worker, auth_client_factory, task_runs
):
    human = auth_client_factory()
    game_id = quick_table(human, {"preset": "standard", "wins_to_match": 2}, human_seat=1)
    waits: list[float] = []
    commands = 0
    started = time.monotonic()
    payload = view(human, game_id)
    while payload["status"] != "finished":
        assert time.monotonic() - started < MATCH_TIMEOUT_SECONDS, "the match does not end"
        if not my_turn(payload):
            moved = time.monotonic()
            payload = wait_for(
                lambda: (p := view(human, game_id)) and my_turn(p) and p,
                NEXT_TURN_SECONDS * 5,
                interval=POLL_SECONDS,
            )
            assert payload, f"no turn for the human within {NEXT_TURN_SECONDS * 5} s"
            waits.append(time.monotonic() - moved)
            continue
        response = human.post(
            game_url(game_id, "/commands"),
            {"command": greedy(payload), "expected_version": payload["version"]},
            "json",
        )
        assert response.status_code == 200, response.content
        payload = response.json()["game"]
        commands += 1

    game = Game.objects.get(pk=game_id)
    assert game.status == Game.Status.FINISHED and game.phase == "match_over"
    events = list(Event.objects.filter(game=game).order_by("seq"))
    actors = {e.actor for e in events}
    assert actors == {f"user:{human.user.pk}", "bot:normal", "system"}
    assert not [e for e in events if e.type == "turn_timed_out"]  # nobody had to be played for
    assert events[-1].type == "match_ended"
    assert store.verify_chain(game_id) is None
    assert state_to_dict(store.fold_from_zero(game_id)) == game.snapshot

    # settle_match recorded the match once: three rows, and every run of it (one, unless the
    # sweeper queued a copy) found them there or wrote them.
    settles = wait_for(lambda: [r for r in task_runs if r.name == "accounts.tasks.settle_match"], 5)
    assert settles and all(r.retval == "settled" for r in settles), settles
    assert Game.objects.get(pk=game_id).settled_at is not None
    # The one record of the result: the human's history row (the two bot seats are one bot
    # account, bot-normal, playing itself: no row for it).
    results = list(PlayerMatch.objects.filter(match_id=game.pk).order_by("seat"))
    assert [(r.seat, r.player_id) for r in results] == [(1, human.user.pk)]
    assert results[0].rounds_won == game.snapshot["round_wins"][1]
    assert results[0].chips == game.snapshot["chips"][1] and sum(game.snapshot["chips"]) == 0
    assert (results[0].placement == 1) == (game.winner_seat == 1)

    assert waits, "the bots never moved"
    assert max(waits) < NEXT_TURN_SECONDS, sorted(waits)[-5:]
    print(
        f"\nquick play: {commands} human commands, {len(events)} events, "
        f"{game.round} rounds, {time.monotonic() - started:.1f} s; human waited "
        f"median {statistics.median(waits) * 1000:.0f} ms, max {max(waits) * 1000:.0f} ms "
        f"over {len(waits)} waits"
    )
