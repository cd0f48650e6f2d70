"""docs/architecture.md "Contracts" events: JSON form, fold of dicts, purity of decide and
evolve."""

import json

from games.rules import decide, event_from_dict, event_to_dict, evolve, fold
from tests.rules.tongits_helpers import (
    CALL,
    CHALLENGE,
    DRAW,
    FOLD,
    discard,
    draw_setup,
    game_started,
    house,
    illegal,
    lay,
    meld,
    play,
    position,
    round_started,
    take,
    take_on,
    views_json,
)

FIELDS = {
    "game_started": {"rules", "seats", "first_dealer"},
    "round_started": {"round", "dealer", "hands", "stock"},
    "drew": {"seat", "card"},
    "took_discard": {"seat", "card", "meld_id", "kind", "cards", "lay_off"},
    "melded": {"seat", "meld_id", "kind", "cards", "hidden"},
    "laid_off": {"seat", "card", "meld_id"},
    "discarded": {"seat", "card"},
    "draw_called": {"seat"},
    "challenged": {"seat"},
    "folded": {"seat"},
    "turn_timed_out": {"seat"},
    "round_ended": {"round", "reason", "winner", "deadwood", "burned", "payouts"},
    "match_ended": {"winner", "round_wins"},
}


def scripted_game():
    """A short scripted round touching most event types; returns (initial dicts, move list)."""
    start = [
        game_started(),
        round_started(
            ["2C 3C 4C 9H 9D 6S 2D KH", "5C 5D 6D 7D 8S", "9S TS JS 7S"], "KC QC JC TC 8C 7C"
        ),
    ]
    moves = [
        (0, meld("2C 3C 4C")),
        (0, discard("KH")),
        (1, DRAW),
        (1, meld("5D 6D 7D")),
        (1, lay("5C", 1)),
        (1, discard("KC")),
        (2, DRAW),
        (2, meld("9S TS JS")),
        (2, discard("QC")),
        (0, DRAW),
        (0, discard("JC")),
        (1, CALL),
        (2, CHALLENGE),
        (0, FOLD),
    ]
    return start, moves


def test_every_event_dict_is_json_with_its_fields_and_round_trips():
    start, moves = scripted_game()
    state = fold(start)
    _, events = play(state, *moves)
    seen = set()
    for d in start + events:
        assert d["type"] in FIELDS, d["type"]
        assert FIELDS[d["type"]] <= set(d), (d["type"], FIELDS[d["type"]] - set(d))
        assert json.loads(json.dumps(d)) == d
        again = event_to_dict(event_from_dict(d))
        for key, value in d.items():
            assert again[key] == value
        seen.add(d["type"])
    assert {
        "melded",
        "laid_off",
        "drew",
        "discarded",
        "draw_called",
        "challenged",
        "folded",
        "round_ended",
    } <= seen


def test_fold_of_stored_dicts_equals_step_by_step_state():
    start, moves = scripted_game()
    state = fold(start)
    log = list(start)
    for seat, command in moves:
        events = decide(state, seat, command)
        for e in events:
            state = evolve(state, e)
            log.append(event_to_dict(e))
        replayed = fold(log)
        assert views_json(replayed) == views_json(state)
    # a JSON round trip of the whole log folds to the same state
    assert views_json(fold(json.loads(json.dumps(log)))) == views_json(state)


def test_took_discard_event_round_trips_both_shapes():
    state = position(["7H KC", "7S 7D 2C", "9S 8D"], "KS JS TS")
    _, events = play(state, (0, discard("7H")), (1, take("7S 7D")))
    d = events[-1]
    assert d["type"] == "took_discard" and d["lay_off"] is False
    assert event_to_dict(event_from_dict(d)) == d
    state = position(["4H 5H 6H KC 2D", "9S 8D 3C", "7H QS 5D"], "KD QC JD", rules=house())
    _, events = play(
        state,
        (0, meld("4H 5H 6H")),
        (0, discard("KC")),
        (1, DRAW),
        (1, discard("KD")),
        (2, DRAW),
        (2, discard("7H")),
        (0, take_on(1)),
    )
    d = events[-1]
    assert d["type"] == "took_discard" and d["lay_off"] is True
    assert event_to_dict(event_from_dict(d)) == d


def test_decide_never_changes_the_state():
    start, moves = scripted_game()
    state = fold(start)
    for seat, command in moves:
        before = views_json(state)
        decide(state, seat, command)
        decide(state, seat, command)  # deciding twice gives the same answer from the same state
        assert views_json(state) == before
        state, _ = play(state, (seat, command))
    illegal(state, 0, DRAW)


def test_evolve_is_pure():
    state = draw_setup(0, ["9H", "2H", "3S"])
    before = views_json(state)
    events = decide(state, 0, DRAW)
    a = evolve(state, events[0])
    b = evolve(state, events[0])
    assert views_json(a) == views_json(b)
    assert views_json(state) == before
    assert views_json(a) != before


def test_decide_is_deterministic():
    state = draw_setup(0, ["9H", "2H", "3S"])
    a = [event_to_dict(e) for e in decide(state, 0, CALL)]
    b = [event_to_dict(e) for e in decide(state, 0, CALL)]
    assert a == b
