"""docs/rules.md "How a round ends" - Stock out, Burned (sunog) and Turn cap."""

from tests.rules.tongits_helpers import (
    DRAW,
    FILL,
    MELDS,
    act,
    cards,
    discard,
    house,
    illegal,
    meld,
    phase,
    play,
    position,
    round_end,
    standard,
    turn,
    types,
    view,
)


def short_stock_round(rest, opened=(0, 1, 2), rules=None):
    """Dealer 0 and a two-card stock: seat 1 draws KC, seat 2 draws QC (the last card).

    Seat s holds MELDS[s] (exposed in its first turn when s in ``opened``) plus ``rest[s]``; the
    dealer also holds KH which it discards.  Each drawer discards the card it drew, so at the
    end seat s holds exactly ``rest[s]``.  Returns (state, events of seat 2's last discard).
    """
    hands = [(cards(MELDS[s]) if s in opened else []) + cards(rest[s]) for s in range(3)]
    hands[0].append("KH")
    state = position(hands, "KC QC", rules=rules)
    moves = [(0, meld(MELDS[0]))] if 0 in opened else []
    moves += [(0, discard("KH")), (1, DRAW)]
    moves += [(1, meld(MELDS[1]))] if 1 in opened else []
    moves += [(1, discard("KC")), (2, DRAW)]
    moves += [(2, meld(MELDS[2]))] if 2 in opened else []
    state, _ = play(state, *moves)
    assert view(state, 2)["stock_count"] == 0 and phase(state) == "play"
    return act(state, 2, discard("QC"))


def test_stock_out_round_ends_right_after_the_last_drawers_discard():
    hands = ["2C 3C 4C 9H KH", "5D 6D 7D 5H", "9S TS JS 8S"]
    state = position(hands, "KC QC")
    state, _ = play(
        state,
        (0, meld("2C 3C 4C")),
        (0, discard("KH")),
        (1, DRAW),
        (1, meld("5D 6D 7D")),
        (1, discard("KC")),
        (2, DRAW),
    )
    # the last card is drawn: the turn goes on (meld, lay off) until the discard
    v = view(state, 2)
    assert v["stock_count"] == 0 and v["phase"] == "play" and v["turn"] == 2
    state, events = act(state, 2, meld("9S TS JS"))
    assert types(events) == ["melded"]
    state, events = act(state, 2, discard("QC"))
    assert types(events) == ["discarded", "round_ended"]
    end = round_end(events)
    assert end["reason"] == "stock_out" and end["round"] == 1
    assert phase(state) == "round_over"
    assert illegal(state, 0, DRAW) == "no_round_in_play"


def test_stock_out_lowest_deadwood_wins_melds_in_hand_do_not_count():
    # seat 1 keeps the run 2S 3S 4S in hand: its deadwood is 5 (5H), not 14
    state, events = short_stock_round(["9H", "2S 3S 4S 5H", "8H"])
    end = round_end(events)
    assert end["deadwood"] == [9, 5, 8]
    assert end["winner"] == 1 and end["burned"] == []
    assert end["payouts"] == [-1, 2, -1]  # stock out pays base 1


def test_stock_out_tie_last_drawer():
    # seats 1 and 2 tie on 5; seat 2 drew the last card
    _, events = short_stock_round(["9H", "5H", "5S"])
    end = round_end(events)
    assert end["deadwood"] == [9, 5, 5]
    assert end["winner"] == 2
    assert end["payouts"] == [-1, -1, 2]


def test_stock_out_tie_last_drawer_not_tied_first_tied_player_after_them():
    # seats 0 and 1 tie on 5; the last drawer (seat 2) is not tied: seat 0 comes first after it
    _, events = short_stock_round(["5H", "5S", "9H"])
    end = round_end(events)
    assert end["deadwood"] == [5, 5, 9]
    assert end["winner"] == 0
    assert end["payouts"] == [2, -1, -1]


def test_stock_out_tie_fewer_cards_house():
    # house, nobody opened (no burning): seats 0 and 1 tie on 5, seat 1 holds fewer cards
    rules = house()
    _, events = short_stock_round(["2S 3D", "5H", "9H"], opened=(), rules=rules)
    end = round_end(events)
    assert end["deadwood"] == [5, 5, 9]
    assert end["winner"] == 1 and end["burned"] == []
    b = rules.base
    assert end["payouts"] == [-b, 2 * b, -b]


def test_stock_out_tie_fewer_cards_then_seat_order_from_dealer_house():
    # dealer 1; seats 2 and 0 tie on 5 with one card each: order from the dealer is 1, 2, 0
    rules = house()
    state = position(["5S", "9H KH", "5H"], "KC QC", dealer=1, rules=rules)
    state, events = play(
        state, (1, discard("KH")), (2, DRAW), (2, discard("KC")), (0, DRAW), (0, discard("QC"))
    )
    end = round_end(events)
    assert end["reason"] == "stock_out" and end["deadwood"] == [5, 9, 5]
    assert end["winner"] == 2
    b = rules.base
    assert end["payouts"] == [-b, -b, 2 * b]


def test_stock_out_tie_option_alone_selects_the_tie_break():
    # standard rules but stock_out_tie = fewer_cards: the seat with fewer cards wins the tie
    _, events = short_stock_round(
        ["2S 3D", "5H", "9H"], rules=standard(stock_out_tie="fewer_cards")
    )
    assert round_end(events)["winner"] == 1


def test_burned_players_left_out_before_tie_break():
    # only seat 0 opened; seat 2 (last drawer) ties it on 5 but is burned
    _, events = short_stock_round(["5H", "9H", "5S"], opened=(0,))
    end = round_end(events)
    assert end["deadwood"] == [5, 9, 5]
    assert sorted(end["burned"]) == [1, 2]
    assert end["winner"] == 0
    # base 1 + burned penalty 1 from each loser
    assert end["payouts"] == [4, -2, -2]


def test_burned_player_cannot_win_by_points():
    # seat 1 never opened: its deadwood 0 (AH 2H 3H held) does not win
    _, events = short_stock_round(["5H", "AH 2H 3H", "8H"], opened=(0, 2))
    end = round_end(events)
    assert end["deadwood"] == [5, 0, 8]
    assert end["burned"] == [1]
    assert end["winner"] == 0
    # seat 1: base 1 + burned 1; seat 2: base 1
    assert end["payouts"] == [3, -2, -1]


def test_without_burning_unopened_player_wins_by_points_house():
    rules = house()
    _, events = short_stock_round(["5H", "AH 2H 3H", "8H"], opened=(0, 2), rules=rules)
    end = round_end(events)
    assert end["burned"] == [] and end["winner"] == 1
    per_loser = rules.base + rules.per_ace * 1  # AH in the winner's hand
    assert end["payouts"] == [-per_loser, 2 * per_loser, -per_loser]


def test_all_burned_stock_out_has_no_winner():
    state, events = short_stock_round(["2S 3D", "5H", "9H"], opened=())
    end = round_end(events)
    assert end["reason"] == "stock_out"
    assert end["winner"] is None
    assert sorted(end["burned"]) == [0, 1, 2]
    assert end["payouts"] == [0, 0, 0]
    assert "match_ended" not in types(events)
    assert view(state, 0)["round_wins"] == [0, 0, 0]


def test_burned_even_when_round_ends_by_tongits_only_if_burning_on():
    for rules, burned, per_loser in ((standard(), [0, 2], 4), (house(), [], house().tongits)):
        state = position(["KC QD", "5H 6H", "9S 8D"], "7H JS TS", rules=rules)
        state, events = play(state, (0, discard("KC")), (1, DRAW), (1, meld("5H 6H 7H")))
        end = round_end(events)
        assert sorted(end["burned"]) == burned
        assert end["payouts"] == [-per_loser, 2 * per_loser, -per_loser]


def turn_cap_round(rules):
    """Dealer 0 opens with 2C 3C 4C; every later turn draws a card and discards it."""
    state = position(["2C 3C 4C 5H KH", "9H", "8H"], FILL, rules=rules)
    state, _ = play(state, (0, meld("2C 3C 4C")), (0, discard("KH")))  # turn 1
    return state


def test_turn_cap_settles_as_stock_out_with_reason_turn_cap():
    state = turn_cap_round(standard(turn_cap=6))
    for number in range(2, 7):  # turns 2..6
        seat = turn(state)
        assert phase(state) == "start"
        state, events = act(state, seat, DRAW)
        state, events = act(state, seat, discard(events[0]["card"]))
        if number < 6:
            assert "round_ended" not in types(events)
    assert types(events) == ["discarded", "round_ended"]
    end = round_end(events)
    assert end["reason"] == "turn_cap"
    assert end["deadwood"] == [5, 9, 8]
    # settled as a stock out: seats 1, 2 burned, seat 0 wins; base 1 + burned 1 each
    assert sorted(end["burned"]) == [1, 2] and end["winner"] == 0
    assert end["payouts"] == [4, -2, -2]
    assert view(state, 0)["stock_count"] == 5  # the stock did not run out
    assert phase(state) == "round_over"


def test_turn_cap_not_reached_before_its_turn():
    state = turn_cap_round(standard(turn_cap=7))
    for _ in range(5):
        seat = turn(state)
        state, events = act(state, seat, DRAW)
        state, events = act(state, seat, discard(events[0]["card"]))
    assert phase(state) == "start" and "round_ended" not in types(events)
