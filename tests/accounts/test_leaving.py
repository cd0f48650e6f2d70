"""A player's right to leave: their data as one document (GET /me/export), and the deletion of
their account (DELETE /me) leaving nothing personal that a former opponent could read, with the
games' chains intact and the projections equal to a rebuild."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from accounts import services
from accounts.models import MatchRecord, PlayerMatch, PlayerStats, Session, User
from games import play
from games.models import Event, Game, IdempotencyRecord
from games.rules import CARD_CODES
from tests.accounts.support import MAX_COMMANDS, play_quick_over_http, play_with_bots, settle
from tests.accounts.test_history_api import snapshot
from tests.api.games_support import (
    TABLES,
    assert_error,
    choose,
    game_url,
    get_view,
    post_command,
    table_url,
)
from tests.conftest import DEFAULT_PASSWORD

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

SHORT = {"preset": "standard", "wins_to_match": 1}
NAME, EMAIL = "zelda_quux", "zelda.quux@mail.example"


def register(username: str, email: str = "") -> APIClient:
    client = APIClient()
    body = {"username": username, "password": DEFAULT_PASSWORD, "email": email}
    response = client.post("/api/v1/auth/register", body, "json")
    assert response.status_code == 201, response.content
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    client.username = username
    return client


def open_table(owner: APIClient, others: list[APIClient], start: bool = True) -> str:
    seats = [{"kind": "user"}] + [{"kind": "user", "username": c.username} for c in others]
    response = owner.post(TABLES, {"rules": SHORT, "seats": seats}, "json")
    assert response.status_code == 201, response.content
    game_id = response.json()["id"]
    if start:
        for other in others:  # named seats are invitations: each accepts
            answer = other.post(table_url(game_id, "/invitation"), {"answer": "accept"}, "json")
            assert answer.status_code == 200, answer.content
        assert owner.post(table_url(game_id, "/start")).status_code == 200
    return game_id


def play_on(seats: list[APIClient | None], game_id: str, moves: int = MAX_COMMANDS) -> None:
    """Play ``moves`` commands (or to the end); a seat without a client (a deleted account) is
    timed out at its turn, as the scheduler does once its deadline passes."""
    watcher = next(c for c in seats if c is not None)
    for _ in range(moves):
        payload = get_view(watcher, game_id)
        if payload["status"] == "finished":
            return
        client = seats[payload["view"]["turn"]]
        if client is None:
            Game.objects.filter(pk=game_id).update(turn_deadline=timezone.now() - timedelta(1))
            outcome = play.expire_turn(game_id=game_id, expected_version=payload["version"])
            assert outcome == play.Outcome.DONE, outcome
            continue
        payload = get_view(client, game_id)
        response = post_command(client, game_id, choose(payload), payload["version"])
        assert response.status_code == 200, response.content


# ---------------------------------------------------------------- export


def test_the_export_holds_my_three_matches_and_no_hidden_cards_of_others():
    me = register(NAME, EMAIL)
    bots = [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "normal"}]
    games = [play_quick_over_http(me, bots, SHORT) for _ in range(3)]
    for game_id in games:
        settle(game_id)
    response = me.get("/api/v1/me/export")
    assert response.status_code == 200, response.content
    export = response.json()
    assert export["account"]["username"] == NAME and export["account"]["email"] == EMAIL
    assert [s["current"] for s in export["sessions"]] == [True]
    assert "token" not in str(export["sessions"]) and "digest" not in str(export["sessions"])
    assert {row["game_id"] for row in export["history"]} == set(games)
    assert export["stats"]["matches"] == 3
    assert {g["game_id"] for g in export["games"]} == set(games)

    for game in export["games"]:
        seat = game["seat"]
        events = game["events"]
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert len(events) == Event.objects.filter(game_id=game["game_id"]).count()
        mine: set[str] = set()
        for event in events:
            data = event["data"]
            if data["type"] == "round_started":
                # My hand only: no other hand, no stock, no salt (even though the match is over).
                assert {"hands", "stock", "salt"}.isdisjoint(data)
                mine |= set(data["hand"])
            if data["type"] == "drew" and data["seat"] != seat:
                assert "card" not in data
            if data["type"] == "melded" and data.get("hidden") and data["seat"] != seat:
                assert "cards" not in data
        assert all(code in CARD_CODES for code in mine)
        assert len(mine) >= 12  # my own hands are there


def test_export_requires_auth(api_client):
    assert_error(api_client.get("/api/v1/me/export"), 401, "not_authenticated")


# ---------------------------------------------------------------- deletion


def scan(client: APIClient, game_ids: list[str], names: tuple[str, ...]) -> list[str]:
    """Every GET a former opponent can make about the deleted player's games and profiles;
    returns the URLs read (each answer checked for ``names``)."""
    urls = [
        "/api/v1/me",
        "/api/v1/me/games",
        "/api/v1/me/sessions",
        "/api/v1/me/export",
        "/api/v1/leaderboard?min_games=0",
        f"/api/v1/players/{client.username}/matches",
        f"/api/v1/players/{client.username}/stats",
        f"/api/v1/players/{client.username}/matches?opponent={NAME}",
        f"/api/v1/players/{NAME}/matches",
        f"/api/v1/players/{NAME}/stats",
    ]
    for status in ("waiting", "active", "finished", "abandoned"):
        urls.append(f"{TABLES}?status={status}")
    for game_id in game_ids:
        urls += [table_url(game_id), f"/api/v1/matches/{game_id}"]
        game = Game.objects.get(pk=game_id)
        if game.version:
            urls += [game_url(game_id, s) for s in ("", "/events", "/audit", "/replay")]
            urls += [game_url(game_id, f"/replay?at={at}") for at in (1, 2, game.version)]
    for url in urls:
        response = client.get(url)
        assert response.status_code < 500, (url, response.content)
        text = response.content.decode().lower()
        for name in names:
            assert name.lower() not in text, (url, text[:2000])
    return urls


def test_deletion_leaves_nothing_personal_and_keeps_the_games_whole(settings):
    settings.TONGITS_NAME_CACHE_SECONDS = 60.0
    zelda, bob, cara = register(NAME, EMAIL), register("bob"), register("cara")
    finished = open_table(zelda, [bob, cara])
    play_on([zelda, bob, cara], finished)
    settle(finished)
    other = open_table(bob, [cara, zelda])
    play_on([bob, cara, zelda], other)
    settle(other)
    running = open_table(cara, [zelda, bob])
    play_on([cara, zelda, bob], running, moves=6)
    open_seats = [{"kind": "user"}, {"kind": "open"}, {"kind": "open"}]
    response = zelda.post(TABLES, {"rules": SHORT, "seats": open_seats}, "json")
    waiting_mine = response.json()["id"]
    seats_with_her = [{"kind": "user"}, {"kind": "user", "username": NAME}, {"kind": "open"}]
    response = bob.post(TABLES, {"rules": SHORT, "seats": seats_with_her}, "json")
    waiting_bobs = response.json()["id"]
    games = [finished, other, running, waiting_mine, waiting_bobs]
    # Before: the scan finds the name (so it can find it), e.g. in bob's history.
    with pytest.raises(AssertionError):
        scan(bob, games, (NAME,))
    zelda_id = User.objects.get(username=NAME).pk
    assert_error(
        zelda.delete("/api/v1/me", {"password": "not-my-password"}, "json"), 400, "wrong_password"
    )

    response = zelda.delete("/api/v1/me", {"password": DEFAULT_PASSWORD}, "json")
    assert response.status_code == 204, response.content

    # The row: anonymised, nothing personal; sessions gone; zelda's token dead.
    gone = User.objects.get(pk=zelda_id)
    assert NAME not in gone.username and gone.email == "" and not gone.has_usable_password()
    assert not gone.is_active and gone.deleted_at is not None
    assert not Session.objects.filter(user_id=zelda_id).exists()
    assert_error(zelda.get("/api/v1/me"), 401, "authentication_failed")
    assert_error(
        APIClient().post(
            "/api/v1/auth/token", {"username": NAME, "password": DEFAULT_PASSWORD}, "json"
        ),
        401,
        "invalid_credentials",
    )
    # The waiting tables: her seats are open again (her own table, with nobody left: abandoned).
    assert Game.objects.get(pk=waiting_mine).status == Game.Status.ABANDONED
    detail = bob.get(table_url(waiting_bobs)).json()
    assert [s["kind"] for s in detail["seats"]] == ["user", "open", "open"]
    assert not IdempotencyRecord.objects.filter(user_id=zelda_id).exists()

    # The running match counts her as resigned (her seat played by the server), to its end.
    assert Event.objects.filter(game_id=running, type="resigned").exists()
    play_on([cara, None, bob], running)
    settle(running)

    # History: her rows left, opponents keep the matches with "deleted player".
    assert not PlayerMatch.objects.filter(player_id=zelda_id).exists()
    assert not PlayerStats.objects.filter(player_id=zelda_id).exists()
    bobs = bob.get("/api/v1/players/bob/matches").json()["results"]
    assert {r["game_id"] for r in bobs} == {finished, other, running}
    for row in bobs:
        assert "deleted player" in [o["username"] for o in row["opponents"]]
    seats = bob.get(f"/api/v1/matches/{finished}").json()["seats"]
    assert [s["username"] for s in seats] == ["deleted player", "bob", "cara"]
    view = bob.get(game_url(finished)).json()
    assert [s["username"] for s in view["seats"]] == ["deleted player", "bob", "cara"]
    assert_error(bob.get(f"/api/v1/players/{NAME}/stats"), 404, "not_found")

    # Nothing a former opponent can read names her, or shows her address.
    for reader in (bob, cara):
        assert len(scan(reader, games, (NAME, EMAIL))) > 30

    # The events are untouched: chains verify, audits pass, the projections equal a rebuild.
    for game_id in (finished, other, running):
        audit = bob.get(game_url(game_id, "/audit")).json()
        assert audit["chain_ok"] and audit["commitments_ok"] and audit["snapshot_ok"], audit
    call_command("verify_events")  # every game, tables never started included
    live = snapshot()
    call_command("rebuild_projections", "--no-progress")
    assert snapshot() == live
    assert MatchRecord.objects.count() == 3


def test_deletion_needs_the_password_and_auth(api_client, auth_client):
    assert_error(
        api_client.delete("/api/v1/me", {"password": "x"}, "json"), 401, "not_authenticated"
    )
    assert_error(auth_client.delete("/api/v1/me", {}, "json"), 400, "wrong_password")
    assert_error(auth_client.delete("/api/v1/me", {"password": 7}, "json"), 400, "invalid")
    assert auth_client.get("/api/v1/me").status_code == 200


def test_deleting_an_account_with_history_re_rates_as_a_rebuild_would(user_factory):
    """Ratings of the opponents after the deletion are those a rebuild computes (her seat at the
    starting rating), not the ones computed while she was there."""
    ann, bea = user_factory(), user_factory()
    bots = [{"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "normal"}]
    first = play_with_bots(ann, [{"kind": "user"}, *bots], SHORT, seed=11)
    second = play_with_bots(bea, [bots[0], {"kind": "user"}, bots[1]], SHORT, seed=12)
    third = play_with_bots(ann, [bots[1], bots[0], {"kind": "user"}], SHORT, seed=13)
    for game_id in (first, second, third):
        settle(game_id)
    before = {s.player_id: s.mu for s in PlayerStats.objects.all()}
    services.account_delete(user=ann, password=DEFAULT_PASSWORD)
    after = {s.player_id: s.mu for s in PlayerStats.objects.all()}
    assert ann.pk not in after
    assert after != {k: v for k, v in before.items() if k != ann.pk}  # the bots were re-rated
    live = snapshot()
    call_command("rebuild_projections", "--no-progress")
    assert snapshot() == live


def test_old_events_with_names_are_upcast_on_read(monkeypatch, settings):
    """A game started before names left the log (its game_started stores usernames): reads
    drop the stored names, the chain still verifies, and a deletion leaves no name behind."""
    settings.TONGITS_NAME_CACHE_SECONDS = 0.0
    from games import lobby
    from games.rules import new_game

    def old_new_game(rules, seats, rng, **kwargs):  # what lobby wrote before: id and name
        named = [
            {**s, "username": User.objects.get(pk=s["user_id"]).username}
            if s.get("kind") == "user"
            else s
            for s in seats
        ]
        return new_game(rules, named, rng, **kwargs)

    monkeypatch.setattr(lobby, "new_game", old_new_game)
    zelda, bob, cara = register(NAME, EMAIL), register("bob"), register("cara")
    game_id = open_table(bob, [zelda, cara])
    monkeypatch.undo()
    stored = Event.objects.get(game_id=game_id, seq=1).data
    assert NAME in [s.get("username") for s in stored["seats"]]  # the old shape, in the log
    shown = bob.get(game_url(game_id, "/events")).json()["events"][0]["data"]["seats"]
    assert all("username" not in s for s in shown)
    assert [s["username"] for s in bob.get(game_url(game_id)).json()["seats"]] == [
        "bob",
        NAME,
        "cara",
    ]
    assert zelda.delete("/api/v1/me", {"password": DEFAULT_PASSWORD}, "json").status_code == 204
    for url in (game_url(game_id), game_url(game_id, "/events"), game_url(game_id, "/replay")):
        assert NAME not in bob.get(url).content.decode()
    assert Event.objects.get(game_id=game_id, seq=1).data == stored  # nothing rewritten
    assert bob.get(game_url(game_id, "/audit")).json()["chain_ok"]
