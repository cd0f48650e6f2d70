"""docs/rules.md "Time": what the server plays for a seat whose deadline passed (time_out)."""

from games.rules import event_to_dict, time_out
from tests.rules.tongits_helpers import (
    DRAW,
    act,
    apply_events,
    discard,
    draw_setup,
    meld,
    one,
    phase,
    play,
    position,
    round_end,
    same,
    take,
    turn,
    types,
    view,
)


def timed_out(state):
    events = time_out(state)
    return apply_events(state, events), [event_to_dict(e) for e in events]


def test_time_out_draws_exposes_lowest_arrangement_and_discards_highest_card():
    state = position(["9D KH", "5H 6H 7H 2C KD", "3S 4D"], "9S QC JC")
    state, _ = act(state, 0, discard("KH"))
    state, events = timed_out(state)
    assert types(events) == ["turn_timed_out", "drew", "melded", "discarded"]
    assert all(e["seat"] == 1 for e in events)
    assert events[1]["card"] == "9S"
    m = events[2]
    assert same(m["cards"], "5H 6H 7H") and m["hidden"] is False
    assert events[3]["card"] == "KD"  # 10 points beats 9S and 2C
    assert same(view(state, 1)["hand"], "2C 9S")
    assert turn(state) == 2 and phase(state) == "start"


def test_time_out_in_dealers_first_turn_does_not_draw():
    state = position(["4S 5S 6S 8C QD", "2C 3D", "9H TD"], "9S KC")
    state, events = timed_out(state)
    assert types(events) == ["turn_timed_out", "melded", "discarded"]
    assert events[0]["seat"] == 0
    assert same(events[1]["cards"], "4S 5S 6S") and events[2]["card"] == "QD"
    assert view(state, 0)["stock_count"] == 2
    assert view(state, 0)["hand"] == ["8C"]


def test_time_out_after_the_turns_draw_does_not_draw_again():
    state = position(["9D KH", "5H 6H 7H 2C", "3S 4D"], "KS QC JC")
    state, _ = play(state, (0, discard("KH")), (1, DRAW))
    state, events = timed_out(state)
    assert types(events) == ["turn_timed_out", "melded", "discarded"]
    assert events[2]["card"] == "KS"
    assert view(state, 1)["stock_count"] == 2


def test_time_out_never_exposes_a_secret_set():
    state = position(["8C 8D 8H 8S 3D KS", "2C", "4H"], "9S KC")
    state, events = timed_out(state)
    assert types(events) == ["turn_timed_out", "melded", "discarded"]
    m = events[1]
    assert m["hidden"] is False and same(m["cards"], "8C 8D 8H 8S")
    assert events[2]["card"] == "KS"
    assert view(state, 1)["melds"][0]["cards"] is not None


def test_time_out_makes_no_lay_offs():
    # 8H would fit seat 0's run 5H 6H 7H, but the server does not lay off for the seat
    state = position(["5H 6H 7H 9C KC", "8H 2C 3D", "4S TD"], "KS QC JC")
    state, _ = play(state, (0, meld("5H 6H 7H")), (0, discard("KC")))
    state, events = timed_out(state)
    assert types(events) == ["turn_timed_out", "drew", "discarded"]
    assert events[2]["card"] == "KS"
    assert same(view(state, 1)["hand"], "8H 2C 3D")


def test_time_out_exposes_every_meld_of_the_arrangement():
    # the only best arrangement: run 4H 5H 6H + set 7H 7D 7S (deadwood 12); then discard KD
    state = position(["4H 5H 6H 7H 7D 7S KD 2C", "9C", "3S"], "QC JC")
    state, events = timed_out(state)
    assert types(events) == ["turn_timed_out", "melded", "melded", "discarded"]
    exposed = sorted(sorted(e["cards"]) for e in events if e["type"] == "melded")
    assert exposed == sorted([sorted(["4H", "5H", "6H"]), sorted(["7H", "7D", "7S"])])
    assert events[-1]["card"] == "KD"
    assert view(state, 0)["hand"] == ["2C"]


def test_time_out_can_end_the_round_by_tongits():
    state = position(["9D KH", "5H 6H", "3S 4D"], "7H QC JC")
    state, _ = act(state, 0, discard("KH"))
    state, events = timed_out(state)
    assert types(events) == ["turn_timed_out", "drew", "melded", "round_ended"]
    end = round_end(events)
    assert end["reason"] == "tongits" and end["winner"] == 1
    assert phase(state) == "round_over"


def test_time_out_discarding_the_last_card_is_tongits():
    state = position(["9D KH", "5H 6H 7H", "3S 4D"], "KS QC JC")
    state, _ = act(state, 0, discard("KH"))
    state, events = timed_out(state)
    assert types(events) == ["turn_timed_out", "drew", "melded", "discarded", "round_ended"]
    assert round_end(events)["winner"] == 1


def test_time_out_on_the_last_stock_card_ends_round_by_stock_out():
    state = position(["4S 5S 6S 8H KH", "2C 3D", "TD"], "9S")
    state, _ = play(state, (0, meld("4S 5S 6S")), (0, discard("KH")))
    state, events = timed_out(state)
    assert types(events) == ["turn_timed_out", "drew", "discarded", "round_ended"]
    assert events[2]["card"] == "9S"
    end = round_end(events)
    assert end["reason"] == "stock_out" and end["winner"] == 0


def test_pending_draw_answer_times_out_as_fold():
    state = draw_setup(0, ["9H", "2H", "3S"])
    state, _ = act(state, 0, {"type": "call_draw"})
    state, events = timed_out(state)
    assert types(events) == ["turn_timed_out", "folded"]
    assert events[0]["seat"] == 1 and events[1]["seat"] == 1
    assert turn(state) == 2 and phase(state) == "draw_call"
    state, events = timed_out(state)
    assert types(events) == ["turn_timed_out", "folded", "round_ended"]
    end = one(events, "round_ended")
    assert end["winner"] == 0 and end["payouts"] == [2, -1, -1]


def test_time_out_after_taking_the_discard_does_not_draw():
    state = position(["9D KH 7H", "7S 7D 2C KD", "3S 4D"], "KS QC JC")
    state, _ = play(state, (0, discard("7H")), (1, take("7S 7D")))
    state, events = timed_out(state)
    assert types(events) == ["turn_timed_out", "discarded"]
    assert events[1]["card"] == "KD"
    assert view(state, 1)["stock_count"] == 3
