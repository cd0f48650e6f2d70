"""Weekly leaderboards: the week's boundary (Monday 00:00 in Manila, a test clock), a room's
board from rated matches, the archive of a finished week and its rewards, paid exactly once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from accounts.tasks import settle_match_now
from chips.models import Entry
from games import lobby
from tests.chips.support import assert_sound, play_to_the_end
from tests.tournaments.support import wallet
from tournaments import seasons
from tournaments.models import Week, WeekStanding

pytestmark = pytest.mark.django_db
WEEKLY = "/api/v1/leaderboards/weekly"
ROOM = "100:5"


def test_the_week_turns_at_monday_midnight_in_manila():
    # Monday 2026-12-07 00:00 in Manila is Sunday 16:00 UTC.
    before = seasons.week_of(datetime(2026, 12, 6, 15, 59, 59, tzinfo=UTC))
    after = seasons.week_of(datetime(2026, 12, 6, 16, 0, 0, tzinfo=UTC))
    assert before.id == "2026-11-30" and after.id == "2026-12-07"
    assert before.ends_at == after.starts_at == datetime(2026, 12, 6, 16, tzinfo=UTC)
    assert after.ends_at - after.starts_at == timedelta(days=7)
    assert seasons.week_named("2026-12-07") == after
    with pytest.raises(seasons.InvalidWeek):
        seasons.week_named("2026-12-08")  # a Tuesday starts no week


def test_the_reset_follows_the_setting(settings):
    settings.TONGITS_SEASON_DAYS = 1
    settings.TONGITS_SEASON_TIMEZONE = "UTC"
    day = seasons.week_of(datetime(2026, 12, 6, 23, 59, tzinfo=UTC))
    assert (day.starts_at, day.ends_at) == (
        datetime(2026, 12, 6, tzinfo=UTC),
        datetime(2026, 12, 7, tzinfo=UTC),
    )


def rated_match(user, buy_in=100, stake=5) -> None:
    """A rated match at a room's table (its buy-in and stake), played and settled."""
    seats = [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}]
    rules = {"preset": "standard", "wins_to_match": 1, "stake": stake}
    game = lobby.table_create(user=user, rules=rules, seats=seats, rated=True, buy_in=buy_in)
    play_to_the_end(game.pk, {0: user})
    assert settle_match_now(str(game.pk)) == "settled"


def test_a_finished_week_is_archived_with_its_rewards_paid_once(
    auth_client_factory, user_factory, settings
):
    settings.TONGITS_SIGNUP_GRANT = 10_000
    settings.TONGITS_SEASON_REWARDS = [1000, 500]
    people = [auth_client_factory() for _ in range(3)]
    for n, client in enumerate(people):
        for _ in range(n + 1):
            rated_match(client.user)
    rated_match(people[0].user, buy_in=1000, stake=50)  # another room's table

    now = datetime.now(UTC)
    current = people[0].get(WEEKLY, {"room": ROOM}).json()
    assert (
        current["current"]
        and not current["archived"]
        and current["week"] == (seasons.week_of(now).id)
    )
    board = current["standings"]
    assert sorted(e["user_id"] for e in board) == sorted(c.user.pk for c in people)
    assert [e["rank"] for e in board] == [1, 2, 3]
    assert [e["reward"] for e in board] == [1000, 500, 0]
    assert all(e["points"] == 3 * e["wins"] + e["rounds_won"] for e in board)
    assert sum(e["matches"] for e in board) == 6
    other = people[0].get(WEEKLY, {"room": "1000:50"}).json()["standings"]
    assert [(e["user_id"], e["matches"]) for e in other] == [(people[0].user.pk, 1)]

    before = {c.user.pk: wallet(c.user) for c in people}
    next_week = seasons.week_of(now).ends_at + timedelta(minutes=1)
    assert seasons.close(now=next_week) == len(settings.TONGITS_ROOMS)
    assert seasons.close(now=next_week) == 0  # again: nothing more
    assert seasons.close(now=next_week + timedelta(hours=1)) == 0
    # Each room pays its own places: the first person also won the other room's week.
    elsewhere = {people[0].user.pk: 1000}
    for entry in board:
        paid = entry["reward"] + elsewhere.get(entry["user_id"], 0)
        assert wallet_of(people, entry["user_id"]) == before[entry["user_id"]] + paid
    assert Entry.objects.filter(cause="season_reward").count() == 3
    week = Week.objects.get(room=ROOM)
    assert list(WeekStanding.objects.filter(week=week).values_list("user_id", "reward")) == [
        (e["user_id"], e["reward"]) for e in board
    ]
    assert_sound()

    past = people[1].get(WEEKLY, {"room": ROOM, "week": current["week"]}).json()
    assert past["archived"]  # (this week by the real clock, archived by the test clock)
    assert [(e["user_id"], e["points"]) for e in past["standings"]] == [
        (e["user_id"], e["points"]) for e in board
    ]
    assert current["week"] in people[1].get(WEEKLY, {"room": ROOM}).json()["past_weeks"]
    assert seasons.weekly(room=ROOM, now=next_week)["standings"] == []  # the new week


def wallet_of(people, user_id):
    return wallet(next(c.user for c in people if c.user.pk == user_id))


@pytest.mark.parametrize(
    ("query", "status", "code"),
    [
        ({"room": "7:7"}, 400, "invalid_room"),
        ({"week": "last"}, 400, "invalid_week"),
        ({"week": "2026-12-08"}, 400, "invalid_week"),
        ({"week": "2024-01-01"}, 404, "not_found"),
    ],
)
def test_a_week_that_is_not_is_refused(auth_client, query, status, code):
    response = auth_client.get(WEEKLY, query)
    assert response.status_code == status and response.json()["code"] == code
