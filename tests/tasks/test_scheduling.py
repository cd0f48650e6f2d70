"""Settlement (once, whatever the number of runs), what each state makes due, the scheduler's
claims (never twice, again after a lost task's lease), the sweeper's thresholds, and a broker
failure that must not fail a player's move."""

from __future__ import annotations

import base64
import json
import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone
from kombu.exceptions import OperationalError

from accounts import tasks as account_tasks
from accounts.models import MatchRecord, PlayerMatch
from accounts.tasks import settle_match_now
from games import scheduling, seal
from games import tasks as game_tasks
from games.models import Game, GameSeal
from tests.locks import backend_pid, wait_until_blocked_by
from tests.tasks.support import drive, game_url, greedy, in_threads, quick_table, view, wait_for
from tongits_site.celery import app

pytestmark = pytest.mark.django_db(transaction=True)


def test_settling_twice_changes_nothing(stopped_worker, broker, auth_client_factory, run_on_worker):
    human = auth_client_factory()
    rules = {"preset": "standard", "turn_seconds": 0, "wins_to_match": 1}
    game_id = quick_table(human, rules, human_seat=2)
    assert settle_match_now(game_id) == "nothing_to_do"  # not over: nothing to settle
    assert not MatchRecord.objects.filter(game_id=game_id).exists()
    game = drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.SETTLE)
    assert game.status == Game.Status.FINISHED and game.settled_at is None
    broker.purge()
    stopped_worker.start()

    assert run_on_worker(account_tasks.settle_match, game_id, game.version) == "settled"
    first = list(PlayerMatch.objects.filter(match_id=game_id).order_by("seat").values())
    game.refresh_from_db()
    settled_at, updated_at = game.settled_at, game.updated_at
    assert settled_at is not None and game.awaiting == Game.Awaiting.NONE and game.due_at is None
    assert first[-1]["player_id"] == human.user.pk and first[-1]["seat"] == 2
    assert first[-1]["placement"] == MatchRecord.objects.get(game_id=game_id).placements[2]

    run_on_worker(account_tasks.settle_match, game_id, game.version)  # a redelivered task
    settle_match_now(game_id)  # and the service itself
    assert list(PlayerMatch.objects.filter(match_id=game_id).order_by("seat").values()) == first
    game.refresh_from_db()
    assert (game.settled_at, game.updated_at) == (settled_at, updated_at)
    assert scheduling.sweep(now=timezone.now() + timedelta(hours=1))[scheduling.SETTLE_MATCH] == 0


def test_settling_seals_a_lost_seal_without_deadlocking_a_sealing_write(
    stopped_worker, broker, auth_client_factory
):
    """A settlement that finds no seal seals the match after it commits: sealing under the game
    row's lock deadlocked with the ending write's own seal, whose foreign-key check waits for
    that lock while the settlement's insert of the same seal waits for the write."""
    human = auth_client_factory()
    rules = {"preset": "standard", "turn_seconds": 0, "wins_to_match": 1}
    game_id = quick_table(human, rules, human_seat=2)
    game = drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.SETTLE)
    GameSeal.objects.filter(game_id=game_id).delete()
    inserted, go = threading.Event(), threading.Event()
    writer_pid: list[int] = []
    errors: list[BaseException] = []
    results: list[str] = []

    def sealing_write() -> None:
        try:
            with transaction.atomic():
                writer_pid.append(backend_pid())
                seal.seal_match(game.pk, game.version, bytes(game.last_hash).hex())
                inserted.set()
                go.wait(10)
        except BaseException as exc:  # noqa: BLE001 (reported by the test)
            errors.append(exc)
        finally:
            inserted.set()
            connection.close()

    def settlement() -> None:
        try:
            results.append(settle_match_now(game_id))
        except BaseException as exc:  # noqa: BLE001 (reported by the test)
            errors.append(exc)
        finally:
            connection.close()

    writer = threading.Thread(target=sealing_write)
    writer.start()
    assert inserted.wait(10) and writer_pid
    settler = threading.Thread(target=settlement)
    settler.start()
    try:  # the settlement waits for the seal the write holds uncommitted
        wait_until_blocked_by(writer_pid[0])
    finally:
        go.set()
    writer.join(15)
    settler.join(15)
    assert errors == [] and results == ["settled"]
    assert GameSeal.objects.filter(game_id=game_id).count() == 1


def test_what_each_state_makes_due(stopped_worker, broker, auth_client_factory, settings):
    settings.TONGITS_BOT_DELAY_SECONDS = 0.5
    settings.TONGITS_NEXT_ROUND_DELAY_SECONDS = 2.0
    human = auth_client_factory()
    game_id = quick_table(human, {"preset": "standard", "turn_seconds": 20}, human_seat=0)
    game = drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.BOT)
    assert game.due_at == game.updated_at + timedelta(seconds=0.5)  # the bot's move, not later
    later = game.due_at + timedelta(seconds=1)
    assert scheduling.claim_due(now=game.due_at - timedelta(seconds=0.1)) == []
    assert scheduling.claim_due(now=later) == [(scheduling.PLAY_BOT_TURN, game.pk, game.version)]
    assert scheduling.claim_due(now=later) == []  # claimed: leased, not queued twice
    game.refresh_from_db()
    assert game.due_at == later + timedelta(seconds=settings.TONGITS_SCHEDULER_LEASE_SECONDS)

    game = drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.USER)
    assert game.due_at == game.turn_deadline  # only the deadline: a person moves it on
    assert scheduling.claim_due(now=game.turn_deadline) == [
        (scheduling.EXPIRE_TURN, game.pk, game.version)
    ]
    game = drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.DEAL)
    assert game.turn_deadline is None
    assert game.due_at == game.updated_at + timedelta(seconds=2)
    assert scheduling.claim_due(now=game.due_at) == [
        (scheduling.DEAL_NEXT_ROUND, game.pk, game.version)
    ]


def test_two_schedulers_never_claim_the_same_table(
    stopped_worker, broker, auth_client_factory, settings
):
    settings.TONGITS_BOT_DELAY_SECONDS = 0.0
    human = auth_client_factory()
    games = []
    for _ in range(12):
        game_id = quick_table(human, {"preset": "standard", "turn_seconds": 0}, human_seat=0)
        games.append(drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.BOT))
    now = timezone.now() + timedelta(seconds=1)
    claims = in_threads(*[lambda: scheduling.claim_due(now=now, limit=5) for _ in range(4)])
    assert not [c for c in claims if isinstance(c, Exception)], claims
    claimed = [game_id for batch in claims for _, game_id, _ in batch]
    assert len(claimed) == len(set(claimed)), "a table was claimed twice"
    assert set(claimed) == {g.pk for g in games}


def test_a_lost_task_is_queued_again_when_its_lease_runs_out(
    stopped_worker, broker, auth_client_factory, settings
):
    settings.TONGITS_BOT_DELAY_SECONDS = 0.0
    human = auth_client_factory()
    game_id = quick_table(human, {"preset": "standard", "turn_seconds": 0}, human_seat=0)
    game = drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.BOT)
    now = timezone.now()
    assert scheduling.run_due(now=now) == 1
    broker.purge()  # the task is lost
    assert scheduling.run_due(now=now) == 0
    lease = timedelta(seconds=settings.TONGITS_SCHEDULER_LEASE_SECONDS)
    assert scheduling.claim_due(now=now + lease) == [
        (scheduling.PLAY_BOT_TURN, game.pk, game.version)
    ]


def test_a_starved_bot_queue_gets_one_task_per_waiting_move(
    stopped_worker, broker, auth_client_factory, settings, task_runs
):
    """No worker serves the queue: the scheduler claims the table again each time its lease runs
    out and the sweeper finds it late every run, yet the queue holds the move's task once; the
    task clears its mark as it starts, so the next copy is sent only after that."""
    settings.TONGITS_BOT_DELAY_SECONDS = 0.0
    human = auth_client_factory()
    game_id = quick_table(human, {"preset": "standard", "turn_seconds": 0}, human_seat=0)
    game = drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.BOT)
    now = timezone.now()
    assert scheduling.run_due(now=now) == 1
    lease = timedelta(seconds=settings.TONGITS_SCHEDULER_LEASE_SECONDS)
    for k in range(1, 6):  # 75 s of a queue that does not move
        later = now + k * lease
        assert scheduling.run_due(now=later) == 0  # the lease ran out: claimed, not sent
        assert Game.objects.get(pk=game_id).due_at == later + lease
        assert scheduling.sweep(now=later)[scheduling.PLAY_BOT_TURN] == 0
    assert broker.queued() == 1

    stopped_worker.start()
    assert wait_for(lambda: Game.objects.get(pk=game_id).version > game.version, 10)

    def runs_at_that_version() -> list[tuple]:
        return [
            r.args
            for r in task_runs
            if r.name == scheduling.PLAY_BOT_TURNS and [str(game_id), game.version] in r.args[0]
        ]

    # A run is recorded once its task returns, just after its move commits.
    assert wait_for(runs_at_that_version, 10)
    assert runs_at_that_version() == [([[str(game_id), game.version]],)]
    # Its task ran: the move is no longer marked as waiting.
    assert scheduling.enqueue(scheduling.PLAY_BOT_TURN, game_id, game.version)


def test_a_bot_move_lost_with_the_broker_kept_is_queued_again_after_its_mark(
    stopped_worker, broker, auth_client_factory, settings
):
    """The task left the queue without running and the broker kept its data (so the mark
    stayed): the move is queued again once ``TONGITS_BOT_QUEUED_SECONDS`` have passed."""
    settings.TONGITS_BOT_DELAY_SECONDS = 0.0
    settings.TONGITS_BOT_QUEUED_SECONDS = 1.0
    human = auth_client_factory()
    game_id = quick_table(human, {"preset": "standard", "turn_seconds": 0}, human_seat=0)
    drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.BOT)
    now = timezone.now()
    assert scheduling.run_due(now=now) == 1
    broker.client.delete(app.conf.task_default_queue)  # the message alone is lost
    lease = timedelta(seconds=settings.TONGITS_SCHEDULER_LEASE_SECONDS)
    assert scheduling.run_due(now=now + lease) == 0  # still marked as waiting
    later = iter(range(2, 1000))  # every try a lease later, so each one claims the table
    assert wait_for(lambda: scheduling.run_due(now=now + next(later) * lease) == 1, 3)
    assert broker.queued() == 1


def test_the_sweeper_waits_for_the_delay_and_its_grace(
    stopped_worker, broker, auth_client_factory, settings
):
    settings.TONGITS_SWEEP_GRACE_SECONDS = 5.0
    settings.TONGITS_BOT_DELAY_SECONDS = 1.0
    human = auth_client_factory()
    game_id = quick_table(human, {"preset": "standard", "turn_seconds": 20}, human_seat=0)
    drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.BOT)
    now = timezone.now()
    nothing = dict.fromkeys(
        [
            scheduling.EXPIRE_TURN,
            scheduling.PLAY_BOT_TURN,
            scheduling.DEAL_NEXT_ROUND,
            scheduling.SETTLE_MATCH,
            scheduling.ABORT_IDLE,
        ],
        0,
    )
    assert scheduling.sweep(now=now) == nothing  # just queued: not late
    late_bot = scheduling.sweep(now=now + timedelta(seconds=7))
    assert late_bot == {**nothing, scheduling.PLAY_BOT_TURN: 1}
    overdue = scheduling.sweep(now=now + timedelta(seconds=26))
    # the bot's move is still waiting in the queue: not sent again
    assert overdue == {**nothing, scheduling.EXPIRE_TURN: 1}


def test_a_broker_failure_does_not_fail_the_move(
    worker, auth_client_factory, monkeypatch, settings
):
    """A move publishes nothing; the scheduler's publish fails while the broker is down and the
    table is queued again once its lease runs out."""
    settings.TONGITS_SCHEDULER_LEASE_SECONDS = 0.5
    human = auth_client_factory()
    game_id = quick_table(human, {"preset": "standard", "turn_seconds": 0}, human_seat=0)
    payload = wait_for(lambda: (p := view(human, game_id))["legal_commands"] and p, 5)

    def broker_down(*args, **kwargs):
        raise OperationalError("connection refused")

    with monkeypatch.context() as patch:
        patch.setattr(scheduling.current_app, "send_task", broker_down)
        for _ in range(20):  # until a move hands the turn to a bot, with no broker to queue it on
            response = human.post(
                game_url(game_id, "/commands"),
                {"command": greedy(payload), "expected_version": payload["version"]},
                "json",
            )
            assert response.status_code == 200, response.content
            payload = response.json()["game"]
            if not payload["legal_commands"]:
                break
        stalled = Game.objects.get(pk=game_id)
        assert stalled.awaiting == Game.Awaiting.BOT
        wait_for(lambda: False, 0.3)  # the scheduler tries, and cannot publish
        assert Game.objects.get(pk=game_id).version == stalled.version
    assert wait_for(lambda: Game.objects.get(pk=game_id).version > stalled.version, 5)


def test_bot_moves_go_to_the_bot_queue_and_the_rest_to_the_default_one(broker, settings):
    """With ``TONGITS_BOT_QUEUE`` set (as `make run` sets it), a bot's move is queued where only
    the bots' worker (at its lower CPU priority) takes it; every other game task stays on the
    default queue, which the main worker serves. Unset, bot moves share the default queue."""
    settings.TONGITS_BOT_QUEUE = "bots"
    game_id = "00000000-0000-0000-0000-000000000054"
    # The queues' bindings, as the workers declare them when they start (the purge dropped them).
    with app.connection_for_write() as conn:
        for name in (app.conf.task_default_queue, "bots"):
            app.amqp.queues[name].bind(conn.default_channel).declare()
    assert scheduling.enqueue(scheduling.PLAY_BOT_TURN, game_id, 7)
    assert scheduling.enqueue(scheduling.DEAL_NEXT_ROUND, game_id, 7)
    assert scheduling.enqueue(scheduling.EXPIRE_TURN, game_id, 7)
    assert broker.client.llen("bots") == 1 and broker.queued() == 2
    message = json.loads(broker.client.lindex("bots", 0))
    assert message["headers"]["task"] == scheduling.PLAY_BOT_TURN
    assert message["headers"]["argsrepr"] == repr((game_id, 7))

    broker.purge()
    settings.TONGITS_BOT_QUEUE = ""
    assert scheduling.enqueue(scheduling.PLAY_BOT_TURN, game_id, 8)
    assert broker.client.llen("bots") == 0 and broker.queued() == 1


def test_a_bot_move_is_queued_once_until_its_task_starts_or_a_worker_does(broker, settings):
    """The mark beside the queue: a second send of the same move is refused until its task
    starts (``unmark``) or a worker starts (``clear_marks``, the dead one's tasks in hand)."""
    settings.TONGITS_BOT_QUEUE = ""
    game_id = "00000000-0000-0000-0000-000000000055"
    assert scheduling.enqueue(scheduling.PLAY_BOT_TURN, game_id, 3)
    assert not scheduling.enqueue(scheduling.PLAY_BOT_TURN, game_id, 3)
    assert scheduling.enqueue(scheduling.PLAY_BOT_TURN, game_id, 4)  # another move
    assert scheduling.enqueue(scheduling.DEAL_NEXT_ROUND, game_id, 3)  # other work: no mark
    assert scheduling.enqueue(scheduling.DEAL_NEXT_ROUND, game_id, 3)
    scheduling.unmark(game_id, 3)
    assert scheduling.enqueue(scheduling.PLAY_BOT_TURN, game_id, 3)
    assert scheduling.clear_marks() == 2
    assert scheduling.enqueue(scheduling.PLAY_BOT_TURN, game_id, 3)
    assert scheduling.enqueue(scheduling.PLAY_BOT_TURN, game_id, 4)
    assert broker.queued() == 7


@pytest.mark.parametrize(
    ("moves", "sizes"),
    [(0, []), (1, [1]), (2, [1, 1]), (5, [3, 2]), (16, [8, 8]), (17, [6, 6, 5]), (40, [8] * 5)],
)
def test_bot_moves_due_together_are_split_into_near_equal_batches(moves, sizes):
    """At most ``BOT_BATCH`` moves a task, in order, and two tasks at least for two moves."""
    due = list(range(moves))
    parts = scheduling.batches(due)
    assert [len(p) for p in parts] == sizes
    assert [m for p in parts for m in p] == due


def test_a_claims_bot_moves_travel_in_batches_once_each(broker, settings):
    """Five bot moves due in one claim go as two tasks on the bots' queue, each move marked as
    waiting: sent again, only the moves not already waiting go (here one new move)."""
    settings.TONGITS_BOT_QUEUE = "bots"
    with app.connection_for_write() as conn:
        app.amqp.queues["bots"].bind(conn.default_channel).declare()
    moves = [(f"00000000-0000-0000-0000-00000000006{i}", 4) for i in range(5)]
    assert scheduling.enqueue_bot_moves(moves) == 5
    assert broker.client.llen("bots") == 2
    sent = [json.loads(m) for m in broker.client.lrange("bots", 0, -1)]
    assert {m["headers"]["task"] for m in sent} == {scheduling.PLAY_BOT_TURNS}
    carried = sorted(tuple(move) for m in sent for move in _task_args(m)[0])
    assert carried == sorted(moves)

    assert scheduling.enqueue_bot_moves([*moves, (moves[0][0], 5)]) == 1
    assert broker.client.llen("bots") == 3
    scheduling.unmark_many(moves[:2])
    assert scheduling.enqueue_bot_moves(moves) == 2


def test_a_batch_of_bot_moves_plays_each_table_and_skips_what_moved_on(
    stopped_worker, broker, auth_client_factory, settings
):
    """One task, three tables waiting for a bot, one of them given at a stale version: the two
    others get their bot's move, the stale one nothing, and each move's mark is cleared (the
    task's body, called here; the starved-queue test runs it on a worker)."""
    settings.TONGITS_BOT_DELAY_SECONDS = 30.0  # the scheduler leaves them to the test
    human = auth_client_factory()
    waiting = []
    for _ in range(3):
        game_id = quick_table(human, {"preset": "standard", "turn_seconds": 0}, human_seat=0)
        waiting.append(drive(game_id, human.user, lambda g: g.awaiting == Game.Awaiting.BOT))
    moves = [[str(g.pk), g.version] for g in waiting]
    moves[1][1] -= 1  # a copy queued for a move already made
    for game_id, version in moves:  # marked as waiting; the messages are then lost
        assert scheduling.enqueue(scheduling.PLAY_BOT_TURN, game_id, version)
    broker.purge()

    outcomes = game_tasks.play_bot_turns(moves)
    assert outcomes == ["done", "moved_on", "done"]
    versions = [Game.objects.get(pk=g.pk).version for g in waiting]
    assert versions[0] > waiting[0].version and versions[2] > waiting[2].version
    assert versions[1] == waiting[1].version
    for game_id, version in moves:  # started: each may be queued again
        assert scheduling.enqueue(scheduling.PLAY_BOT_TURN, game_id, version)


def _task_args(message: dict) -> list:
    """A queued Celery message's positional arguments (its body: base64 of JSON)."""
    return json.loads(base64.b64decode(message["body"]))[0]
