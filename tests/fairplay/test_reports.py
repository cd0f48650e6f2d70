"""Players' reports: only a seated player of a finished game, never their own seat, once per
game and reporter, throttled; each joins the open case of its kind naming that account."""

from __future__ import annotations

import pytest

from fairplay.models import Case, Report
from tests.fairplay.support import dumped_match

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def grants(settings):
    settings.TONGITS_SIGNUP_GRANT = 1000


def report(client, game_id, seat=1, reason="chip_dumping", text="resigned at once, again"):
    return client.post(
        f"/api/v1/games/{game_id}/reports",
        {"seat": seat, "reason": reason, "text": text},
        format="json",
    )


def test_a_player_reports_a_seat_once_and_it_joins_one_case(user_factory, auth_client_factory):
    users = [user_factory() for _ in range(3)]
    game = dumped_match(users, buy_in=100)
    victim = auth_client_factory(users[2])
    made = report(victim, game.pk, seat=1)
    assert made.status_code == 201, made.json()
    assert made.json()["seat"] == 1 and made.json()["reason"] == "chip_dumping"
    twice = report(victim, game.pk, seat=0)
    assert twice.status_code == 409 and twice.json()["code"] == "already_reported"
    case = Case.objects.get()
    assert (case.kind, case.status, case.hold) == ("chip_dumping", "open", False)
    assert list(case.members.values_list("user_id", flat=True)) == [users[1].pk]
    # Another player's report of the same account and kind joins the same case.
    other = auth_client_factory(users[0])
    assert report(other, game.pk, seat=1).status_code == 201
    assert Case.objects.count() == 1 and Report.objects.filter(case=case).count() == 2
    assert list(case.events.values_list("type", flat=True)) == ["opened", "report", "report"]


def test_only_seated_players_of_finished_games_report_others(user_factory, auth_client_factory):
    users = [user_factory() for _ in range(3)]
    game = dumped_match(users, buy_in=100)
    stranger = auth_client_factory()
    refused = report(stranger, game.pk)
    assert refused.status_code == 403 and refused.json()["code"] == "not_a_player"
    own = report(auth_client_factory(users[1]), game.pk, seat=1)
    assert own.status_code == 400 and own.json()["code"] == "own_seat"
    bad = report(auth_client_factory(users[2]), game.pk, seat=7)
    assert bad.status_code == 400 and bad.json()["code"] == "invalid"
    unknown = report(stranger, "00000000-0000-0000-0000-000000000000")
    assert unknown.status_code == 404
    # A match still running cannot be reported.
    from tests.chips.support import quick_table

    running = quick_table(users[0], 0)
    answer = report(auth_client_factory(users[0]), running.pk, seat=1)
    assert answer.status_code == 409 and answer.json()["code"] == "game_not_finished"
    assert not Report.objects.exists()


def test_a_bots_seat_is_not_a_person(user_factory, auth_client_factory):
    from tests.chips.support import play_to_the_end, quick_table, settle

    user = user_factory()
    game = quick_table(user, 0)
    play_to_the_end(game.pk, {0: user})
    settle(game.pk)
    answer = report(auth_client_factory(user), game.pk, seat=1)
    assert answer.status_code == 400 and answer.json()["code"] == "seat_not_a_person"


def test_reports_are_throttled(user_factory, auth_client_factory, settings):
    settings.TONGITS_THROTTLE_RATES = {**settings.TONGITS_THROTTLE_RATES, "reports": "2/h"}
    user = user_factory()
    client = auth_client_factory(user)
    answers = [report(client, "00000000-0000-0000-0000-000000000000").status_code for _ in "abc"]
    assert answers == [404, 404, 429]
