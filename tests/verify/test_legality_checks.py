"""``check_legality``'s per-event-type checks, on one recorded match (no database): each kind of
tampering stops the re-fold at its seq with its own reason."""

from __future__ import annotations

import dataclasses
import random

import pytest

from games.rules import RuleSet
from games.verify.bench import GAME_ID, recorded_match
from games.verify.core import (
    CHECKS,
    EXPECTATIONS,
    SEAT_STEPS,
    SYSTEM_STEPS,
    Failure,
    Record,
    check_legality,
)


@pytest.fixture(scope="module")
def match() -> list[Record]:
    records = recorded_match(random.Random(3), RuleSet.preset("standard"))
    assert check_legality(records, GAME_ID) is None
    return records


def first(records: list[Record], kind: str) -> int:
    return next(i for i, r in enumerate(records) if r.type == kind)


def edited(records: list[Record], i: int, **changes) -> list[Record]:
    out = list(records)
    out[i] = dataclasses.replace(records[i], **changes)
    return out


def test_every_event_type_with_a_check_of_its_own_is_dispatched() -> None:
    assert set(CHECKS) == {"round_started"}
    assert set(EXPECTATIONS) == set(SYSTEM_STEPS) | set(SEAT_STEPS)


def test_a_deal_by_a_seat(match) -> None:
    i = first(match, "round_started")
    failure = check_legality(edited(match, i, actor="user:1"), GAME_ID)
    assert failure == Failure(match[i].seq, "legality", "a deal by user:1, not by the server")


def test_a_time_out_by_a_seat(match) -> None:
    i = first(match, "turn_timed_out")
    failure = check_legality(edited(match, i, actor="user:1"), GAME_ID)
    assert failure == Failure(match[i].seq, "legality", "turn_timed_out by user:1, not the server")


def test_a_move_for_no_seat_and_by_another_seat(match) -> None:
    i = first(match, "discarded")
    data = {**match[i].data, "seat": 5}
    assert check_legality(edited(match, i, data=data), GAME_ID) == Failure(
        match[i].seq, "legality", "seat 5 is not a seat"
    )
    failure = check_legality(edited(match, i, actor="bot:hard"), GAME_ID)
    assert failure is not None and failure.seq == match[i].seq
    assert failure.reason.startswith("actor bot:hard does not play seat ")


def test_an_event_no_command_causes(match) -> None:
    i = first(match, "round_ended")
    failure = check_legality([*match[:i], *match[i + 1 :]], GAME_ID)  # the move before lacks it
    assert failure is not None and failure.check == "legality"
    alone = [match[0], match[i]]  # a round's end with nothing before it
    assert check_legality(alone, GAME_ID) == Failure(
        match[i].seq, "legality", "round_ended without the command that causes it"
    )


def test_a_stream_cut_inside_what_a_command_gives(match) -> None:
    i = first(match, "round_ended")
    failure = check_legality(match[:i], GAME_ID)
    assert failure == Failure(match[i].seq, "legality", "missing round_ended")
