"""The rules core's resign, abort and rated: pure functions over the state."""

from __future__ import annotations

import random

import pytest

from games.rules import (
    IllegalMove,
    RuleSet,
    abort,
    deal,
    event_from_dict,
    evolve,
    fold,
    new_game,
    resign,
    state_from_dict,
    state_to_dict,
)


def dealt(rated: bool = True):
    rng = random.Random(7)
    state = fold([new_game(RuleSet(), None, rng, rated=rated)])
    return evolve(state, deal(state, rng))


def test_resigning_the_seat_to_act_plays_it_at_once():
    state = dealt()
    seat = state.turn
    events = resign(state, seat)
    assert events[0].type == "resigned" and events[0].seat == seat
    assert len(events) > 1  # the time-out rule played the seat's turn
    after = fold(events, state)
    assert after.resigned == frozenset({seat}) and after.turn != seat
    with pytest.raises(IllegalMove) as refused:
        resign(after, seat)
    assert refused.value.code == "already_resigned"


def test_resigning_another_seat_only_records_it():
    state = dealt()
    other = (state.turn + 1) % 3
    assert [e.type for e in resign(state, other)] == ["resigned"]


def test_abort_ends_the_match_without_a_result():
    state = fold(abort(dealt(), "idle"), dealt())
    assert state.phase == "aborted" and state.turn == -1 and state.match_winner is None
    with pytest.raises(IllegalMove):
        abort(state, "idle")


def test_rated_and_resigned_survive_a_snapshot_and_old_events_are_rated():
    state = fold(resign(dealt(rated=False), 1), dealt(rated=False))
    again = state_from_dict(state_to_dict(state))
    assert again.rated is False and again.resigned == state.resigned
    old = {"type": "game_started", "rules": {}, "seats": [{"kind": "user"}] * 3, "first_dealer": 0}
    assert event_from_dict(old).rated is True
