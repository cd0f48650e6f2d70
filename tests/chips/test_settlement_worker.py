"""Exactly-once settlement on a real Celery worker process: the settlement task run twice posts
each entry once, and a worker killed with SIGKILL in the middle of a settlement (its payout
entry written, its transaction not committed) leaves nothing behind; the sweeper finds the match
unsettled and the next worker settles it, once."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
import redis

from chips import ledger
from chips.models import Entry
from games import scheduling, store
from games.models import Game
from games.rules import table_stakes
from tests.chips.support import (
    ONE_ROUND,
    assert_sound,
    available,
    escrow_balance,
    in_play,
    play_to_the_end,
    quick_table,
)
from tests.conftest import TEST_BROKER_URL
from tests.tasks.support import wait_for
from tests.worker_process import WorkerProcess, database_url
from tongits_site.celery import app

pytestmark = pytest.mark.django_db(transaction=True)
BOOT_SECONDS = 60


@pytest.fixture
def worker_process(tmp_path) -> Iterator[WorkerProcess]:
    broker = redis.Redis.from_url(TEST_BROKER_URL, socket_connect_timeout=3)
    try:
        broker.ping()
    except redis.RedisError as exc:
        pytest.fail(f"Redis at {TEST_BROKER_URL} is unreachable ({exc}): start it (see .ci/run)")
    broker.flushdb()
    app.conf.broker_url = TEST_BROKER_URL
    process = WorkerProcess(tmp_path / "worker.log", {"TONGITS_VAR_DIR": str(tmp_path)})
    yield process
    process.stop()
    broker.flushdb()


@pytest.fixture
def finished_table(user_factory, settings):
    """A quick-play match for 100 chips a seat, played to the end, not settled yet."""
    settings.TONGITS_SIGNUP_GRANT = 1000
    user = user_factory()
    game = quick_table(user, 100, ONE_ROUND)
    play_to_the_end(game.pk, {0: user})
    row = Game.objects.get(pk=game.pk)
    assert row.status == Game.Status.FINISHED and row.awaiting == Game.Awaiting.SETTLE
    return user, game.pk


def settle_task(game_id) -> None:
    app.send_task(scheduling.SETTLE_MATCH, args=(str(game_id), store.read(game_id).version))


def unacked() -> int:
    return redis.Redis.from_url(TEST_BROKER_URL).hlen("unacked")


def drained(dead: int = 0) -> bool:
    """Every task queued has been run and acknowledged (kombu's Redis queue and unacked hash),
    but the ``dead`` ones a killed worker held (Redis restores them after an hour)."""
    return redis.Redis.from_url(TEST_BROKER_URL).llen("celery") == 0 and unacked() == dead


def settled(game_id) -> bool:
    return Game.objects.filter(pk=game_id, settled_at__isnull=False).exists()


def assert_paid_once(user, game_id) -> None:
    owed = list(store.load(game_id).chips)
    paid = table_stakes(owed, [100, 100, 100])
    assert Entry.objects.filter(key=f"payout:{game_id}").count() == 1
    assert Entry.objects.filter(game_id=game_id).count() == 2  # the buy-ins and the payout
    assert available(user) == 1000 + paid[0] and in_play(user) == 0
    assert escrow_balance(game_id) == 0
    assert_sound()


def test_the_settlement_task_run_twice_pays_once(worker_process, finished_table):
    user, game_id = finished_table
    worker_process.start()
    settle_task(game_id)
    settle_task(game_id)
    assert wait_for(lambda: settled(game_id), BOOT_SECONDS), "never settled"
    assert wait_for(drained, 30), "the second copy did not run"
    assert_paid_once(user, game_id)


def blocked_on_the_escrow(dbname: str) -> bool:
    with psycopg.connect(f"{database_url().rsplit('/', 1)[0]}/postgres", autocommit=True) as conn:
        rows = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND wait_event_type = "
            "'Lock' AND query LIKE '%%chips_balance%%FOR UPDATE%%'",
            [dbname],
        ).fetchone()
    return rows[0] > 0


def test_a_worker_killed_mid_settlement_leaves_nothing_and_the_sweeper_settles_once(
    worker_process, finished_table, settings
):
    user, game_id = finished_table
    escrow = ledger.escrow_of(game_id)
    dbname = settings.DATABASES["default"]["NAME"]
    # Hold the escrow's balance row: the settlement writes its payout entry, then waits here.
    with psycopg.connect(database_url()) as holder:
        holder.execute("SELECT 1 FROM chips_balance WHERE account_id = %s FOR UPDATE", [escrow])
        worker_process.start()
        settle_task(game_id)
        assert wait_for(lambda: blocked_on_the_escrow(dbname), BOOT_SECONDS), "never got there"
        worker_process.kill()  # SIGKILL, mid-transaction
        holder.rollback()
    dead = unacked()
    assert wait_for(lambda: not blocked_on_the_escrow(dbname), 10)
    assert not settled(game_id)
    assert not Entry.objects.filter(key=f"payout:{game_id}").exists()  # rolled back whole
    assert available(user) == 900 and in_play(user) == 100
    assert_sound()

    # The task's message went with the worker; the sweeper finds the match unsettled.
    settings.TONGITS_SWEEP_GRACE_SECONDS = 0.0
    queued = scheduling.sweep()
    assert queued[scheduling.SETTLE_MATCH] == 1
    settle_task(game_id)  # and a stray copy, for good measure
    worker_process.start()
    assert wait_for(lambda: settled(game_id), BOOT_SECONDS), "never settled after the kill"
    assert wait_for(lambda: drained(dead), 30), "a copy did not run"
    assert_paid_once(user, game_id)
