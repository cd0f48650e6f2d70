"""``settled`` as every view of a game says it: whether anything is left to book."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from games.presenters import settled

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("status", "settled_at", "buy_in", "expected"),
    [
        ("active", None, 0, False),
        ("finished", None, 0, False),  # the result, ratings and stats are still to be written
        ("finished", NOW, 0, True),
        ("finished", NOW, 100, True),
        ("aborted", None, 0, True),  # called off with nothing at stake: nothing to book
        ("aborted", None, 100, False),  # the buy-ins are still to be refunded
        ("aborted", NOW, 100, True),
    ],
)
def test_settled_means_nothing_is_left_to_book(status, settled_at, buy_in, expected) -> None:
    assert settled(status, settled_at, SimpleNamespace(buy_in=buy_in)) is expected
