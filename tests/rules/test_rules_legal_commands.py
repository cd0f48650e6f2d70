"""docs/architecture.md "Contracts" legal_commands: every command the seat may send now,
concrete, and nothing else."""

from games.rules import decide, legal_commands
from tests.rules.tongits_helpers import (
    CALL,
    DRAW,
    act,
    discard,
    draw_setup,
    house,
    meld,
    play,
    position,
    standard,
)


def key(command):
    c = dict(command)
    if "cards" in c:
        c["cards"] = tuple(sorted(c["cards"]))
    if c.get("type") == "meld":
        c["hidden"] = bool(c.get("hidden", False))
    return tuple(sorted(c.items()))


def keys(commands):
    ks = [key(c) for c in commands]
    assert len(ks) == len(set(ks)), "duplicate commands"
    return set(ks)


def expect(*commands):
    return {key(c) for c in commands}


def test_seat_that_may_not_act_gets_no_commands():
    state = position(["5H 6H 7H KD", "2C 3D", "9H TD"], "KS QS")
    assert legal_commands(state, 1) == [] and legal_commands(state, 2) == []
    state, _ = act(state, 0, discard("KD"))
    assert legal_commands(state, 0) == [] and legal_commands(state, 2) == []


def test_dealer_first_turn_commands_melds_with_hidden_twin_and_discards():
    hand = "5H 6H 7H 8H 7C 7D 7S"
    state = position([hand, "2C 3D", "9H TD"], "KS QS")
    sets3 = [["7C", "7D", "7S"], ["7C", "7D", "7H"], ["7C", "7S", "7H"], ["7D", "7S", "7H"]]
    wanted = expect(
        meld("5H 6H 7H"),
        meld("6H 7H 8H"),
        meld("5H 6H 7H 8H"),
        *[meld(s) for s in sets3],
        meld("7C 7D 7H 7S"),
        meld("7C 7D 7H 7S", hidden=True),
        *[discard(c) for c in hand.split()],
    )
    assert keys(legal_commands(state, 0)) == wanted


def test_no_hidden_twin_when_secret_sets_off():
    hand = "7C 7D 7H 7S KD"
    state = position([hand, "2C 3D", "9H TD"], "KS QS", rules=standard(secret_sets=False))
    got = keys(legal_commands(state, 0))
    assert key(meld("7C 7D 7H 7S", hidden=True)) not in got
    assert key(meld("7C 7D 7H 7S")) in got


def test_ace_high_runs_listed_only_where_on():
    hand = "JS QS KS AS 4D"
    for rules, runs in (
        (standard(), {"JS KS QS"}),
        (house(), {"JS KS QS", "AS KS QS", "AS JS KS QS"}),
    ):
        state = position([hand, "2C 3D", "9H TD"], "8C 9C", rules=rules)
        got = {
            " ".join(sorted(c["cards"])) for c in legal_commands(state, 0) if c["type"] == "meld"
        }
        assert got == runs


def test_turn_start_commands_draw_and_each_usable_take():
    state = position(["9D KH 7H", "7S 7D 8H 9H 2C", "6S 5C"], "QD JD TD")
    state, _ = act(state, 0, discard("7H"))
    wanted = expect(
        DRAW,
        {"type": "take_discard", "cards": ["7S", "7D"]},
        {"type": "take_discard", "cards": ["8H", "9H"]},
    )
    assert keys(legal_commands(state, 1)) == wanted


def test_turn_start_commands_include_call_draw_when_opened_and_unblocked():
    state = draw_setup(0, ["9H", "2H", "3S"])
    assert keys(legal_commands(state, 0)) == expect(DRAW, CALL)
    state = draw_setup(0, ["9H", "2H", "3S"], rules=house())
    assert keys(legal_commands(state, 0)) == expect(DRAW)


def test_house_turn_start_lists_take_onto_own_meld():
    rules = house()
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
        (2, discard("7H")),
    )
    assert keys(legal_commands(state, 0)) == expect(DRAW, {"type": "take_discard", "meld_id": 1})


def test_play_commands_lay_off_per_card_and_meld():
    # table: meld 1 = 5H 6H 7H (run), meld 2 = 9C 9D 9S (set, missing 9H)
    state = position(["5H 6H 7H 9C 9D 9S KH QS", "4H 8H 9H 2C", "6S 5C"], "3C QD JD")
    state, _ = play(
        state, (0, meld("5H 6H 7H")), (0, meld("9C 9D 9S")), (0, discard("KH")), (1, DRAW)
    )
    wanted = expect(
        {"type": "lay_off", "card": "4H", "meld_id": 1},
        {"type": "lay_off", "card": "8H", "meld_id": 1},
        {"type": "lay_off", "card": "9H", "meld_id": 2},
        *[discard(c) for c in ["4H", "8H", "9H", "2C", "3C"]],
    )
    assert keys(legal_commands(state, 1)) == wanted


def test_every_listed_command_is_accepted():
    state = position(["5H 6H 7H 9C 9D 9S KH QS", "4H 8H 9H 2C 3C", "6S 5C"], "4C QD JD")
    state, _ = play(
        state, (0, meld("5H 6H 7H")), (0, meld("9C 9D 9S")), (0, discard("KH")), (1, DRAW)
    )
    commands = legal_commands(state, 1)
    assert commands
    for command in commands:
        assert decide(state, 1, command)
