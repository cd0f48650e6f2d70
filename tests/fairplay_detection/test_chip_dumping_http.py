"""Chip dumping over HTTP, with a real worker: a feeder resigns match after match to the same
account at a table played for chips. The worker settles each match, then scores it (a task of
its own, after the settlement); on the default thresholds a chip_dumping flag naming the
beneficiary, the feeder and the chips is raised within 10 matches, once, and fair play opens a
case that staff see in their queue. The projections then equal a rebuild, and a tampered pair
row is found by ``fairplay_signals --check``."""

from __future__ import annotations

import random

import pytest
from django.core.management import CommandError, call_command

from fairplay.detection import projections
from fairplay.detection.models import PairSignal, ScoredMatch
from fairplay.detection.signals import flag_raised
from fairplay.models import Case
from games.rules.bots import NormalBot
from tests.accounts.support import register
from tests.api.games_support import game_url, get_view, post_command, table_url

# The worker fixtures of tests/tasks (a real worker and the scheduler, on the test Redis).
from tests.tasks.conftest import (  # noqa: F401
    broker,
    game_timing,
    task_runs,
    worker,
)
from tests.tasks.support import wait_for

pytestmark = pytest.mark.django_db(transaction=True)
RULES = {"preset": "standard", "wins_to_match": 2, "stake": 10}
BUY_IN = 100
_bot = NormalBot()


def play_a_match(main, feeder) -> str:
    """main opens a table for chips with the feeder and an easy bot; the feeder resigns at
    once; main plays (the normal bot's choices) until the match ends."""
    seats = [
        {"kind": "user"},
        {"kind": "user", "username": feeder.username},
        {"kind": "bot", "level": "easy"},
    ]
    response = main.post(
        "/api/v1/tables", {"rules": RULES, "seats": seats, "buy_in": BUY_IN}, "json"
    )
    assert response.status_code == 201, response.content
    game_id = response.json()["id"]
    answer = feeder.post(table_url(game_id, "/invitation"), {"answer": "accept"}, "json")
    assert answer.status_code == 200, answer.content
    assert main.post(table_url(game_id, "/start")).status_code == 200
    assert feeder.post(game_url(game_id, "/resign")).status_code == 200
    rng = random.Random(game_id)
    for _ in range(3000):
        payload = wait_for(
            lambda: (
                (p := get_view(main, game_id))
                and (p["status"] == "finished" or p["legal_commands"])
                and p
            ),
            20,
        )
        assert payload, "the table stopped moving"
        if payload["status"] == "finished":
            return game_id
        command = _bot.choose(payload["view"], payload["legal_commands"], rng)
        response = post_command(main, game_id, command, payload["version"])
        assert response.status_code in (200, 409), response.content
    raise AssertionError("the match did not end")


def test_a_feeder_resigning_to_one_account_is_flagged_within_ten_matches(
    worker,  # noqa: F811
    settings,
    auth_client_factory,
    user_factory,
):
    settings.TONGITS_SIGNUP_GRANT = 2000
    raised = []

    def heard(sender, flag, **kwargs):
        raised.append(flag)

    flag_raised.connect(heard, weak=False)
    try:
        main, feeder = register("dumpmain"), register("dumpfeeder")
        games = []
        for _ in range(10):
            games.append(play_a_match(main, feeder))
            assert wait_for(lambda: ScoredMatch.objects.filter(pk=games[-1]).exists(), 30), (
                "the worker never scored the match"
            )
            if any(f.kind == "chip_dumping" for f in raised):
                break
    finally:
        flag_raised.disconnect(heard)

    dumping = [f for f in raised if f.kind == "chip_dumping"]
    assert len(dumping) == 1, raised
    flag = dumping[0]
    assert flag.accounts == (main.user_id, feeder.user_id)
    assert flag.score >= flag.threshold == settings.TONGITS_FAIRPLAY_CHIP_DUMPING_THRESHOLD
    assert set(flag.game_ids) == set(games)
    fed = PairSignal.objects.get(a=feeder.user_id, b=main.user_id)
    assert flag.evidence["chip_flow"][f"{feeder.user_id}_to_{main.user_id}"] == fed.chips
    assert fed.chips >= settings.TONGITS_FAIRPLAY_DUMPING_MIN_CHIPS
    assert fed.matches_off + fed.rounds_off > 0 and fed.games == len(games)
    # Each match's chips as the ledger settled them: what the feeder lost that the main won.
    flow = 0
    for game_id in games:
        paid = main.get(f"/api/v1/matches/{game_id}").json()["settlement"]["paid"]
        flow += max(0, min(-paid[1], paid[0]))  # seat 0 the main, seat 1 the feeder
    assert fed.chips == flow

    # Fair play heard the flag: an open case names the beneficiary and the feeder, with the chips.
    case = Case.objects.get(kind="chip_dumping")
    members = list(case.members.order_by("position").values_list("user_id", flat=True))
    assert members == [main.user_id, feeder.user_id] and case.hold
    logged = case.events.get(type="flag").data
    assert logged["evidence"]["chip_flow"][f"{feeder.user_id}_to_{main.user_id}"] == fed.chips
    staff = auth_client_factory(user_factory(is_staff=True))
    queue = staff.get("/api/v1/staff/cases").json()
    assert [(c["kind"], c["accounts"]) for c in queue] == [
        ("chip_dumping", [main.username, feeder.username])
    ]

    # Scoring twice changes nothing and raises nothing.
    assert projections.project(games[0]) == "already_scored"
    # The projections equal a rebuild; a tampered row is found, and a rebuild mends it.
    call_command("fairplay_signals", "--check", "--no-progress")
    PairSignal.objects.filter(pk=fed.pk).update(feed_k=fed.feed_k + 1)
    with pytest.raises(CommandError):
        call_command("fairplay_signals", "--check", "--no-progress")
    call_command("fairplay_signals", "--no-progress")
    call_command("fairplay_signals", "--check", "--no-progress")
    assert PairSignal.objects.get(pk__isnull=False, a=feeder.user_id, b=main.user_id).feed_k == (
        fed.feed_k
    )
