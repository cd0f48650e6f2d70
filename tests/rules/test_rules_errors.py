"""IllegalMove codes: every refusal has its stable code and changes nothing."""

import pytest

from games.rules import IllegalMove, decide, fold
from tests.rules.tongits_helpers import (
    CALL,
    CHALLENGE,
    DRAW,
    FOLD,
    act,
    blocked_position,
    discard,
    draw_setup,
    game_started,
    house,
    illegal,
    lay,
    meld,
    play,
    position,
    standard,
    take,
    take_on,
)


def seat1_to_start(rules=None):
    """Dealer 0 owns meld 1 (2C 3C 4C) and discarded 7H; seat 1 is to start its turn."""
    state = position(
        ["2C 3C 4C 9H 7H", "7S 7D 5C 8S KS", "6S 5D 4D"], "QD JD TD 9D 8D", rules=rules
    )
    state, _ = play(state, (0, meld("2C 3C 4C")), (0, discard("7H")))
    return state


def test_illegal_move_has_a_code():
    state = seat1_to_start()
    with pytest.raises(IllegalMove) as info:
        decide(state, 2, DRAW)
    assert info.value.code == "not_your_turn"


def test_not_your_turn():
    state = seat1_to_start()
    for command in (DRAW, take("7S 7D"), discard("6S"), CALL):
        assert illegal(state, 2, command) == "not_your_turn"
    assert illegal(state, 0, DRAW) == "not_your_turn"
    # dealer's first turn: nobody else may act
    fresh = position(["2C 3C 4C 9H 7H", "7S 7D", "6S"], "QD JD")
    assert illegal(fresh, 1, DRAW) == "not_your_turn"


def test_wrong_phase_answering_seat_sends_a_turn_command():
    state = draw_setup(0, ["9H", "2H", "3S"])
    state, _ = act(state, 0, CALL)
    assert illegal(state, 1, DRAW) == "wrong_phase"
    assert illegal(state, 1, discard("2H")) == "wrong_phase"


def test_must_draw_first():
    state = seat1_to_start()
    assert illegal(state, 1, meld("7S 7D 7H")) == "must_draw_first"
    assert illegal(state, 1, lay("5C", 1)) == "must_draw_first"
    assert illegal(state, 1, discard("KS")) == "must_draw_first"


def test_already_drew():
    state, _ = act(seat1_to_start(), 1, DRAW)
    assert illegal(state, 1, DRAW) == "already_drew"
    assert illegal(state, 1, take("7S 7D")) == "already_drew"
    assert illegal(state, 1, CALL) == "already_drew"


def test_card_not_in_hand():
    state, _ = act(seat1_to_start(), 1, DRAW)
    assert illegal(state, 1, discard("6S")) == "card_not_in_hand"
    assert illegal(state, 1, meld("8S 9S TS")) == "card_not_in_hand"
    assert illegal(state, 1, lay("5D", 1)) == "card_not_in_hand"


def test_invalid_meld():
    state, _ = act(seat1_to_start(), 1, DRAW)
    assert illegal(state, 1, meld("7S 7D 8S")) == "invalid_meld"
    assert illegal(state, 1, meld("5C 8S KS")) == "invalid_meld"


def test_invalid_lay_off():
    state, _ = act(seat1_to_start(), 1, DRAW)
    assert illegal(state, 1, lay("7S", 1)) == "invalid_lay_off"
    assert illegal(state, 1, lay("KS", 1)) == "invalid_lay_off"


def test_discard_not_usable():
    state = seat1_to_start()
    assert illegal(state, 1, take("8S KS")) == "discard_not_usable"
    assert illegal(state, 1, take("7S")) == "discard_not_usable"


def test_draw_blocked():
    state = blocked_position()  # seat 1 laid off on seat 0's meld in its last turn
    assert illegal(state, 0, CALL) == "draw_blocked"


def test_not_opened():
    state = seat1_to_start()
    assert illegal(state, 1, CALL) == "not_opened"


def test_no_draw_call_pending():
    state = seat1_to_start()
    assert illegal(state, 1, CHALLENGE) == "no_draw_call_pending"
    assert illegal(state, 1, FOLD) == "no_draw_call_pending"
    state, _ = act(state, 1, DRAW)
    assert illegal(state, 1, CHALLENGE) == "no_draw_call_pending"


def test_no_round_in_play():
    state = fold([game_started()])
    assert illegal(state, 0, DRAW) == "no_round_in_play"
    state = position(["KC QD", "5H 6H", "9S 8D"], "7H JS TS")
    state, _ = play(state, (0, discard("KC")), (1, DRAW), (1, meld("5H 6H 7H")))
    assert illegal(state, 2, DRAW) == "no_round_in_play"


def test_unknown_command():
    state = seat1_to_start()
    assert illegal(state, 1, {"type": "dance"}) == "unknown_command"


@pytest.mark.parametrize(
    "command",
    [
        {"type": "discard"},
        {"type": "discard", "card": "ZZ"},
        {"type": "discard", "card": 7},
        {"type": "meld", "cards": "7S 7D 7H"},
        {"type": "meld"},
        {"type": "lay_off", "card": "5C"},
        {"type": "lay_off", "card": "5C", "meld_id": "one"},
        {"type": "meld", "cards": ["7S", "7D", "1H"]},
    ],
)
def test_bad_command(command):
    state, _ = act(seat1_to_start(), 1, DRAW)
    assert illegal(state, 1, command) == "bad_command"


def test_bad_command_take_discard_malformed():
    state = seat1_to_start()
    assert illegal(state, 1, {"type": "take_discard", "cards": ["7S", "XX"]}) == "bad_command"


def test_unknown_meld():
    state, _ = act(seat1_to_start(), 1, DRAW)
    assert illegal(state, 1, lay("5C", 99)) == "unknown_meld"
    state = seat1_to_start(house())
    assert illegal(state, 1, take_on(99)) == "unknown_meld"


def test_rule_disabled():
    state = seat1_to_start(house())
    assert illegal(state, 1, CALL) == "rule_disabled"
    state = seat1_to_start(standard())
    assert illegal(state, 1, take_on(1)) == "rule_disabled"
    state = position(["8C 8D 8H 8S KH", "7S", "6S"], "QD", rules=standard(secret_sets=False))
    assert illegal(state, 0, meld("8C 8D 8H 8S", hidden=True)) == "rule_disabled"
