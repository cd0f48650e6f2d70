"""``quick_command_body`` agrees with ``CommandInputSerializer`` wherever it answers.

It may leave a body to the serializer (None), but a body it checks must be one the serializer
accepts, with the same validated data; and the bodies clients send (every legal command of real
games, as the schema's examples write them) must all be checked quickly.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from games.api.commands import MAX_VERSION, quick_command_body
from games.api.serializers import CommandInputSerializer
from games.rules import RuleSet, legal_commands
from games.rules.selfplay import play_match

CARDS = ["AS", "TD", "10D", "7h", "kc", "10c", "QQ", "1S", "AS ", " AS", "AS\n", "", "A", "ASS"]

GOOD_CARDS = ["AS", "TD", "10D", "7h", "kc", "10c", "2H"]
values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=5),
    st.sampled_from([0, 1, 2, MAX_VERSION, MAX_VERSION + 1, 2**70]),
    st.floats(allow_nan=False, min_value=-2, max_value=4),
    st.sampled_from(CARDS),
    st.sampled_from(["a b", " ab", "ab ", "ab\n", "x" * 65, "\u00e9t\u00e9"]),
    st.text(max_size=4),
    st.lists(st.sampled_from(CARDS), max_size=4),
    st.dictionaries(st.sampled_from(["a", "type"]), st.integers(), max_size=2),
)
cards = st.lists(st.sampled_from(GOOD_CARDS), min_size=1, max_size=4)
meld_ids = st.integers(min_value=1, max_value=6)
good_commands = st.one_of(
    st.sampled_from([{"type": t} for t in ("draw", "call_draw", "challenge", "fold")]),
    st.fixed_dictionaries({"type": st.just("discard"), "card": st.sampled_from(GOOD_CARDS)}),
    st.fixed_dictionaries(
        {"type": st.just("lay_off"), "card": st.sampled_from(GOOD_CARDS), "meld_id": meld_ids}
    ),
    st.fixed_dictionaries(
        {"type": st.just("meld"), "cards": cards}, optional={"hidden": st.booleans()}
    ),
    st.fixed_dictionaries(
        {"type": st.just("take_discard")},
        optional={"cards": st.one_of(st.none(), cards), "meld_id": st.one_of(st.none(), meld_ids)},
    ),
)
good_bodies = st.fixed_dictionaries(
    {"command": good_commands, "expected_version": st.integers(0, 40)},
    optional={
        "seat": st.one_of(st.none(), st.integers(0, 2)),
        "client_seed": st.sampled_from(["abc", "a-b_C9", "x" * 64]),
    },
)


@st.composite
def bodies(draw: Any) -> Any:
    """A body clients send, or one with a single thing wrong (or odd) in it."""
    body = copy.deepcopy(draw(good_bodies))  # sampled dicts are shared between draws
    where = draw(st.sampled_from(["none", "body", "command"]))
    target = body if where == "body" else body["command"]
    if where != "none":
        how = draw(st.sampled_from(["replace", "drop", "add"]))
        keys = sorted(target)
        if how == "replace":
            target[draw(st.sampled_from(keys))] = draw(values)
        elif how == "drop":
            del target[draw(st.sampled_from(keys))]
        else:
            extra = ["card", "cards", "meld_id", "hidden", "seat", "client_seed", "junk", "type"]
            target[draw(st.sampled_from(extra))] = draw(st.one_of(values, cards, meld_ids))
    return body


def _serializer(data: Any) -> dict[str, Any] | None:
    checked = CommandInputSerializer(data=data)
    return dict(checked.validated_data) if checked.is_valid() else None


@settings(max_examples=3000, deadline=None)
@given(st.one_of(bodies(), values))
def test_a_body_checked_quickly_is_the_serializers_own(data):
    quick = quick_command_body(data)
    if quick is not None:
        assert quick == _serializer(data)


def test_the_bodies_clients_send_are_checked_quickly():
    rng = random.Random(7)
    record = play_match(["greedy"] * 3, rng, RuleSet.preset("standard"))
    seen: set[str] = set()
    state = None
    from games.rules import evolve

    for event in record.events:
        state = evolve(state, event)
        for seat in range(3):
            for command in legal_commands(state, seat):
                body = {"command": command, "expected_version": state.version}
                assert quick_command_body(body) == _serializer(body) is not None, body
                seen.add(command["type"])
    assert {"draw", "discard", "meld"} <= seen
    seeded = {"command": {"type": "draw"}, "expected_version": 3, "seat": 1, "client_seed": "x-1"}
    assert quick_command_body(seeded) == _serializer(seeded) is not None


EDGES: list[Any] = (
    [
        {"command": {"type": "draw"}, "expected_version": 1, "client_seed": seed}
        for seed in ["a b", " ab", "ab ", "ab\n", "x" * 65, "", 7, None]
    ]
    + [
        {"command": {"type": "discard", "card": card}, "expected_version": 1}
        for card in ["AS ", " AS", "AS\n", "as", "10d", "1D", "", None, ["AS"]]
    ]
    + [
        {"command": {"type": "draw"}, "expected_version": version}
        for version in [True, -1, 1.0, "1", MAX_VERSION, MAX_VERSION + 1, None]
    ]
    + [
        {"command": {"type": "draw"}, "expected_version": 1, "seat": seat}
        for seat in [True, -1, 3, 1.0, "1", None]
    ]
    + [
        {
            "command": {"type": "meld", "cards": ["AS", "2S", "3S"], "hidden": hidden},
            "expected_version": 1,
        }
        for hidden in [0, 1, "true", None, True, False]
    ]
    + [
        {"command": {"type": "take_discard", **extra}, "expected_version": 1}
        for extra in [{}, {"cards": None}, {"cards": []}, {"meld_id": 0}, {"meld_id": None}]
    ]
    + [
        {"command": {"type": "lay_off", "card": "AS", "meld_id": meld_id}, "expected_version": 1}
        for meld_id in [None, 0, 1, True, "1"]
    ]
    + [{"command": {"type": kind}, "expected_version": 1} for kind in ["DRAW", ["draw"], None, 1]]
)


def test_edge_bodies_are_judged_as_the_serializer_judges_them():
    for body in EDGES:
        quick = quick_command_body(body)
        assert quick is None or quick == _serializer(body), body
