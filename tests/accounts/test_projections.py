"""The projection's own guarantees, on short matches played through the services: idempotent,
order-independent (a late settlement re-rates what ended after it), bots as players."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from accounts import projections
from accounts.match_records import rules_preset, summarize_match
from accounts.models import MatchRecord, PlayerMatch, PlayerStats, User
from games import lobby
from games.models import Event
from games.rules import RuleSet
from games.rules.rating import DEFAULT_RATING
from tests.accounts.support import expected_ratings, expected_seats, play_with_bots
from tests.accounts.test_history_api import snapshot

pytestmark = pytest.mark.django_db

SHORT = {"preset": "standard", "wins_to_match": 1}
EASY = {"kind": "bot", "level": "easy"}
NORMAL = {"kind": "bot", "level": "normal"}


def bot_id(level: str) -> int:
    return User.objects.get(username=f"bot-{level}").pk


def test_a_late_settlement_is_rated_in_match_end_order(user_factory):
    ann, bob = user_factory(), user_factory()
    first = play_with_bots(ann, [{"kind": "user"}, EASY, NORMAL], SHORT, seed=1)
    second = play_with_bots(bob, [EASY, {"kind": "user"}, NORMAL], SHORT, seed=2)
    third = play_with_bots(ann, [NORMAL, EASY, {"kind": "user"}], SHORT, seed=3)
    # The settlements race: the last match to end is settled first, the first one last.
    for game_id in (third, second, first):
        assert projections.project_match(game_id) is True
    late = snapshot()

    bots = {"easy": bot_id("easy"), "normal": bot_id("normal")}
    expected = expected_ratings(
        [first, second, third],
        lambda spec: bots[spec["level"]] if spec["kind"] == "bot" else spec["user_id"],
    )
    for stats in PlayerStats.objects.all():
        assert (stats.mu, stats.sigma) == pytest.approx(expected[stats.player_id], abs=1e-9)
    # Each row's rating before is the player's rating after their previous match.
    for player in (ann.pk, bots["easy"]):
        rows = list(PlayerMatch.objects.filter(player_id=player).order_by("end_event_id"))
        assert (rows[0].mu_before, rows[0].sigma_before) == DEFAULT_RATING
        for before, after in zip(rows, rows[1:], strict=False):
            assert (after.mu_before, after.sigma_before) == (before.mu, before.sigma)

    call_command("rebuild_projections", "--no-progress")
    assert snapshot() == late


def test_projecting_twice_changes_nothing_and_unfinished_matches_are_skipped(user_factory):
    ann = user_factory()
    game_id = play_with_bots(ann, [{"kind": "user"}, EASY, NORMAL], SHORT, seed=5)
    assert projections.project_match(game_id) is True
    once = snapshot()
    assert projections.project_match(game_id) is False
    assert snapshot() == once

    waiting = lobby.table_create(user=ann)  # no events at all
    assert projections.project_match(waiting.pk) is False
    assert MatchRecord.objects.count() == 1


def test_a_bot_level_playing_itself_gets_no_record_but_rates_its_opponent(user_factory):
    ann = user_factory()
    game_id = play_with_bots(ann, [EASY, {"kind": "user"}, EASY], SHORT, seed=11)
    projections.project_match(game_id)
    rows = list(PlayerMatch.objects.select_related("opponent_1", "opponent_2"))
    assert [r.player_id for r in rows] == [ann.pk]
    assert {rows[0].opponent_1.username, rows[0].opponent_2.username} == {"bot-easy"}
    assert not PlayerStats.objects.filter(player__username="bot-easy").exists()
    assert (rows[0].mu, rows[0].sigma) != DEFAULT_RATING
    assert rows[0].placement == expected_seats(game_id)[1]["placement"]


def test_summary_of_a_stream_and_the_preset_names():
    rows = [Event(id=1, seq=1, data={"type": "game_started", "rules": {}, "seats": []})]
    assert summarize_match(rows) is None
    standard, house = RuleSet.standard().to_dict(), RuleSet.house().to_dict()
    assert rules_preset(standard) == "standard"
    assert rules_preset({**house, "turn_seconds": 45}) == "house"  # pace is not the game
    assert rules_preset({**standard, "wins_to_match": 2}) == "custom"


def test_bot_names_are_reserved_and_bot_accounts_cannot_log_in(api_client):
    response = api_client.post(
        "/api/v1/auth/register", {"username": "Bot-Hard", "password": "x" * 20}, "json"
    )
    assert response.status_code == 400 and response.json()["code"] == "username_reserved"
    hard = User.objects.get(pk=projections.PlayerResolver().bot("hard"))  # made by migration 0002
    assert hard.is_bot and not hard.has_usable_password()
    response = api_client.post(
        "/api/v1/auth/token", {"username": "bot-hard", "password": "!"}, "json"
    )
    assert response.status_code == 401


def test_a_player_without_matches_has_zeros_and_the_starting_rating(auth_client):
    body = auth_client.get(f"/api/v1/players/{auth_client.user.username}/stats").json()
    assert body["matches"] == 0 and body["win_rate"] is None and body["average_deadwood"] is None
    assert body["rating"] == {"ordinal": 0.0, "mu": 25.0, "sigma": DEFAULT_RATING[1]}
    history = auth_client.get(f"/api/v1/players/{auth_client.user.username.upper()}/matches")
    assert history.status_code == 200 and history.json()["results"] == []
