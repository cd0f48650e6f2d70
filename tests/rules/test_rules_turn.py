"""docs/rules.md "A turn": draw or take, meld, lay off (sapaw) and its Draw block, discard."""

import pytest

from games.rules import legal_commands
from tests.rules.tongits_helpers import (
    CALL,
    DRAW,
    act,
    blocked_position,
    discard,
    house,
    illegal,
    lay,
    meld,
    meld_in_view,
    one,
    phase,
    play,
    position,
    same,
    standard,
    take,
    take_on,
    turn,
    types,
    view,
)


def test_turn_starts_with_draw_of_top_stock_card():
    state = position(["2C 3C 4C 9H KH", "8S 7D", "6S 5D"], "QD JD TD 9D 8D")
    state, _ = play(state, (0, meld("2C 3C 4C")), (0, discard("KH")))
    assert turn(state) == 1 and phase(state) == "start"
    assert view(state, 1)["stock_count"] == 5
    state, events = act(state, 1, DRAW)
    assert events == [{**events[0], "type": "drew", "seat": 1, "card": "QD"}]
    v = view(state, 1)
    assert same(v["hand"], "8S 7D QD")
    assert v["stock_count"] == 4 and v["hand_counts"] == [1, 3, 2]
    assert v["phase"] == "play" and v["turn"] == 1
    state, events = act(state, 1, discard("8S"))
    state, events = act(state, 2, DRAW)
    assert events[0]["card"] == "JD"  # stock is drawn from the top, in order


def test_taken_discard_must_form_new_meld_with_two_hand_cards():
    state = position(["9H KH 7H", "7S 7D 2C 8C", "6S 5D"], "QD JD TD")
    state, _ = act(state, 0, discard("7H"))
    assert illegal(state, 1, take("7S")) == "discard_not_usable"
    assert illegal(state, 1, take("7S 2C")) == "discard_not_usable"
    state, events = act(state, 1, take("7S 7D"))
    e = one(events, "took_discard")
    assert e["seat"] == 1 and e["card"] == "7H" and e["meld_id"] == 1
    assert e["kind"] == "set" and same(e["cards"], "7S 7D 7H") and not e["lay_off"]
    v = view(state, 1)
    assert same(v["hand"], "2C 8C")
    assert v["discard_pile"] == []
    assert v["phase"] == "play" and v["turn"] == 1
    m = meld_in_view(state, 1, 2)
    assert m["owner"] == 1 and same(m["cards"], "7S 7D 7H") and m["hidden"] is False
    # the take was the turn's draw: no second draw, and the turn still needs a discard
    assert illegal(state, 1, DRAW) == "already_drew"
    state, _ = act(state, 1, discard("8C"))
    assert turn(state) == 2


def test_taken_discard_may_join_three_hand_cards_in_a_run():
    state = position(["9H KH 5H", "6H 7H 8H 2C 3D", "6S 5D"], "QD JD TD")
    state, _ = act(state, 0, discard("5H"))
    state, events = act(state, 1, take("6H 7H 8H"))
    e = one(events, "took_discard")
    assert e["kind"] == "run" and same(e["cards"], "5H 6H 7H 8H")


def test_only_the_top_discard_may_be_taken():
    state = position(["7H KH", "2C 3D", "7S 7D 9C"], "QD JD TD")
    state, _ = play(state, (0, discard("7H")), (1, DRAW), (1, discard("2C")))
    assert view(state, 2)["discard_pile"] == ["7H", "2C"]
    assert illegal(state, 2, take("7S 7D")) == "discard_not_usable"


def house_take_position(rules, seat2_discard):
    """Dealer 0 owns meld 1 (4H 5H 6H), seat 1 owns meld 2 (9S TS JS); seat 2 discards."""
    state = position(
        ["4H 5H 6H KC 2D 3S", "9S TS JS 3D 8D", "7H QS 5D"], "KD QC JD TD", rules=rules
    )
    state, _ = play(
        state,
        (0, meld("4H 5H 6H")),
        (0, discard("KC")),
        (1, DRAW),
        (1, meld("9S TS JS")),
        (1, discard("KD")),
        (2, DRAW),
        (2, discard(seat2_discard)),
    )
    assert turn(state) == 0 and phase(state) == "start"
    return state


def test_take_discard_to_lay_off_on_own_meld_only_where_option_on():
    state = house_take_position(house(), "7H")
    state, events = act(state, 0, take_on(1))
    e = one(events, "took_discard")
    assert e["seat"] == 0 and e["card"] == "7H" and e["meld_id"] == 1 and e["lay_off"] is True
    assert e["kind"] == "run" and same(e["cards"], "4H 5H 6H 7H")
    assert same(view(state, 0)["hand"], "2D 3S") and phase(state) == "play"
    # standard: a taken discard must form a new meld
    assert illegal(house_take_position(standard(), "7H"), 0, take_on(1)) == "rule_disabled"
    # the option alone turns it on, whatever the preset
    state, events = act(
        house_take_position(standard(take_discard_to_lay_off=True), "7H"), 0, take_on(1)
    )
    assert one(events, "took_discard")["lay_off"] is True


def test_take_discard_lay_off_never_on_an_opponent_meld():
    state = house_take_position(house(), "QS")
    # QS would extend seat 1's 9S TS JS, but that meld is not seat 0's own
    assert illegal(state, 0, take_on(2)) in ("invalid_lay_off", "discard_not_usable")
    # and it does not fit seat 0's own meld
    assert illegal(state, 0, take_on(1)) in ("invalid_lay_off", "discard_not_usable")


def test_meld_lay_off_discard_only_after_the_draw():
    state = position(["2C 3C 4C 9H KH", "5C 6H 7H 8H 2D", "6S 5D"], "QD JD TD 9D 8D")
    state, _ = play(state, (0, meld("2C 3C 4C")), (0, discard("KH")))
    assert illegal(state, 1, meld("6H 7H 8H")) == "must_draw_first"
    assert illegal(state, 1, lay("5C", 1)) == "must_draw_first"
    assert illegal(state, 1, discard("2D")) == "must_draw_first"
    state, _ = act(state, 1, DRAW)
    state, events = play(state, (1, meld("6H 7H 8H")), (1, lay("5C", 1)), (1, discard("2D")))
    assert types(events) == ["melded", "laid_off", "discarded"]


def test_any_number_of_melds_in_one_turn():
    state = position(["KH 9H", "5D 6D 7D 9S TS JS 2C", "6S 5C"], "QD JD TD")
    state, _ = play(state, (0, discard("KH")), (1, DRAW))
    state, events = play(state, (1, meld("5D 6D 7D")), (1, meld("9S TS JS")), (1, discard("2C")))
    assert [e["meld_id"] for e in events if e["type"] == "melded"] == [1, 2]
    assert same(view(state, 1)["hand"], "QD") and turn(state) == 2


def test_lay_off_on_set_takes_only_missing_fourth_suit():
    state = position(["7C 7D 7H 9H KH", "7S 8H 2C 3D", "6S 5C"], "QD JD TD")
    state, _ = play(state, (0, meld("7C 7D 7H")), (0, discard("KH")), (1, DRAW))
    assert illegal(state, 1, lay("8H", 1)) == "invalid_lay_off"
    state, events = act(state, 1, lay("7S", 1))
    e = one(events, "laid_off")
    assert e == {**e, "seat": 1, "card": "7S", "meld_id": 1}
    m = meld_in_view(state, 1, 2)
    assert m["size"] == 4 and same(m["cards"], "7C 7D 7H 7S") and m["owner"] == 0


def test_lay_off_on_run_grows_at_either_end():
    state = position(["5H 6H 7H 9C KC", "4H 8H 9H 2H 5D 3S", "6S 5C"], "QD JD TD")
    state, _ = play(state, (0, meld("5H 6H 7H")), (0, discard("KC")), (1, DRAW))
    assert illegal(state, 1, lay("2H", 1)) == "invalid_lay_off"  # gap
    assert illegal(state, 1, lay("5D", 1)) == "invalid_lay_off"  # other suit
    assert illegal(state, 1, lay("9H", 1)) == "invalid_lay_off"  # not adjacent yet
    state, _ = play(state, (1, lay("4H", 1)), (1, lay("8H", 1)), (1, lay("9H", 1)))
    m = meld_in_view(state, 1, 0)
    assert m["kind"] == "run" and same(m["cards"], "4H 5H 6H 7H 8H 9H") and m["size"] == 6
    assert illegal(state, 1, lay("2H", 1)) == "invalid_lay_off"


def test_lay_off_on_opponent_meld_blocks_their_draw_call():
    state = blocked_position()
    assert 0 in view(state, 0)["blocked"]
    assert illegal(state, 0, CALL) == "draw_blocked"
    assert {"type": "call_draw"} not in legal_commands(state, 0)


def test_block_ends_when_blocked_turn_starts_with_draw():
    state = blocked_position()
    state, _ = act(state, 0, DRAW)
    assert 0 not in view(state, 1)["blocked"]
    state, _ = play(
        state, (0, discard("JC")), (1, DRAW), (1, discard("TC")), (2, DRAW), (2, discard("8C"))
    )
    assert turn(state) == 0 and 0 not in view(state, 0)["blocked"]
    assert {"type": "call_draw"} in legal_commands(state, 0)
    state, events = act(state, 0, CALL)
    assert events[0]["type"] == "draw_called"


def test_block_ends_when_blocked_turn_starts_with_take():
    state = blocked_position()
    state, _ = act(state, 0, take("9H 9D"))
    assert 0 not in view(state, 0)["blocked"]
    state, _ = play(
        state, (0, discard("6S")), (1, DRAW), (1, discard("JC")), (2, DRAW), (2, discard("TC"))
    )
    state, events = act(state, 0, CALL)
    assert events[0]["type"] == "draw_called"


def test_lay_off_on_own_meld_never_blocks():
    state = position(["2C 3C 4C 5C 9H KH", "8S 2D", "9S 7S"], "KC QC JC TC 8C")
    state, _ = play(state, (0, meld("2C 3C 4C")), (0, lay("5C", 1)), (0, discard("KH")))
    assert 0 not in view(state, 1)["blocked"]
    state, _ = play(state, (1, DRAW), (1, discard("KC")), (2, DRAW), (2, discard("QC")))
    assert 0 not in view(state, 0)["blocked"]
    state, events = act(state, 0, CALL)
    assert events[0]["type"] == "draw_called"


def test_lay_off_blocks_only_the_meld_owner():
    # seat 1 (opened) lays off on seat 0's meld: seat 0 is blocked, seat 1 itself is not
    state = position(["2C 3C 4C 9H KH", "5C 5D 6D 7D 8S", "9S 7S"], "KC QC JC TC 8C")
    state, _ = play(
        state,
        (0, meld("2C 3C 4C")),
        (0, discard("KH")),
        (1, DRAW),
        (1, meld("5D 6D 7D")),
        (1, lay("5C", 1)),
        (1, discard("KC")),
    )
    blocked = view(state, 2)["blocked"]
    assert 0 in blocked and 1 not in blocked
    state, _ = play(state, (2, DRAW), (2, discard("QC")), (0, DRAW), (0, discard("JC")))
    state, events = act(state, 1, CALL)
    assert events[0]["type"] == "draw_called"


def test_discard_one_card_face_up_then_turn_passes_to_next_seat():
    state = position(["2C 3C 4C 9H KH", "8S 2D", "9S 7S"], "KC QC JC TC 8C")
    state, events = act(state, 0, discard("KH"))
    assert events == [{**events[0], "type": "discarded", "seat": 0, "card": "KH"}]
    v = view(state, 2)
    assert v["discard_pile"] == ["KH"] and v["hand_counts"] == [4, 2, 2]
    assert v["turn"] == 1 and v["phase"] == "start"
    assert illegal(state, 0, discard("9H")) == "not_your_turn"


def test_melding_does_not_end_the_turn():
    state = position(["2C 3C 4C 9H KH", "8S 2D", "9S 7S"], "KC QC JC TC 8C")
    state, _ = act(state, 0, meld("2C 3C 4C"))
    assert turn(state) == 0 and phase(state) == "play"


@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_play_passes_from_seat_s_to_seat_s_plus_1_mod_3(dealer):
    hands = ["8S 2D", "9S 7S", "6H 4D"]
    hands[dealer] = "KH 5C 4H"
    state = position(hands, "KC QC JC TC 8C 7C", dealer=dealer)
    seen = []
    for step in range(4):
        seat = turn(state)
        seen.append(seat)
        if step:
            state, events = act(state, seat, DRAW)
            card = events[0]["card"]
        else:
            card = "KH"
        state, _ = act(state, seat, discard(card))
    assert seen == [dealer, (dealer + 1) % 3, (dealer + 2) % 3, dealer]
