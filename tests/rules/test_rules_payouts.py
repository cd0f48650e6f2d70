"""docs/rules.md "Payments (chips, per round)": amounts, aces, secret sets, burned penalty, zero
sum."""

from tests.rules.tongits_helpers import (
    CALL,
    CHALLENGE,
    DRAW,
    FOLD,
    act,
    discard,
    draw_setup,
    house,
    lay,
    meld,
    play,
    position,
    round_end,
    standard,
    view,
)


def test_each_loser_pays_base_on_stock_out():
    # dealer 0 opens; seats 1, 2 open; seat 0 lowest at stock out
    state = position(["2C 3C 4C 3H KH", "5D 6D 7D 9H", "9S TS JS 8H"], "KC QC")
    state, events = play(
        state,
        (0, meld("2C 3C 4C")),
        (0, discard("KH")),
        (1, DRAW),
        (1, meld("5D 6D 7D")),
        (1, discard("KC")),
        (2, DRAW),
        (2, meld("9S TS JS")),
        (2, discard("QC")),
    )
    end = round_end(events)
    assert end["winner"] == 0 and end["payouts"] == [2, -1, -1]


def four_turn_tongits(rules=None):
    """Everyone opens; seat 1 goes out by Tongits on its second turn (melds 5H 6H 7H)."""
    state = position(
        ["2C 3C 4C 9H KH", "5D 6D 7D 5H 6H", "9S TS JS 8S"], "KC QC JC 7H", rules=rules
    )
    return play(
        state,
        (0, meld("2C 3C 4C")),
        (0, discard("KH")),
        (1, DRAW),
        (1, meld("5D 6D 7D")),
        (1, discard("KC")),
        (2, DRAW),
        (2, meld("9S TS JS")),
        (2, discard("QC")),
        (0, DRAW),
        (0, discard("JC")),
        (1, DRAW),
        (1, meld("5H 6H 7H")),
    )


def test_tongits_pays_tongits_instead_of_base():
    _, events = four_turn_tongits()
    end = round_end(events)
    assert end["reason"] == "tongits" and end["winner"] == 1
    assert end["burned"] == [] and end["deadwood"] == [9, 0, 8]
    assert end["payouts"] == [-3, 6, -3]


def test_unchallenged_draw_pays_base():
    state = draw_setup(0, ["4H", "9H", "8S"])
    _, events = play(state, (0, CALL), (1, FOLD), (2, FOLD))
    assert round_end(events)["payouts"] == [2, -1, -1]


def test_challenged_draw_pays_draw_won_challenged_from_every_loser_including_folders():
    state = draw_setup(0, ["4H", "9H", "8S"])
    _, events = play(state, (0, CALL), (1, CHALLENGE), (2, FOLD))
    end = round_end(events)
    assert end["winner"] == 0
    assert end["payouts"] == [6, -3, -3]  # seat 2 folded and still pays 3


def test_per_ace_counts_aces_laid_off_on_winner_melds_not_winner_layoffs_elsewhere():
    # T1 seat 0: melds AH 2H 3H (meld 1) and 2S 3S 4S (meld 2), discards KH; keeps AD AC
    # T2 seat 1: draws KC, melds 2D 3D 4D (meld 3), discards KC
    # T3 seat 2: draws KD, melds 9C TC JC (meld 4), lays AS off on seat 0's meld 2, discards KD
    # T4 seat 0: draws QD, lays AD off on seat 1's meld 3, discards QD; keeps AC
    # T5 seat 1: draws JD (last card), discards it -> stock out
    state = position(
        ["AH 2H 3H 2S 3S 4S AD AC KH", "2D 3D 4D 9H 7S", "9C TC JC AS 8H"], "KC KD QD JD"
    )
    state, events = play(
        state,
        (0, meld("AH 2H 3H")),
        (0, meld("2S 3S 4S")),
        (0, discard("KH")),
        (1, DRAW),
        (1, meld("2D 3D 4D")),
        (1, discard("KC")),
        (2, DRAW),
        (2, meld("9C TC JC")),
        (2, lay("AS", 2)),
        (2, discard("KD")),
        (0, DRAW),
        (0, lay("AD", 3)),
        (0, discard("QD")),
        (1, DRAW),
        (1, discard("JD")),
    )
    end = round_end(events)
    assert end["reason"] == "stock_out"
    assert end["deadwood"] == [1, 16, 8]
    assert end["winner"] == 0
    # aces: AC in hand + AH in own meld 1 + AS laid off by seat 2 on meld 2 = 3 (AD on meld 3: no)
    # each loser pays base 1 + 3 * per_ace 1 = 4
    assert end["payouts"] == [8, -4, -4]


def test_payout_amounts_are_ruleset_options():
    rules = standard(
        base=5, tongits=7, draw_won_challenged=11, per_ace=2, per_secret_set=13, burned_penalty=4
    )
    # Tongits by seat 1, everyone opened, no aces: 7 from each loser
    _, events = four_turn_tongits(rules)
    assert round_end(events)["payouts"] == [-7, 14, -7]
    # challenged Draw won by caller 0 holding AH (deadwood 1 + 4 = 5 < 9): 11 + 2 per loser
    state = draw_setup(0, ["AH 4S", "9H", "8S"], rules=rules)
    _, events = play(state, (0, CALL), (1, CHALLENGE), (2, FOLD))
    assert round_end(events)["payouts"] == [26, -13, -13]
    # secret-set Tongits by the dealer, seats 1 and 2 burned: 7 + 13 + 4 per loser
    state = position(["7C 7D 7H 7S KH", "5H 9D", "4S 8D"], "KC QC", rules=rules)
    _, events = play(state, (0, meld("7C 7D 7H 7S", hidden=True)), (0, discard("KH")))
    assert round_end(events)["payouts"] == [48, -24, -24]


def test_per_secret_set_paid_for_each_secret_set_the_winner_owns():
    # dealer exposes two secret sets, keeps 5H; seats 1, 2 never open (burned)
    state = position(["7C 7D 7H 7S 8C 8D 8H 8S 5H KH", "9H", "3H"], "KC QC")
    state, events = play(
        state,
        (0, meld("7C 7D 7H 7S", hidden=True)),
        (0, meld("8C 8D 8H 8S", hidden=True)),
        (0, discard("KH")),
        (1, DRAW),
        (1, discard("KC")),
        (2, DRAW),
        (2, discard("QC")),
    )
    end = round_end(events)
    assert end["reason"] == "stock_out" and end["winner"] == 0
    assert end["deadwood"] == [5, 9, 3] and sorted(end["burned"]) == [1, 2]
    # base 1 + 2 secret sets * 3 + burned 1 = 8 from each loser
    assert end["payouts"] == [16, -8, -8]
    # revealed at the round end
    for m in view(state, 1)["melds"]:
        assert m["cards"] is not None and len(m["cards"]) == 4


def test_secret_set_tongits_pays_tongits_plus_secret_set_plus_burned():
    state = position(["7C 7D 7H 7S KH", "5H 9D", "4S 8D"], "KC QC")
    _, events = play(state, (0, meld("7C 7D 7H 7S", hidden=True)), (0, discard("KH")))
    end = round_end(events)
    assert end["reason"] == "tongits" and end["winner"] == 0
    # tongits 3 + per_secret_set 3 + burned 1 = 7 from each loser
    assert end["payouts"] == [14, -7, -7]


def test_aces_in_a_secret_set_count_house():
    rules = house()
    state = position(["AC AD AH AS 9D", "5H 9H", "4S 8D"], "KC QC", rules=rules)
    _, events = play(state, (0, meld("AC AD AH AS", hidden=True)), (0, discard("9D")))
    end = round_end(events)
    per_loser = rules.tongits + 4 * rules.per_ace + rules.per_secret_set
    assert end["burned"] == []
    assert end["payouts"] == [2 * per_loser, -per_loser, -per_loser]


def test_burned_loser_pays_penalty():
    # seat 0 goes out by Tongits on the dealer's first turn; seats 1, 2 never opened
    state = position(["5H 6H 7H 8H", "9S 2C", "KS 8D"], "7C JS TS")
    _, events = play(state, (0, meld("5H 6H 7H")), (0, lay("8H", 1)))
    end = round_end(events)
    assert sorted(end["burned"]) == [1, 2]
    assert end["payouts"] == [8, -4, -4]  # tongits 3 + burned 1
    # burned_penalty is an option
    state = position(
        ["5H 6H 7H 8H", "9S 2C", "KS 8D"], "7C JS TS", rules=standard(burned_penalty=5)
    )
    _, events = play(state, (0, meld("5H 6H 7H")), (0, lay("8H", 1)))
    assert round_end(events)["payouts"] == [16, -8, -8]


def test_round_without_winner_moves_no_chips():
    state = position(["2S 3D KH", "5H", "9H"], "KC QC")
    _, events = play(
        state, (0, discard("KH")), (1, DRAW), (1, discard("KC")), (2, DRAW), (2, discard("QC"))
    )
    end = round_end(events)
    assert end["winner"] is None and end["payouts"] == [0, 0, 0]


def test_payouts_zero_sum():
    results = []
    _, events = four_turn_tongits()
    results.append(round_end(events))
    state = draw_setup(0, ["5H", "5S", "KS"], opened=(0, 1))
    _, events = play(state, (0, CALL), (1, CHALLENGE))
    results.append(round_end(events))
    state = position(["7C 7D 7H 7S 8C 8D 8H 8S 5H KH", "AH 2S", "3H"], "KC QC")
    state, events = play(
        state,
        (0, meld("7C 7D 7H 7S", hidden=True)),
        (0, meld("8C 8D 8H 8S")),
        (0, discard("KH")),
        (1, DRAW),
        (1, discard("KC")),
        (2, DRAW),
    )
    _, events = act(state, 2, discard("QC"))
    results.append(round_end(events))
    for end in results:
        assert sum(end["payouts"]) == 0
        assert end["winner"] is not None
        winner = end["winner"]
        assert end["payouts"][winner] > 0
        assert all(p < 0 for s, p in enumerate(end["payouts"]) if s != winner)


def test_tongits_winner_collects_for_aces_others_laid_off_on_its_set():
    # T1 seat 0 melds AC AD AH, discards KH; T2 seat 1 draws KC, lays AS off on seat 0's set,
    # discards KC; T3 seat 2 draws QC, discards it; T4 seat 0 draws 7H, melds 5H 6H 7H: Tongits
    state = position(["AC AD AH 5H 6H KH", "AS 9D 8S", "4D 3S"], "KC QC 7H")
    _, events = play(
        state,
        (0, meld("AC AD AH")),
        (0, discard("KH")),
        (1, DRAW),
        (1, lay("AS", 1)),
        (1, discard("KC")),
        (2, DRAW),
        (2, discard("QC")),
        (0, DRAW),
        (0, meld("5H 6H 7H")),
    )
    end = round_end(events)
    assert end["reason"] == "tongits" and end["winner"] == 0
    assert sorted(end["burned"]) == [1, 2]
    # tongits 3 + 4 aces in the winner's set + burned 1 = 8 from each loser
    assert end["payouts"] == [16, -8, -8]
