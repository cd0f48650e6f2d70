"""Two tables starting at once for the same player never spend the same chips twice: 20 threads,
each on its own connection, start a quick-play table for one player whose wallet covers one
buy-in. Exactly one start escrows; the other 19 are refused with nothing written."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from chips import services
from chips.errors import InsufficientChips
from chips.models import Entry
from games.models import Event, Game
from tests.chips.support import assert_sound, available, in_play, quick_table

pytestmark = pytest.mark.django_db(transaction=True)
THREADS = 20


def test_twenty_starts_race_for_one_buy_in(user_factory, settings):
    settings.TONGITS_SIGNUP_GRANT = 1000
    user = user_factory()
    services.open_wallet(user.pk)
    services.adjust(user_id=user.pk, amount=-400, reason="leave 600", staff_id=None)
    barrier = threading.Barrier(THREADS)
    outcomes: list[str] = []
    lock = threading.Lock()

    def start() -> None:
        try:
            barrier.wait(10)
            quick_table(user, 500)
            result = "started"
        except InsufficientChips:
            result = "refused"
        except Exception as exc:  # noqa: BLE001 - any other outcome fails the test below
            result = f"error: {exc!r}"
        finally:
            connections.close_all()
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=start) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(outcomes) == ["refused"] * (THREADS - 1) + ["started"], outcomes
    assert available(user) == 100 and in_play(user) == 500
    assert Entry.objects.filter(cause="buy_in").count() == 1
    started = Game.objects.exclude(version=0)
    assert started.count() == 1  # the refused tables appended nothing
    assert Event.objects.filter(type="game_started").count() == 1
    assert_sound()
