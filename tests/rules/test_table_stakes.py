"""The table-stakes rule (docs/chips.md): nobody loses more than their buy-in; a short loser's
escrow is shared by the winners in proportion to what they were owed, in whole chips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from games.rules import table_stakes


def test_the_worked_example_of_docs_chips_md():
    # Buy-in 100 at stake 10: seat 2 owes 210 but holds 100 in escrow; seats 0 and 1 were
    # owed 180 and 30, so they share the 100 as 180 : 30 -> 85.71 and 14.29, in whole chips
    # 85 and 14, and the chip left over goes to the first winner in seat order.
    assert table_stakes([180, 30, -210], [100, 100, 100]) == [86, 14, -100]


def test_within_the_buy_in_the_rules_result_is_paid_as_it_is():
    assert table_stakes([12, -5, -7], [100, 100, 100]) == [12, -5, -7]
    assert table_stakes([0, 0, 0], [100, 100, 100]) == [0, 0, 0]


def test_one_winner_takes_what_the_losers_can_pay():
    assert table_stakes([250, -150, -100], [100, 100, 100]) == [200, -100, -100]


@pytest.mark.parametrize(
    ("owed", "paid"),
    [
        ([1, 1, -2], [1, 1, -2]),
        ([2, 1, -3], [2, 0, -2]),  # 2 shared as 2:1 -> 1.33, 0.67 -> 1, 0; the chip left: seat 0
        ([1, 2, -3], [1, 1, -2]),  # 2 shared as 1:2 -> 0.67, 1.33 -> 0, 1; seat 0 gets the rest
        ([-9, 5, 4], [-2, 2, 0]),  # 2 shared as 5:4 -> 1.11, 0.89 -> 1, 0; seat 1 comes first
    ],
)
def test_the_remainder_goes_by_seat_order(owed, paid):
    assert table_stakes(owed, [2, 2, 2]) == paid


def test_bad_input_is_refused():
    with pytest.raises(ValueError):
        table_stakes([1, 0, 0], [10, 10, 10])  # not zero-sum
    with pytest.raises(ValueError):
        table_stakes([1, -1], [10, 10, 10])


owed_results = st.tuples(st.integers(-500, 500), st.integers(-500, 500)).map(
    lambda ab: [ab[0], ab[1], -ab[0] - ab[1]]
)


@given(owed=owed_results, buy_ins=st.lists(st.integers(0, 400), min_size=3, max_size=3))
def test_table_stakes_invariants(owed, buy_ins):
    paid = table_stakes(owed, buy_ins)
    assert sum(paid) == 0
    for seat in range(3):
        assert paid[seat] >= -buy_ins[seat]  # nobody loses more than their buy-in
        if owed[seat] <= 0:
            assert paid[seat] == -min(-owed[seat], buy_ins[seat])
        else:
            assert 0 <= paid[seat] <= owed[seat]  # no winner gets more than owed
    pot = -sum(p for p in paid if p < 0)
    due = sum(o for o in owed if o > 0)
    if pot == due:
        assert paid == owed
    else:  # shared in proportion, each within a chip of its exact share
        for seat in range(3):
            if owed[seat] > 0:
                assert abs(paid[seat] - pot * owed[seat] / due) < 1
