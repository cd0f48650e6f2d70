"""Tournaments on a real Celery worker, the scheduler and the tournaments' loop: a sit-and-go of
nine people played to the end over HTTP pays its prizes (the chips sum as before, the export
verifies offline), and the prize payment run twice, and killed with SIGKILL between two prizes,
pays each prize exactly once."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest
import redis

from chips.models import Entry
from tests.chips.support import assert_sound
from tests.conftest import TEST_BROKER_URL
from tests.tasks.conftest import Worker
from tests.tasks.support import game_url, greedy, wait_for
from tests.tournaments.support import TOURNAMENTS, create, play_out, url, wallet
from tests.worker_process import WorkerProcess
from tongits_site.celery import app
from tournaments import live, loop, services, tasks
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db(transaction=True)
GRANT = 1000
EVENT_SECONDS = 120.0


@pytest.fixture
def tournament_loop(worker) -> Iterator[None]:
    """The tournaments' loop beside the worker's scheduler (``run_scheduler``'s companion)."""
    stop = threading.Event()
    thread = threading.Thread(
        target=loop.run_tournaments, args=(stop,), kwargs={"poll": 0.05}, name="tournaments"
    )
    thread.start()
    yield
    stop.set()
    thread.join(10)
    assert not thread.is_alive()


def test_a_sit_and_go_of_nine_played_over_http_pays_its_prizes(
    tournament_loop, auth_client_factory, user_factory, settings, tmp_path
):
    settings.TONGITS_SIGNUP_GRANT = GRANT
    staff = auth_client_factory(user_factory(is_staff=True))
    body = {
        "name": "Sit and go",
        "rules": {"preset": "standard", "turn_seconds": 30},
        "wins_to_match": 1,
        "entrants": 9,
        "buy_in": 100,
        "fee": 10,
        "prizes": [50, 30, 20],
    }
    made = staff.post(TOURNAMENTS, body, "json")
    assert made.status_code == 201, made.content
    tid = made.json()["id"]
    people = {}
    for _ in range(9):
        client = auth_client_factory()
        people[client.user.pk] = client
    before = sum(wallet(c.user) for c in people.values())
    for client in people.values():
        assert client.post(url(tid, "/registration")).status_code == 201

    deadline = time.monotonic() + EVENT_SECONDS
    detail = staff.get(url(tid)).json()
    while detail["status"] != "finished":
        assert time.monotonic() < deadline, detail
        moved = False
        for stage in detail["stages_list"]:
            for table in stage["tables"]:
                if table["game_status"] != "active":
                    continue
                for entrant in table["entrants"]:
                    user_id = detail["entrants_list"][entrant]["user_id"]
                    client = people[user_id]
                    payload = client.get(game_url(table["game_id"])).json()
                    if payload["legal_commands"]:
                        answer = client.post(
                            game_url(table["game_id"], "/commands"),
                            {"command": greedy(payload), "expected_version": payload["version"]},
                            "json",
                        )
                        assert answer.status_code in (200, 409), answer.content
                        moved = True
        if not moved:
            time.sleep(0.05)
        detail = staff.get(url(tid)).json()

    assert [len(s["tables"]) for s in detail["stages_list"]] == [3, 1]
    assert [(p["place"], p["amount"]) for p in detail["prize_entries"]] == [
        (1, 450),
        (2, 270),
        (3, 180),
    ]
    after = sum(wallet(c.user) for c in people.values())
    assert after == before - 9 * 10  # the pool went back out whole; the fees to the house
    assert detail["escrow"] == 0
    assert Entry.objects.filter(cause="tournament_prize").count() == 3
    assert_sound()

    # The winner's /me/stream heard of each of their tables, and of the end with the prizes.
    winner = detail["prize_entries"][0]["user_id"]
    frames, _ = live.stream_more(winner, 0)
    kinds = [json.loads(f.split(b"data: ", 1)[1])["kind"] for f in frames]
    assert all(f.startswith(b"event: tournament\n") for f in frames)
    assert kinds[0] == "registered" and kinds[-1] == "finished"
    assert kinds.count("table_ready") == 2 and "eliminated" not in kinds

    export = staff.get(url(tid, "/export"))
    assert export.status_code == 200
    path = tmp_path / "tournament.json"
    path.write_text(json.dumps(export.json()))
    checked = subprocess.run(
        [sys.executable, "-m", "games.verify", str(path)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith(f"OK: tournament {tid} is sound (4 tables")


@pytest.fixture
def worker_process(tmp_path) -> Iterator[WorkerProcess]:
    broker = redis.Redis.from_url(TEST_BROKER_URL, socket_connect_timeout=3)
    broker.flushdb()
    app.conf.broker_url = TEST_BROKER_URL
    process = WorkerProcess(
        tmp_path / "worker.log",
        {"TONGITS_VAR_DIR": str(tmp_path), "TONGITS_TOURNAMENT_PRIZE_PAUSE_SECONDS": "30"},
    )
    yield process
    process.stop()
    broker.flushdb()


def test_the_prizes_are_paid_once_when_killed_mid_payment_and_run_twice(
    transactional_db, user_factory, settings, worker_process, broker, task_runs
):
    settings.TONGITS_SIGNUP_GRANT = GRANT
    staff = user_factory(is_staff=True)
    made = create(staff, entrants=3, buy_in=100, fee=0, prizes=[50, 30, 20])
    people = [user_factory() for _ in range(3)]
    for person in people:
        services.register(user=person, tournament_id=made.pk)
    assert play_out(made, stop_before_prizes=True) == "paying"

    # A worker of its own pays the first prize, then pauses: it is killed there.
    worker_process.start()
    app.send_task(loop.ADVANCE, args=(str(made.pk),))
    prizes = Entry.objects.filter(cause="tournament_prize")
    assert wait_for(lambda: prizes.count() == 1, 60), "the first prize was never paid"
    worker_process.kill()
    assert prizes.count() == 1
    made.refresh_from_db()
    assert made.status == Tournament.Status.RUNNING

    # The task again, twice (the sweeper's copy and a late one): each prize once.
    in_thread = Worker()
    in_thread.start()
    try:
        for _ in range(2):
            result = tasks.advance.delay(str(made.pk)).id
            assert wait_for(lambda r=result: any(t.id == r for t in task_runs), 30)
    finally:
        in_thread.stop()
    made.refresh_from_db()
    assert made.status == Tournament.Status.FINISHED
    keys = sorted(prizes.values_list("key", flat=True))
    assert keys == [f"tournament_prize:{made.pk}:{place}" for place in (1, 2, 3)]
    paid = {p["user_id"]: p["amount"] for p in made.prize_entries}
    assert sorted(paid.values()) == [60, 90, 150]
    for person in people:
        assert wallet(person) == GRANT - 100 + paid[person.pk]
    assert_sound()
