"""docs/rules.md "How a round ends" - Draw (draw_call): calling, answering, comparing deadwood.

Positions come from ``draw_setup``: seat s owns meld MELDS[s] (when opened) and holds exactly
``rest[s]`` when the caller starts its turn.  Nobody is blocked.
"""

from games.rules import legal_commands
from tests.rules.tongits_helpers import (
    CALL,
    CHALLENGE,
    DRAW,
    FOLD,
    act,
    discard,
    draw_setup,
    house,
    illegal,
    lay,
    meld,
    meld_in_view,
    phase,
    play,
    position,
    round_end,
    standard,
    turn,
    types,
    view,
)


def test_draw_call_needs_an_exposed_meld():
    state = draw_setup(0, ["9H", "2H", "3S"], opened=(1, 2))
    assert illegal(state, 0, CALL) == "not_opened"
    assert {"type": "call_draw"} not in legal_commands(state, 0)


def test_draw_call_disabled_in_house_and_when_option_off():
    for rules in (house(), standard(draw_call=False)):
        state = draw_setup(0, ["9H", "2H", "3S"], rules=rules)
        assert illegal(state, 0, CALL) == "rule_disabled"
        assert {"type": "call_draw"} not in legal_commands(state, 0)


def test_draw_call_only_instead_of_the_turns_draw():
    state = draw_setup(0, ["9H", "2H", "3S"])
    assert {"type": "call_draw"} in legal_commands(state, 0)
    state, _ = act(state, 0, DRAW)
    assert illegal(state, 0, CALL) == "already_drew"


def test_draw_call_answered_one_at_a_time_in_turn_order_from_caller():
    state = draw_setup(1, ["4H", "9H", "8S"])
    state, events = act(state, 1, CALL)
    assert types(events) == ["draw_called"] and events[0]["seat"] == 1
    assert turn(state) == 2 and phase(state) == "draw_call"
    assert illegal(state, 0, CHALLENGE) == "not_your_turn"
    assert illegal(state, 1, FOLD) == "not_your_turn"
    state, events = act(state, 2, FOLD)
    assert types(events) == ["folded"] and events[0]["seat"] == 2
    assert turn(state) == 0 and phase(state) == "draw_call"
    state, events = act(state, 0, CHALLENGE)
    assert types(events) == ["challenged", "round_ended"] and events[0]["seat"] == 0
    end = round_end(events)
    assert end["reason"] == "draw" and end["winner"] == 0
    assert end["deadwood"] == [4, 9, 8]
    # challenged Draw: 3 from every loser, the folder included
    assert end["payouts"] == [6, -3, -3]
    assert phase(state) == "round_over"


def test_unopened_seat_folds_automatically():
    state = draw_setup(0, ["9H", "5S", "KS"], opened=(0, 2))
    state, events = act(state, 0, CALL)
    assert types(events) == ["draw_called", "folded"]
    assert events[1]["seat"] == 1
    assert turn(state) == 2 and phase(state) == "draw_call"
    assert legal_commands(state, 1) == []
    state, events = act(state, 2, FOLD)
    end = round_end(events)
    assert end["reason"] == "draw" and end["winner"] == 0
    assert end["burned"] == [1]
    # unchallenged Draw pays base 1; seat 1 burned pays 1 more
    assert end["payouts"] == [3, -2, -1]


def test_unopened_seat_after_an_answer_folds_automatically():
    state = draw_setup(0, ["9H", "5S", "KS"], opened=(0, 1))
    state, events = act(state, 0, CALL)
    assert types(events) == ["draw_called"] and turn(state) == 1
    state, events = act(state, 1, CHALLENGE)
    assert types(events) == ["challenged", "folded", "round_ended"]
    assert events[1]["seat"] == 2
    end = round_end(events)
    assert end["winner"] == 1 and end["burned"] == [2]
    # challenged: 3 from each loser; seat 2 burned +1
    assert end["payouts"] == [-3, 7, -4]


def test_all_answerers_unopened_round_ends_with_the_call():
    state = draw_setup(0, ["9H", "2H", "3S"], opened=(0,))
    state, events = act(state, 0, CALL)
    assert types(events) == ["draw_called", "folded", "folded", "round_ended"]
    assert [e["seat"] for e in events[1:3]] == [1, 2]
    end = round_end(events)
    assert end["winner"] == 0 and end["reason"] == "draw"
    assert sorted(end["burned"]) == [1, 2]
    assert end["payouts"] == [4, -2, -2]


def test_if_all_fold_the_caller_wins():
    # the caller has the highest deadwood, but nobody challenges
    state = draw_setup(0, ["9H", "2H", "3S"])
    state, events = play(state, (0, CALL), (1, FOLD), (2, FOLD))
    end = round_end(events)
    assert end["winner"] == 0 and end["reason"] == "draw"
    assert end["deadwood"] == [9, 2, 3]
    assert end["burned"] == []
    assert end["payouts"] == [2, -1, -1]  # unchallenged: base 1 each


def test_draw_lowest_deadwood_wins():
    state = draw_setup(0, ["9H", "3H", "4S"])
    state, events = play(state, (0, CALL), (1, CHALLENGE), (2, CHALLENGE))
    end = round_end(events)
    assert end["winner"] == 1 and end["deadwood"] == [9, 3, 4]
    assert end["payouts"] == [-3, 6, -3]


def test_caller_wins_challenged_draw_with_lowest_deadwood():
    state = draw_setup(0, ["2H", "9H", "8S"])
    state, events = play(state, (0, CALL), (1, CHALLENGE), (2, FOLD))
    end = round_end(events)
    assert end["winner"] == 0
    assert end["payouts"] == [6, -3, -3]


def test_folder_with_lowest_deadwood_does_not_win():
    state = draw_setup(0, ["5H", "8S", "AH"])
    state, events = play(state, (0, CALL), (1, CHALLENGE), (2, FOLD))
    end = round_end(events)
    assert end["winner"] == 0 and end["deadwood"] == [5, 8, 1]
    assert end["payouts"] == [6, -3, -3]


def test_challenger_wins_tie_with_caller():
    state = draw_setup(0, ["5H", "5S", "KS"])
    state, events = play(state, (0, CALL), (1, CHALLENGE), (2, FOLD))
    end = round_end(events)
    assert end["winner"] == 1 and end["deadwood"] == [5, 5, 10]
    assert end["payouts"] == [-3, 6, -3]


def test_challenger_wins_tie_with_caller_even_when_seated_before_caller():
    # caller 2; seat 0 (answers first) folds, seat 1 challenges and ties the caller
    state = draw_setup(2, ["KS", "6H", "6S"])
    state, events = play(state, (2, CALL), (0, FOLD), (1, CHALLENGE))
    end = round_end(events)
    assert end["winner"] == 1
    assert end["payouts"] == [-3, 6, -3]


def test_tied_challengers_first_after_caller_wins():
    # caller 1: challengers 2 and 0 tie on 4; seat 2 comes first after the caller
    state = draw_setup(1, ["4H", "9H", "4S"])
    state, events = play(state, (1, CALL), (2, CHALLENGE), (0, CHALLENGE))
    end = round_end(events)
    assert end["winner"] == 2 and end["deadwood"] == [4, 9, 4]
    assert end["payouts"] == [-3, -3, 6]
    # caller 2: challengers 0 and 1 tie; seat 0 comes first after the caller
    state = draw_setup(2, ["4H", "4S", "9H"])
    state, events = play(state, (2, CALL), (0, CHALLENGE), (1, CHALLENGE))
    end = round_end(events)
    assert end["winner"] == 0
    assert end["payouts"] == [6, -3, -3]


def test_three_way_tie_goes_to_first_challenger_after_caller():
    state = draw_setup(0, ["5H", "5S", "5C"])
    state, events = play(state, (0, CALL), (1, CHALLENGE), (2, CHALLENGE))
    assert round_end(events)["winner"] == 1


def test_draw_deadwood_ignores_melds_kept_in_hand_and_aces_in_hand_pay():
    # caller holds AH 2H 3H (a run kept in hand) and 8S: deadwood 8 beats the challenger's 9
    state = draw_setup(0, ["AH 2H 3H 8S", "9H", "KS"])
    state, events = play(state, (0, CALL), (1, CHALLENGE), (2, FOLD))
    end = round_end(events)
    assert end["winner"] == 0 and end["deadwood"] == [8, 9, 10]
    # challenged 3 + one ace (AH in the winner's hand) = 4 from each loser
    assert end["payouts"] == [8, -4, -4]


def test_secret_set_counts_as_exposed_meld_for_calling_draw():
    state = draw_setup(0, ["9H", "2H", "3S"], melds={0: "8C 8D 8H 8S"}, hidden=(0,))
    assert meld_in_view(state, 1, 1)["hidden"] is True
    state, events = play(state, (0, CALL), (1, FOLD), (2, FOLD))
    end = round_end(events)
    assert end["winner"] == 0
    # unchallenged base 1 + per_secret_set 3 from each loser
    assert end["payouts"] == [8, -4, -4]


def test_secret_set_counts_as_exposed_meld_for_challenging_draw():
    state = draw_setup(0, ["9H", "2H", "3S"], melds={1: "8C 8D 8H 8S"}, hidden=(1,))
    state, events = act(state, 0, CALL)
    assert types(events) == ["draw_called"] and turn(state) == 1  # seat 1 is not auto-folded
    state, events = play(state, (1, CHALLENGE), (2, FOLD))
    end = round_end(events)
    assert end["winner"] == 1 and 1 not in end["burned"]
    # challenged 3 + per_secret_set 3 from each loser
    assert end["payouts"] == [-6, 12, -6]


def test_answering_seat_may_only_challenge_or_fold():
    state = draw_setup(0, ["9H", "2H", "3S"])
    state, _ = act(state, 0, CALL)
    assert sorted(c["type"] for c in legal_commands(state, 1)) == ["challenge", "fold"]
    assert legal_commands(state, 0) == [] and legal_commands(state, 2) == []


def test_blocked_seat_may_still_challenge_a_draw():
    # seat 2 lays 8D off on seat 1's meld 5D 6D 7D: seat 1 is blocked from calling, not from
    # answering.  Stock: KC (seat 1), QC (seat 2), JC (seat 0).
    state = position(["2C 3C 4C 9H KH", "5D 6D 7D 2H", "9S TS JS 8D 3S"], "KC QC JC TC")
    state, _ = play(
        state,
        (0, meld("2C 3C 4C")),
        (0, discard("KH")),
        (1, DRAW),
        (1, meld("5D 6D 7D")),
        (1, discard("KC")),
        (2, DRAW),
        (2, meld("9S TS JS")),
        (2, lay("8D", 2)),
        (2, discard("QC")),
    )
    assert 1 in view(state, 0)["blocked"]
    state, events = act(state, 0, CALL)
    assert types(events) == ["draw_called"] and turn(state) == 1
    state, events = play(state, (1, CHALLENGE), (2, FOLD))
    end = round_end(events)
    assert end["winner"] == 1 and end["deadwood"] == [9, 2, 3]
    assert end["payouts"] == [-3, 6, -3]
