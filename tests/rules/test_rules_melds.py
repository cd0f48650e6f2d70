"""docs/rules.md "Melds": sets, runs, ace rules, one meld per card, secret sets, opening."""

import pytest

from games.rules import IllegalMove
from tests.rules.tongits_helpers import (
    CALL,
    DRAW,
    act,
    discard,
    house,
    illegal,
    lay,
    meld,
    meld_in_view,
    one,
    play,
    position,
    same,
    standard,
    take,
    view,
)

OTHERS = ["2C 3D", "9H TD"]


def dealer_to_play(hand, rules=None):
    """Dealer 0 in its first turn (no draw needed) holding ``hand``."""
    return position([hand] + OTHERS, "KS QS JS TS", rules=rules)


def test_set_of_three_of_one_rank():
    state, events = act(dealer_to_play("7C 7D 7H KD"), 0, meld("7C 7D 7H"))
    m = one(events, "melded")
    assert m["seat"] == 0 and m["kind"] == "set" and m["meld_id"] == 1 and m["hidden"] is False
    assert same(m["cards"], "7C 7D 7H")


def test_set_of_four_of_one_rank():
    _, events = act(dealer_to_play("7C 7D 7H 7S KD"), 0, meld("7C 7D 7H 7S"))
    m = one(events, "melded")
    assert m["kind"] == "set" and same(m["cards"], "7C 7D 7H 7S")


def test_set_needs_a_single_rank():
    assert illegal(dealer_to_play("7C 7D 8H KD"), 0, meld("7C 7D 8H")) == "invalid_meld"


def test_two_cards_are_not_a_meld():
    assert illegal(dealer_to_play("7C 7D 8H KD"), 0, meld("7C 7D")) == "invalid_meld"


def test_run_three_or_more_consecutive_cards_of_one_suit():
    _, events = act(dealer_to_play("4H 5H 6H KD"), 0, meld("4H 5H 6H"))
    m = one(events, "melded")
    assert m["kind"] == "run" and same(m["cards"], "4H 5H 6H")
    _, events = act(dealer_to_play("4H 5H 6H 7H 8H KD"), 0, meld("8H 4H 6H 5H 7H"))
    assert one(events, "melded")["kind"] == "run"


def test_run_must_be_one_suit():
    assert illegal(dealer_to_play("4H 5D 6H KD"), 0, meld("4H 5D 6H")) == "invalid_meld"


def test_run_must_be_consecutive():
    assert illegal(dealer_to_play("4H 5H 7H KD"), 0, meld("4H 5H 7H")) == "invalid_meld"


@pytest.mark.parametrize("rules", [standard(), house()], ids=["standard", "house"])
def test_aces_are_low_a_2_3_is_a_run(rules):
    _, events = act(dealer_to_play("AS 2S 3S KD", rules), 0, meld("AS 2S 3S"))
    assert one(events, "melded")["kind"] == "run"


def test_run_q_k_a_only_with_ace_high_runs():
    assert illegal(dealer_to_play("QS KS AS 5D"), 0, meld("QS KS AS")) == "invalid_meld"
    _, events = act(dealer_to_play("QS KS AS 5D", house()), 0, meld("QS KS AS"))
    assert one(events, "melded")["kind"] == "run"
    _, events = act(
        dealer_to_play("QS KS AS 5D", standard(ace_high_runs=True)), 0, meld("QS KS AS")
    )
    assert one(events, "melded")["kind"] == "run"


@pytest.mark.parametrize("rules", [standard(), house()], ids=["standard", "house"])
def test_k_a_2_never_a_run(rules):
    state = dealer_to_play("QS KS AS 2S 3S 5D", rules)
    assert illegal(state, 0, meld("KS AS 2S")) == "invalid_meld"
    assert illegal(state, 0, meld("QS KS AS 2S")) == "invalid_meld"
    assert illegal(state, 0, meld("KS AS 2S 3S")) == "invalid_meld"


def test_lay_off_ace_above_king_only_with_ace_high_runs():
    state, _ = act(dealer_to_play("JS QS KS AS 5D"), 0, meld("JS QS KS"))
    assert illegal(state, 0, lay("AS", 1)) == "invalid_lay_off"
    state, _ = act(dealer_to_play("JS QS KS AS 5D", house()), 0, meld("JS QS KS"))
    state, events = act(state, 0, lay("AS", 1))
    assert one(events, "laid_off")["card"] == "AS"
    assert same(meld_in_view(state, 1)["cards"], "JS QS KS AS")


def test_lay_off_two_on_q_k_a_never_allowed():
    state, _ = act(dealer_to_play("QS KS AS 2S 5D", house()), 0, meld("QS KS AS"))
    assert illegal(state, 0, lay("2S", 1)) == "invalid_lay_off"


def test_card_belongs_to_one_meld_at_a_time():
    state, _ = act(dealer_to_play("5S 6S 7S 7H 7D 8S KD"), 0, meld("5S 6S 7S"))
    assert illegal(state, 0, meld("7S 7H 7D")) == "card_not_in_hand"
    state, _ = act(state, 0, lay("8S", 1))
    assert illegal(state, 0, lay("8S", 1)) == "card_not_in_hand"


def test_same_card_twice_in_one_meld_is_refused():
    illegal(dealer_to_play("7S 7H 7D KD"), 0, meld(["7S", "7S", "7S"]))


def test_melds_stay_on_the_table_for_the_round():
    state = position(["5S 6S 7S 9H KD", "2C 3D", "4H TD"], "KS QS JS TS")
    state, _ = play(state, (0, meld("5S 6S 7S")), (0, discard("KD")))
    state, _ = play(state, (1, DRAW), (1, discard("KS")), (2, DRAW), (2, discard("QS")), (0, DRAW))
    for seat in range(3):
        m = meld_in_view(state, 1, seat)
        assert m["owner"] == 0 and same(m["cards"], "5S 6S 7S") and m["size"] == 3
    # a meld's cards never go back to the hand
    assert illegal(state, 0, discard("5S")) == "card_not_in_hand"


def test_meld_ids_count_from_1_in_table_order():
    state = position(["5S 6S 7S 8C 8D 8H KD 4C", "9C 9D 2C 3D", "4H TD"], "9H QS JS TS")
    state, ev = play(state, (0, meld("8C 8D 8H")), (0, meld("5S 6S 7S")), (0, discard("KD")))
    assert [e["meld_id"] for e in ev if e["type"] == "melded"] == [1, 2]
    state, ev = play(state, (1, DRAW), (1, meld("9C 9D 9H")))
    assert one(ev, "melded")["meld_id"] == 3
    state, ev = play(state, (1, discard("2C")), (2, DRAW))
    assert sorted(m["meld_id"] for m in view(state, 2)["melds"]) == [1, 2, 3]


def test_taken_discard_meld_gets_the_next_meld_id():
    state = position(["5S 6S 7S KD 9D", "KC KH 2C", "4H TD"], "9H QS JS TS")
    state, _ = play(state, (0, meld("5S 6S 7S")), (0, discard("KD")))
    state, ev = act(state, 1, take("KC KH"))
    assert one(ev, "took_discard")["meld_id"] == 2


def test_ten_may_be_spelled_10_on_input_output_uses_t():
    state, events = act(dealer_to_play("TH JH QH KD"), 0, meld(["10H", "JH", "QH"]))
    m = one(events, "melded")
    assert same(m["cards"], "TH JH QH") and "10H" not in m["cards"]
    assert "10H" not in str(view(state, 0))


# --- secret sets -------------------------------------------------------------------------------


def test_secret_set_four_of_a_kind_from_hand_exposed_face_down():
    state, events = act(dealer_to_play("8C 8D 8H 8S KD"), 0, meld("8C 8D 8H 8S", hidden=True))
    m = one(events, "melded")
    assert m["hidden"] is True and m["kind"] == "set" and m["seat"] == 0
    assert meld_in_view(state, 1, 0)["hidden"] is True


def test_secret_set_needs_four_of_a_kind():
    state = dealer_to_play("8C 8D 8H 4S 5S 6S 7S KD")
    assert illegal(state, 0, meld("8C 8D 8H", hidden=True)) == "invalid_meld"
    assert illegal(state, 0, meld("4S 5S 6S 7S", hidden=True)) == "invalid_meld"


def test_secret_set_never_completed_with_the_taken_discard():
    # seat 1 holds three 8s and takes the fourth from the discard pile: the meld is face up
    state = position(["8S KD 9D", "8C 8D 8H 2C", "4H TD"], "9H QS JS TS")
    state, _ = act(state, 0, discard("8S"))
    hidden_try = {"type": "take_discard", "cards": ["8C", "8D", "8H"], "hidden": True}
    try:
        state2, _ = act(state, 1, hidden_try)
    except IllegalMove:  # refusing the hidden flag is fine
        pass
    else:
        m = meld_in_view(state2, 1, 2)
        assert m["hidden"] is False and same(m["cards"], "8C 8D 8H 8S")
    state, _ = act(state, 1, take("8C 8D 8H"))
    m = meld_in_view(state, 1, 2)  # as seen by an opponent
    assert m["hidden"] is False and same(m["cards"], "8C 8D 8H 8S")


def test_secret_set_counts_as_opened_and_cannot_be_laid_off_on():
    # dealer 0 opens only with a secret set of 8s; seat 1 cannot lay off on it
    state = position(["8C 8D 8H 8S 9H KD", "9S 2C", "4H TD"], "7S QS JS TS 6C")
    state, _ = play(state, (0, meld("8C 8D 8H 8S", hidden=True)), (0, discard("KD")))
    state, _ = act(state, 1, DRAW)
    assert illegal(state, 1, lay("9S", 1)) == "invalid_lay_off"
    assert illegal(state, 1, lay("7S", 1)) == "invalid_lay_off"
    state, _ = play(state, (1, discard("7S")), (2, DRAW), (2, discard("QS")))
    # the secret set is enough to call Draw
    state, events = act(state, 0, CALL)
    assert events[0]["type"] == "draw_called"


def test_secret_sets_off_rejects_hidden_meld():
    state = dealer_to_play("8C 8D 8H 8S KD", standard(secret_sets=False))
    assert illegal(state, 0, meld("8C 8D 8H 8S", hidden=True)) == "rule_disabled"
    _, events = act(state, 0, meld("8C 8D 8H 8S"))
    assert one(events, "melded")["hidden"] is False


def test_opened_once_owning_a_meld():
    # seat 1 never melded: it may not call Draw; after melding, it may
    state = position(["KD 9D", "5H 6H 7H 2C", "4S TD"], "JS QS JC TC 9C 8C")
    state, _ = play(state, (0, discard("KD")))
    assert illegal(state, 1, CALL) == "not_opened"
    state, _ = play(
        state,
        (1, DRAW),
        (1, meld("5H 6H 7H")),
        (1, discard("JS")),
        (2, DRAW),
        (2, discard("QS")),
        (0, DRAW),
        (0, discard("JC")),
    )
    state, events = act(state, 1, CALL)
    assert events[0]["type"] == "draw_called" and events[0]["seat"] == 1
