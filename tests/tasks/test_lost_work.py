"""Lost work: with the worker stopped, tables stall; when it starts again the queued work runs,
and what was lost outright (a purged broker) is found again by the sweeper. No event is ever
played twice and every chain verifies."""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from accounts.models import MatchRecord
from games import scheduling, store, tasks
from games.models import Event, Game
from games.rules import state_to_dict
from tests.tasks.support import drive, game_url, greedy, quick_table, view, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

STALL_SECONDS = 0.5
RESUME_SECONDS = 10.0


def versions(game_ids: list[str]) -> dict[str, int]:
    return dict(Game.objects.filter(pk__in=game_ids).values_list("id", "version"))


def assert_sound(game_id: str) -> None:
    """Consecutive seqs, an unbroken chain, and the snapshot equal to a fold from zero: a move
    played twice would break the fold (the second copy is illegal) or the seqs."""
    seqs = list(Event.objects.filter(game_id=game_id).order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
    assert store.verify_chain(game_id) is None
    game = Game.objects.get(pk=game_id)
    assert state_to_dict(store.fold_from_zero(game_id, upto=game.version)) == game.snapshot


def stall_on_a_bot(client, game_id: str) -> None:
    """Play the human's commands over the API until a bot is to act (the worker is stopped)."""
    for _ in range(50):
        payload = view(client, game_id)
        if not payload["legal_commands"]:
            return
        response = client.post(
            game_url(game_id, "/commands"),
            {"command": greedy(payload), "expected_version": payload["version"]},
            "json",
        )
        assert response.status_code == 200, response.content
    raise AssertionError("the human kept the turn")


def back_to_the_human(game_ids: list[str], since: dict[str, int]) -> bool:
    games = Game.objects.filter(pk__in=game_ids)
    return all(
        g.version > since[str(g.pk)] and g.awaiting in (Game.Awaiting.USER, Game.Awaiting.NONE)
        for g in games
    )


def test_tables_stall_without_a_worker_and_resume_when_it_starts(
    stopped_worker, broker, auth_client_factory, run_on_worker
):
    human = auth_client_factory()
    rules = {"preset": "standard", "turn_seconds": 0}
    game_ids = [quick_table(human, rules, human_seat=seat) for seat in (0, 1, 2, 0)]
    for game_id in game_ids:
        stall_on_a_bot(human, game_id)
    stalled = {str(k): v for k, v in versions(game_ids).items()}
    time.sleep(STALL_SECONDS)
    assert {str(k): v for k, v in versions(game_ids).items()} == stalled, "moved without a worker"
    # Nothing is published per move: the work waits as each table's due time, in the database.
    assert broker.queued() == 0
    tables = Game.objects.filter(pk__in=game_ids)
    assert all(g.awaiting == Game.Awaiting.BOT and g.due_at <= timezone.now() for g in tables)

    # The scheduler queues the work when the worker starts; a sweep at the same moment queues
    # copies of the same work, which must change nothing.
    stopped_worker.start()
    run_on_worker(tasks.sweep)
    assert wait_for(lambda: back_to_the_human(game_ids, stalled), RESUME_SECONDS), versions(
        game_ids
    )
    for game_id in game_ids:
        assert_sound(game_id)


def test_work_lost_with_the_broker_is_found_by_the_sweeper(
    stopped_worker, broker, auth_client_factory, run_on_worker
):
    human = auth_client_factory()
    # Four tables, each owing the server one kind of work.
    bot = quick_table(human, {"preset": "standard", "turn_seconds": 0}, human_seat=0)
    stall_on_a_bot(human, bot)
    overdue = quick_table(human, {"preset": "standard", "turn_seconds": 1}, human_seat=0)
    drive(overdue, human.user, lambda g: g.awaiting == Game.Awaiting.USER)
    deal = quick_table(human, {"preset": "standard", "turn_seconds": 0}, human_seat=0)
    drive(deal, human.user, lambda g: g.awaiting == Game.Awaiting.DEAL)
    settle = quick_table(
        human, {"preset": "standard", "turn_seconds": 0, "wins_to_match": 1}, human_seat=0
    )
    drive(settle, human.user, lambda g: g.awaiting == Game.Awaiting.SETTLE)
    game_ids = [bot, overdue, deal, settle]
    before = {str(k): v for k, v in versions(game_ids).items()}
    wait_for(lambda: Game.objects.get(pk=overdue).turn_deadline.timestamp() < time.time(), 2)

    assert scheduling.run_due() == 4  # the scheduler queued each table's work (and leased it)
    broker.purge()  # every queued task is lost
    stopped_worker.start()
    time.sleep(STALL_SECONDS)
    assert {str(k): v for k, v in versions(game_ids).items()} == before, "lost work ran"
    assert not MatchRecord.objects.filter(game_id=settle).exists()

    counts = run_on_worker(tasks.sweep)
    assert counts == {
        scheduling.EXPIRE_TURN: 1,
        scheduling.PLAY_BOT_TURN: 1,
        scheduling.DEAL_NEXT_ROUND: 1,
        scheduling.SETTLE_MATCH: 1,
        scheduling.ABORT_IDLE: 0,
    }, counts

    def resumed() -> bool:
        games = {str(g.pk): g for g in Game.objects.filter(pk__in=game_ids)}
        return (
            games[bot].version > before[bot]
            and games[bot].awaiting == Game.Awaiting.USER
            and games[overdue].version > before[overdue]
            and games[deal].round == 2
            and games[settle].settled_at is not None
        )

    assert wait_for(resumed, RESUME_SECONDS), versions(game_ids)
    timed_out = Event.objects.get(game_id=overdue, seq=before[overdue] + 1)
    assert timed_out.type == "turn_timed_out" and timed_out.actor == "system"
    dealt = Event.objects.get(game_id=deal, seq=before[deal] + 1)
    assert dealt.type == "round_started" and dealt.actor == "system"
    assert MatchRecord.objects.filter(game_id=settle).count() == 1
    for game_id in game_ids:
        assert_sound(game_id)

    # Nothing is left behind now, but the overdue table (1-second turns) keeps timing out.
    assert run_on_worker(tasks.sweep)[scheduling.SETTLE_MATCH] == 0
