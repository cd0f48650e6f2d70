"""docs/rules.md for the h19 preset: Draw ("Fight") within the turn (``draw_call_timing: in_turn``)
and its longer block, ``stock_out_tie: last_drawer_loses``, ``draw_folded``, ``first_dealer:
creator`` and ``stake``; a worked example of the H19 room move by move."""

import random

import pytest

from games.rules import RuleSet, deal, fold, legal_commands, new_game, time_out
from tests.rules.test_rules_stock_out import short_stock_round
from tests.rules.tongits_helpers import (
    CALL,
    CHALLENGE,
    DRAW,
    FOLD,
    act,
    blocked_position,
    discard,
    draw_setup,
    h19,
    illegal,
    lay,
    meld,
    meld_in_view,
    phase,
    play,
    points,
    position,
    round_end,
    same,
    standard,
    take,
    turn,
    types,
    view,
)

# ---------------------------------------------------------------- the worked example

A, B, C = 0, 1, 2
C_HAND = "2C 5C 7C 9C JC 2H 4H 6H 8H TH 5S 7S"  # twelve loose cards: C never opens


def worked_example(rules):
    """A (dealer) has 9S TS JS on the table and holds 3D 4D; B has KS KC KD on the table and
    holds QH 8C; C has not opened and holds twelve loose cards. A has just drawn KH."""
    state = position(
        ["9S TS JS 3D 4D QC", "KS KC KD QH 8C", C_HAND],
        "6C 3S KH 2D 5D 7D 8D",
        dealer=A,
        rules=rules,
    )
    state, _ = play(
        state,
        (A, meld("9S TS JS")),
        (A, discard("QC")),
        (B, DRAW),
        (B, meld("KS KC KD")),
        (B, discard("6C")),
        (C, DRAW),
        (C, discard("3S")),
        (A, DRAW),
    )
    assert turn(state) == A and phase(state) == "play"
    assert same(view(state, A)["hand"], "3D 4D KH")
    assert same(view(state, B)["hand"], "QH 8C")
    assert view(state, A)["hand_counts"] == [3, 2, 12]
    assert view(state, A)["opened"] == [True, True, False]
    return state


def test_h19_worked_example_fight_after_a_lay_off_instead_of_the_discard():
    state = worked_example(h19())
    # A lays KH off on B's kings (meld 2): four kings on the table, B is blocked
    state, events = act(state, A, lay("KH", 2))
    assert types(events) == ["laid_off"]
    assert same(meld_in_view(state, 2)["cards"], "KS KC KD KH")
    assert view(state, A)["deadwood"] == 7 and same(view(state, A)["hand"], "3D 4D")
    assert B in view(state, A)["blocked"]
    # instead of discarding, A calls Draw ("Fight")
    assert CALL in legal_commands(state, A)
    state, events = act(state, A, CALL)
    assert types(events) == ["draw_called"] and events[0]["seat"] == A
    assert turn(state) == B and phase(state) == "draw_call"
    # C has not opened: it cannot challenge, and folds by itself once B has answered
    assert illegal(state, C, FOLD) == "not_your_turn"
    # B (18) cannot beat A's 7 and folds; C auto-folds; the round ends
    state, events = act(state, B, FOLD)
    assert types(events) == ["folded", "folded", "round_ended"]
    assert [e["seat"] for e in events[:2]] == [B, C]
    end = round_end(events)
    assert end["reason"] == "draw" and end["winner"] == A
    assert end["deadwood"] == [7, 18, points(C_HAND)]
    assert end["burned"] == [C]
    # nobody challenged: each loser pays base 1, C burned 3 more (no aces, no secret sets)
    assert end["payouts"] == [5, -1, -4]
    assert sum(end["payouts"]) == 0
    assert view(state, C)["chips"] == [5, -1, -4]


def test_h19_worked_example_at_stake_10_pays_ten_times():
    state = worked_example(h19(stake=10))
    state, events = play(state, (A, lay("KH", 2)), (A, CALL), (B, FOLD))
    assert round_end(events)["payouts"] == [50, -10, -40]


def test_h19_worked_example_with_b_challenging():
    # B challenges instead: A's 7 beats B's 18; a challenged Draw pays 3 from the challenger and
    # draw_folded (1) from the folder C, plus C's burned penalty 3
    state = worked_example(h19())
    state, events = play(state, (A, lay("KH", 2)), (A, CALL), (B, CHALLENGE))
    assert types(events)[-3:] == ["challenged", "folded", "round_ended"]
    end = round_end(events)
    assert end["winner"] == A and end["burned"] == [C]
    assert end["payouts"] == [3 + 1 + 3, -3, -4]


def test_standard_rules_refuse_the_same_fight_after_the_draw():
    state = worked_example(standard())
    state, _ = act(state, A, lay("KH", 2))
    assert illegal(state, A, CALL) == "already_drew"
    assert CALL not in legal_commands(state, A)


# ---------------------------------------------------------------- draw_call_timing: in_turn


def test_draw_call_timing_in_turn_still_allows_a_call_at_the_start():
    state = draw_setup(1, ["4H", "9H", "8S"], rules=h19())
    assert CALL in legal_commands(state, 1)
    state, events = act(state, 1, CALL)
    assert types(events) == ["draw_called"]


def test_draw_call_timing_in_turn_after_a_draw_or_a_take():
    state = draw_setup(1, ["4H", "9H", "8S"], rules=h19())
    drawn, _ = act(state, 1, DRAW)
    assert CALL in legal_commands(drawn, 1)
    after, events = act(drawn, 1, CALL)
    assert types(events) == ["draw_called"] and turn(after) == 2
    # the hand keeps the drawn card: no discard happened
    assert view(after, 1)["hand_counts"][1] == 2


def test_draw_call_timing_in_turn_in_the_dealers_first_turn_once_opened():
    state = position(["2C 3C 4C 9H KH", "5D 8S", "9S 7S"], "KC QC JC", rules=h19())
    assert illegal(state, 0, CALL) == "not_opened"
    assert CALL not in legal_commands(state, 0)
    state, _ = act(state, 0, meld("2C 3C 4C"))
    assert CALL in legal_commands(state, 0)
    state, events = act(state, 0, CALL)
    # neither other seat has opened: both fold by themselves, both burned
    assert types(events) == ["draw_called", "folded", "folded", "round_ended"]
    end = round_end(events)
    assert end["winner"] == 0 and end["burned"] == [1, 2]
    assert end["payouts"] == [8, -4, -4]


def test_draw_call_timing_in_turn_needs_an_opened_seat_and_refuses_unopened():
    state = draw_setup(0, ["9H", "2H", "3S"], opened=(1, 2), rules=h19())
    state, _ = act(state, 0, DRAW)
    assert illegal(state, 0, CALL) == "not_opened"
    assert CALL not in legal_commands(state, 0)


def test_draw_call_timing_in_turn_refused_when_draw_call_is_off():
    state = draw_setup(0, ["9H", "2H", "3S"], rules=h19(draw_call=False))
    assert illegal(state, 0, CALL) == "rule_disabled"
    state, _ = act(state, 0, DRAW)
    assert illegal(state, 0, CALL) == "rule_disabled"
    assert CALL not in legal_commands(state, 0)


def test_draw_call_timing_in_turn_not_while_answering_a_draw():
    state = draw_setup(1, ["4H", "9H", "8S"], rules=h19())
    state, _ = act(state, 1, CALL)
    assert illegal(state, 2, CALL) == "wrong_phase"


def test_in_turn_block_lasts_through_the_whole_turn_after_a_draw():
    state = blocked_position(h19())
    assert illegal(state, 0, CALL) == "draw_blocked"
    state, _ = act(state, 0, DRAW)
    # still blocked after the draw: no Fight this turn
    assert 0 in view(state, 1)["blocked"]
    assert illegal(state, 0, CALL) == "draw_blocked"
    assert CALL not in legal_commands(state, 0)
    # the block ends with this turn's discard
    state, _ = act(state, 0, discard("JC"))
    assert 0 not in view(state, 1)["blocked"]
    state, _ = play(state, (1, DRAW), (1, discard("TC")), (2, DRAW), (2, discard("8C")))
    assert turn(state) == 0 and CALL in legal_commands(state, 0)
    state, _ = act(state, 0, DRAW)
    assert CALL in legal_commands(state, 0)


def test_in_turn_block_lasts_through_the_whole_turn_after_a_take():
    state = blocked_position(h19())
    state, _ = act(state, 0, take("9H 9D"))
    assert 0 in view(state, 0)["blocked"]
    assert illegal(state, 0, CALL) == "draw_blocked"
    state, _ = act(state, 0, discard("6S"))
    assert 0 not in view(state, 0)["blocked"]


def test_start_timing_block_still_ends_with_the_draw():
    state = blocked_position(standard())
    state, _ = act(state, 0, DRAW)
    assert 0 not in view(state, 0)["blocked"]


def test_in_turn_time_out_never_calls_a_draw():
    # a seat that could Fight and times out: the server draws, melds and discards for it
    state = draw_setup(1, ["4H", "9H", "8S"], rules=h19())
    events = time_out(state)
    kinds = [e.type for e in events]
    assert kinds[0] == "turn_timed_out" and "draw_called" not in kinds
    assert kinds[1] == "drew" and kinds[-1] in ("discarded", "round_ended")
    # also once it has drawn
    drawn, _ = act(state, 1, DRAW)
    kinds = [e.type for e in time_out(drawn)]
    assert "draw_called" not in kinds and "discarded" in kinds


# ---------------------------------------------------------------- stock_out_tie: last_drawer_loses


def test_last_drawer_loses_tied_last_drawer_ranks_after_the_other():
    # seats 1 and 2 tie on 5; seat 2 drew the last card, so seat 1 wins (last_drawer: seat 2)
    _, events = short_stock_round(["9H", "5H", "5S"], rules=h19())
    end = round_end(events)
    assert end["reason"] == "stock_out" and end["deadwood"] == [9, 5, 5]
    assert end["winner"] == 1
    assert end["payouts"] == [-1, 2, -1]
    _, events = short_stock_round(["9H", "5H", "5S"], rules=standard())
    assert round_end(events)["winner"] == 2


def test_last_drawer_loses_three_way_tie_first_seat_after_the_last_drawer():
    _, events = short_stock_round(["5D", "5H", "5S"], rules=h19())
    end = round_end(events)
    assert end["deadwood"] == [5, 5, 5] and end["winner"] == 0


def test_last_drawer_loses_last_drawer_not_tied_first_tied_after_them():
    _, events = short_stock_round(["5H", "5S", "9H"], rules=h19())
    end = round_end(events)
    assert end["deadwood"] == [5, 5, 9] and end["winner"] == 0


def test_last_drawer_loses_burned_seats_left_out_first():
    # seat 0 never opened (burned) though tied on 5; seats 1 and 2 tie; seat 2 drew last
    _, events = short_stock_round(["5D", "5H", "5S"], opened=(1, 2), rules=h19())
    end = round_end(events)
    assert end["burned"] == [0] and end["winner"] == 1
    assert end["payouts"] == [-4, 5, -1]


# ---------------------------------------------------------------- draw_folded


def test_draw_folded_folder_pays_it_instead_of_draw_won_challenged():
    # seat 1 calls; seat 2 folds, seat 0 challenges and wins with 4
    state = draw_setup(1, ["4H", "9H", "8S"], rules=h19())
    state, events = play(state, (1, CALL), (2, FOLD), (0, CHALLENGE))
    end = round_end(events)
    assert end["winner"] == 0 and end["deadwood"] == [4, 9, 8]
    assert end["payouts"] == [4, -3, -1]  # standard: [6, -3, -3]


def test_draw_folded_unset_folders_pay_like_challengers():
    state = draw_setup(1, ["4H", "9H", "8S"], rules=h19(draw_folded=None))
    _, events = play(state, (1, CALL), (2, FOLD), (0, CHALLENGE))
    assert round_end(events)["payouts"] == [6, -3, -3]


def test_draw_folded_applies_to_auto_folds_with_the_burned_penalty_on_top():
    state = draw_setup(0, ["9H", "5S", "KS"], opened=(0, 1), rules=h19(draw_folded=0))
    state, events = play(state, (0, CALL), (1, CHALLENGE))
    end = round_end(events)
    assert end["winner"] == 1 and end["burned"] == [2]
    # caller pays 3; seat 2 folded automatically: draw_folded 0 + burned 3
    assert end["payouts"] == [-3, 6, -3]


def test_draw_folded_does_not_touch_an_unchallenged_draw():
    state = draw_setup(0, ["9H", "2H", "3S"], rules=h19(draw_folded=0))
    _, events = play(state, (0, CALL), (1, FOLD), (2, FOLD))
    assert round_end(events)["payouts"] == [2, -1, -1]


def test_draw_folded_caller_who_loses_pays_draw_won_challenged():
    state = draw_setup(0, ["9H", "2H", "3S"], rules=h19())
    _, events = play(state, (0, CALL), (1, CHALLENGE), (2, FOLD))
    end = round_end(events)
    assert end["winner"] == 1
    assert end["payouts"] == [-3, 4, -1]


# ---------------------------------------------------------------- stake


@pytest.mark.parametrize("stake", [1, 10, 100])
def test_stake_multiplies_every_payout_with_bonuses_and_burned_penalty(stake):
    # seat 0 goes out by Tongits owning an ace meld (AC 2C 3C) while seat 2 never opened:
    # each loser pays tongits 3 + 1 per ace, seat 2 also its burned penalty, all times stake
    rules = h19(stake=stake)
    state = position(["AC 2C 3C 5H 6H 7H KH", "5D 6D 7D 9H", "9S 8S"], "KC QC JC 4D", rules=rules)
    state, _ = play(
        state,
        (0, meld("AC 2C 3C")),
        (0, discard("KH")),
        (1, DRAW),
        (1, meld("5D 6D 7D")),
        (1, discard("KC")),
        (2, DRAW),
        (2, discard("QC")),
        (0, DRAW),
        (0, meld("5H 6H 7H")),
    )
    state, events = act(state, 0, discard("JC"))
    end = round_end(events)
    assert end["reason"] == "tongits" and end["winner"] == 0 and end["burned"] == [2]
    each = 3 + 1  # tongits + one ace
    assert end["payouts"] == [stake * (2 * each + 3), -stake * each, -stake * (each + 3)]
    assert sum(end["payouts"]) == 0


def test_stake_multiplies_a_stock_out_and_a_draw():
    _, events = short_stock_round(["9H", "5H", "5S"], rules=h19(stake=10))
    assert round_end(events)["payouts"] == [-10, 20, -10]
    state = draw_setup(1, ["4H", "9H", "8S"], rules=h19(stake=10))
    _, events = play(state, (1, CALL), (2, FOLD), (0, CHALLENGE))
    assert round_end(events)["payouts"] == [40, -30, -10]


def test_stake_shows_in_every_players_view():
    state = draw_setup(1, ["4H", "9H", "8S"], rules=h19(stake=10))
    for seat in (0, 1, 2, None):
        assert view(state, seat)["rules"]["stake"] == 10


# ---------------------------------------------------------------- first_dealer


def test_first_dealer_creator_deals_the_first_round():
    for creator in range(3):
        for seed in range(5):
            rng = random.Random(seed)
            started = new_game(h19(), None, rng, creator_seat=creator)
            assert started.first_dealer == creator
            state = fold([started])
            assert deal(state, rng).dealer == creator


def test_first_dealer_creator_without_a_creator_is_random():
    dealers = {new_game(h19(), None, random.Random(s)).first_dealer for s in range(30)}
    assert dealers == {0, 1, 2}


def test_first_dealer_random_ignores_the_creator_seat():
    dealers = {
        new_game(standard(), None, random.Random(s), creator_seat=1).first_dealer for s in range(30)
    }
    assert dealers == {0, 1, 2}
    # the same draw from the rng as without a creator
    for s in range(5):
        with_creator = new_game(standard(), None, random.Random(s), creator_seat=2)
        without = new_game(standard(), None, random.Random(s))
        assert with_creator == without


@pytest.mark.parametrize("bad", [3, -1, True, "0"])
def test_first_dealer_bad_creator_seat_is_refused(bad):
    with pytest.raises(ValueError):
        new_game(h19(), None, random.Random(1), creator_seat=bad)


# ---------------------------------------------------------------- the preset


H19_TABLE = {
    "ace_high_runs": False,
    "take_discard_to_lay_off": False,
    "draw_call": True,
    "draw_call_timing": "in_turn",
    "secret_sets": False,
    "burning": True,
    "burned_penalty": 3,
    "draw_folded": 1,
    "stock_out_tie": "last_drawer_loses",
    "first_dealer": "creator",
    "stake": 1,
    "wins_to_match": 3,
    "turn_seconds": 15,
}


def test_h19_preset_matches_variants_table_h19_column():
    rules = RuleSet.preset("h19")
    for name, value in H19_TABLE.items():
        assert getattr(rules, name) == value, name
    assert (
        RuleSet.h19() == rules == RuleSet.from_dict("h19") == RuleSet.from_dict({"preset": "h19"})
    )
    assert "h19" in RuleSet.PRESETS
    assert RuleSet.from_dict(rules.to_dict()) == rules


def test_h19_secret_sets_are_off():
    state = position(["7C 7D 7H 7S KH", "5D 8S", "9S 3S"], "KC QC", rules=h19())
    assert illegal(state, 0, meld("7C 7D 7H 7S", hidden=True)) == "rule_disabled"
