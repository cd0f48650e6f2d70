"""Match history, stats, ratings and the leaderboard after matches played over HTTP by four
people (and one with bots), every number checked against a second reading of the events."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from accounts.models import MatchRecord, PlayerMatch, PlayerStats, User
from games.models import Event
from tests.accounts.support import (
    expected_ratings,
    expected_seats,
    play_over_http,
    play_quick_over_http,
    register,
    settle,
)
from tests.api.games_support import assert_error, choose, get_view, post_command

pytestmark = pytest.mark.django_db

HOUSE = "house"
CUSTOM = {"preset": "standard", "wins_to_match": 2}


def history(client: APIClient, username: str, **params) -> list[dict]:
    response = client.get(f"/api/v1/players/{username}/matches", params)
    assert response.status_code == 200, response.content
    return response.json()["results"]


def snapshot() -> dict[str, list]:
    """Every projection row, without surrogate ids, in a stable order."""
    return {
        "records": list(MatchRecord.objects.order_by("game_id").values()),
        "player_matches": [
            {k: v for k, v in row.items() if k != "id"}
            for row in PlayerMatch.objects.order_by("match_id", "seat").values()
        ],
        "stats": list(PlayerStats.objects.order_by("player_id").values()),
    }


def test_history_stats_ratings_and_leaderboard_after_matches_over_http():
    ana, ben, cora, dan = (register(n) for n in ("ana", "ben", "cora", "dan"))
    ids = {c.username: c.user_id for c in (ana, ben, cora, dan)}
    games = [
        play_over_http([ana, ben, cora], "standard"),
        play_over_http([ben, cora, dan], HOUSE),
        play_over_http([dan, ana, cora], CUSTOM),
    ]
    # One more with bots: quick play over HTTP, the bots moved by the bot task's service.
    bot_seats = [{"kind": "bot", "level": "easy"}, {"kind": "user"}, {"kind": "bot"}]
    games.append(play_quick_over_http(ana, bot_seats, CUSTOM))
    # A match still in play: no history shows it.
    unfinished = play_unfinished([ana, ben, dan])
    for game_id in games:
        settle(game_id)
    settle(unfinished)
    assert MatchRecord.objects.count() == 4

    anon = APIClient()  # profiles are public
    presets = {games[0]: "standard", games[1]: "house", games[2]: "custom", games[3]: "custom"}
    bots = {
        "easy": User.objects.get(username="bot-easy").pk,
        "normal": User.objects.get(username="bot-normal").pk,
    }

    def player_of(spec: dict) -> int:
        return bots[spec["level"]] if spec["kind"] == "bot" else spec["user_id"]

    # History: every row against the events of its match.
    for name in ("ana", "ben", "cora", "dan", "bot-easy", "bot-normal"):
        pid = ids.get(name) or User.objects.get(username=name).pk
        rows = history(anon, name)
        mine = [g for g in games if any(player_of(s["spec"]) == pid for s in expected_seats(g))]
        assert {r["game_id"] for r in rows} == set(mine)
        ends = [r["ended_at"] for r in rows]
        assert ends == sorted(ends, reverse=True)  # newest first
        for row in rows:
            seats = expected_seats(row["game_id"])
            seat = seats[row["seat"]]
            assert player_of(seat["spec"]) == pid
            assert row["result"] == ("win" if seat["won"] else "loss")
            assert row["placement"] == seat["placement"]
            assert (
                row["rounds_won"]
                == seat["rounds_won"]
                == seat["wins"].get("tongits", 0)
                + seat["wins"].get("draw", 0)
                + seat["wins"].get("stock_out", 0)
            )
            assert row["rounds_played"] == seat["rounds"]
            assert row["chips"] == seat["chips"]
            assert row["times_burned"] == seat["burned"]
            assert row["draw_calls"] == seat["calls"]
            assert row["draw_calls_won"] == seat["calls_won"]
            assert row["rounds_without_winner"] == seat["nobody"]
            for how in ("tongits", "draw", "stock_out"):
                assert row["rounds_won_by"][how] == seat["wins"].get(how, 0)
                assert row["rounds_lost_to"][how] == seat["losses"].get(how, 0)
            assert row["average_deadwood"] == pytest.approx(
                seat["deadwood"] / seat["rounds"], abs=1e-4
            )
            assert row["rules"] == presets[row["game_id"]]
            others = [seats[(row["seat"] + k) % 3]["spec"] for k in (1, 2)]
            assert [o["username"] for o in row["opponents"]] == [
                o.get("username") or f"bot-{o['level']}" for o in others
            ]
            assert row["replay"] == f"/api/v1/games/{row['game_id']}/replay"
            assert row["url"] == f"/api/v1/matches/{row['game_id']}"

    # Stats: the sums of the rows; ratings: openskill replayed in match-end order.
    ratings = expected_ratings(games, player_of)
    for name in ("ana", "ben", "cora", "dan", "bot-easy", "bot-normal"):
        pid = ids.get(name) or User.objects.get(username=name).pk
        response = anon.get(f"/api/v1/players/{name}/stats")
        assert response.status_code == 200, response.content
        stats = response.json()
        seats = [s for g in games for s in expected_seats(g) if player_of(s["spec"]) == pid]
        assert stats["matches"] == len(seats)
        assert stats["wins"] == sum(s["won"] for s in seats)
        assert stats["rounds_played"] == sum(s["rounds"] for s in seats)
        assert stats["rounds_won"] == sum(s["rounds_won"] for s in seats)
        assert stats["rounds_won_by"]["tongits"] == sum(s["wins"].get("tongits", 0) for s in seats)
        assert stats["draw_calls"] == sum(s["calls"] for s in seats)
        assert stats["draw_calls_won"] == sum(s["calls_won"] for s in seats)
        assert stats["times_burned"] == sum(s["burned"] for s in seats)
        assert stats["chips_net"] == sum(s["chips"] for s in seats)
        assert stats["average_deadwood"] == pytest.approx(
            sum(s["deadwood"] for s in seats) / sum(s["rounds"] for s in seats), abs=1e-4
        )
        mu, sigma = ratings[pid]
        assert stats["rating"]["mu"] == pytest.approx(mu, abs=1e-9)
        assert stats["rating"]["sigma"] == pytest.approx(sigma, abs=1e-9)
        assert stats["rating"]["ordinal"] == pytest.approx(mu - 3 * sigma, abs=1e-9)
        assert stats["is_bot"] == name.startswith("bot-")
    # The chips of all players sum to zero (bots included).
    assert sum(s.chips for s in PlayerStats.objects.all()) == 0

    # Leaderboard: by conservative rating, bots included; min_games filters.
    board = anon.get("/api/v1/leaderboard").json()
    assert board["count"] == 6
    ordinals = [e["rating"]["ordinal"] for e in board["results"]]
    assert ordinals == sorted(ordinals, reverse=True)
    assert [e["rank"] for e in board["results"]] == [1, 2, 3, 4, 5, 6]
    assert {e["username"] for e in board["results"] if e["is_bot"]} == {"bot-easy", "bot-normal"}
    by_games = anon.get("/api/v1/leaderboard", {"min_games": 3}).json()
    assert {e["username"] for e in by_games["results"]} == {"ana", "cora"}  # three matches each
    page = anon.get("/api/v1/leaderboard", {"limit": 2, "offset": 2}).json()
    assert [e["rank"] for e in page["results"]] == [3, 4]
    assert page["results"][0]["username"] == board["results"][2]["username"]
    assert_error(anon.get("/api/v1/leaderboard", {"min_games": -1}), 400, "invalid")

    # Filters.
    assert {r["game_id"] for r in history(anon, "ana", rules="standard")} == {games[0]}
    assert {r["game_id"] for r in history(anon, "cora", rules="house")} == {games[1]}
    assert {r["game_id"] for r in history(anon, "ana", opponent="DAN")} == {games[2]}
    assert {r["game_id"] for r in history(anon, "ana", opponent="bot-easy")} == {games[3]}
    assert history(anon, "ana", opponent="nobody") == []
    wins = history(anon, "cora", result="win")
    assert all(r["result"] == "win" for r in wins)
    assert len(wins) + len(history(anon, "cora", result="loss")) == 3
    first = Event.objects.get(game_id=games[0], type="match_ended").recorded_at
    last = Event.objects.get(game_id=games[3], type="match_ended").recorded_at
    assert {
        r["game_id"] for r in history(anon, "ana", until=first + timedelta(microseconds=1))
    } == {games[0]}
    assert {r["game_id"] for r in history(anon, "ana", since=last)} == {games[3]}
    assert len(history(anon, "ana", since=first.date().isoformat())) == 3
    assert_error(anon.get("/api/v1/players/ana/matches", {"result": "draw"}), 400, "invalid")
    assert_error(anon.get("/api/v1/players/ana/matches", {"since": "soon"}), 400, "invalid")
    assert_error(anon.get("/api/v1/players/nobody/matches"), 404, "not_found")
    assert_error(anon.get("/api/v1/players/nobody/stats"), 404, "not_found")

    # Pagination: newest first, by cursor, no overlap.
    one = anon.get("/api/v1/players/ana/matches", {"page_size": 2}).json()
    assert len(one["results"]) == 2 and one["previous"] is None and one["next"]
    two = anon.get(one["next"]).json()
    assert [r["game_id"] for r in one["results"] + two["results"]] == [
        r["game_id"] for r in history(anon, "ana")
    ]
    assert two["next"] is None

    # Match detail: every round as the events tell it; the replay it links to opens for a
    # player of the match and for staff, and for nobody else.
    detail = anon.get(f"/api/v1/matches/{games[1]}").json()
    ended = [
        e.data for e in Event.objects.filter(game_id=games[1], type="round_ended").order_by("seq")
    ]
    assert [(r["reason"], r["winner"], r["payouts"], r["deadwood"]) for r in detail["rounds"]] == [
        (e["reason"], e["winner"], e["payouts"], e["deadwood"]) for e in ended
    ]
    assert [s["username"] for s in detail["seats"]] == ["ben", "cora", "dan"]
    assert [s["placement"] for s in detail["seats"]] == [
        s["placement"] for s in expected_seats(games[1])
    ]
    assert detail["replay"] == f"/api/v1/games/{games[1]}/replay"
    assert ben.get(detail["replay"], {"at": 3}).status_code == 200
    staff = register("auditor")
    User.objects.filter(username="auditor").update(is_staff=True)
    replay = staff.get(detail["replay"])
    assert replay.status_code == 200 and replay.json()["revealed"] is True
    outsider = register("eve")  # logged in, but neither a player of this match nor staff
    assert_error(outsider.get(detail["replay"]), 403, "not_a_player")
    assert_error(outsider.get(f"/api/v1/games/{games[1]}/audit"), 403, "not_a_player")
    assert_error(anon.get(f"/api/v1/matches/{unfinished}"), 404, "not_found")

    # Settlement again (a redelivered task) changes nothing; a rebuild from the event log
    # alone gives every row again, and so does a second rebuild.
    before = snapshot()
    for game_id in games:
        settle(game_id)
    assert snapshot() == before
    PlayerStats.objects.all().delete()
    PlayerMatch.objects.all().delete()
    MatchRecord.objects.all().delete()
    call_command("rebuild_projections", "--no-progress")
    assert snapshot() == before
    call_command("rebuild_projections", "--no-progress")
    assert snapshot() == before


def play_unfinished(clients: list[APIClient]) -> str:
    """A started match with a few moves made, not finished."""
    owner, *others = clients
    seats = [{"kind": "user"}] + [{"kind": "user", "username": c.username} for c in others]
    game_id = owner.post("/api/v1/tables", {"seats": seats}, "json").json()["id"]
    for other in others:
        other.post(f"/api/v1/tables/{game_id}/invitation", {"answer": "accept"}, "json")
    assert owner.post(f"/api/v1/tables/{game_id}/start").status_code == 200
    for _ in range(5):
        payload = get_view(owner, game_id)
        client = clients[payload["view"]["turn"]]
        payload = get_view(client, game_id)
        assert post_command(client, game_id, choose(payload), payload["version"]).status_code == 200
    return game_id
