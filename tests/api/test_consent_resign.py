"""Consent and leaving: invitations for named seats, rated and casual tables, resigning a
started match, and the sweeper's abort of idle untimed tables. Resign and abort are events, and
the projections agree with a rebuild."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from accounts.models import MatchRecord, PlayerMatch, PlayerStats
from games import lobby, play, scheduling, selectors, store
from games.models import Event, Game, Seat
from games.rules.rating import DEFAULT_RATING
from tests.accounts.support import settle
from tests.accounts.test_projections import snapshot
from tests.api.games_support import TABLES, assert_error, game_url, table_url

pytestmark = pytest.mark.django_db

EASY = {"kind": "bot", "level": "easy"}
SHORT = {"preset": "standard", "wins_to_match": 1}


@pytest.fixture
def clients(auth_client_factory):
    return [auth_client_factory() for _ in range(3)]


def invite(owner, *others, **extra) -> str:
    seats = [{"kind": "user"}] + [{"kind": "user", "username": o.user.username} for o in others]
    seats += [EASY] * (3 - len(seats))
    response = owner.post(TABLES, {"seats": seats, **extra}, "json")
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "waiting"
    return response.json()["id"]


def answer(client, game_id: str, what: str):
    return client.post(table_url(game_id, "/invitation"), {"answer": what}, "json")


def my_games(client) -> dict:
    return {g["game_id"]: g for g in client.get("/api/v1/me/games").json()["games"]}


def test_an_invited_user_who_has_not_accepted_blocks_start(clients):
    ann, ben, cy = clients
    game_id = invite(ann, ben, cy)
    seats = ann.get(table_url(game_id)).json()["seats"]
    assert [s.get("invitation") for s in seats] == [None, "pending", "pending"]
    listed = my_games(ben)[game_id]
    assert listed["invitation"] == "pending" and listed["invitation_expires_at"]
    assert_error(ann.post(table_url(game_id, "/start")), 409, "invitations_pending")
    assert answer(ben, game_id, "accept").status_code == 200
    assert_error(ben.post(table_url(game_id, "/start")), 409, "invitations_pending")
    assert answer(cy, game_id, "accept").json()["seats"][2]["invitation"] == "accepted"
    assert_error(answer(cy, game_id, "accept"), 409, "no_invitation")
    started = ann.post(table_url(game_id, "/start"))
    assert started.status_code == 200 and started.json()["status"] == "active"
    assert Event.objects.filter(game_id=game_id).first().data["rated"] is True


def test_a_declined_invitation_frees_the_seat(clients, auth_client_factory):
    ann, ben, cy = clients
    game_id = invite(ann, ben)
    assert_error(answer(cy, game_id, "decline"), 409, "no_invitation")  # not invited
    declined = answer(ben, game_id, "decline")
    assert declined.status_code == 200
    assert declined.json()["seats"][1] == {"seat": 1, "kind": "open"}
    assert game_id not in my_games(ben)
    assert_error(ann.post(table_url(game_id, "/start")), 409, "table_not_full")
    assert cy.post(table_url(game_id, "/join")).status_code == 200
    assert ann.post(table_url(game_id, "/start")).status_code == 200


def test_an_invitation_lapses(clients, settings):
    ann, ben, _ = clients
    game_id = invite(ann, ben)
    Seat.objects.filter(game_id=game_id, user=ben.user).update(
        invited_at=timezone.now() - timedelta(seconds=settings.TONGITS_INVITATION_SECONDS + 1)
    )
    assert game_id not in my_games(ben)
    assert_error(answer(ben, game_id, "accept"), 409, "no_invitation")
    assert ann.get(table_url(game_id)).json()["seats"][1]["kind"] == "open"


def test_rated_tables_need_slow_turns_or_none(clients):
    ann = clients[0]
    quick = [{"kind": "user"}, EASY, EASY]
    fast = {"preset": "standard", "turn_seconds": 5}
    assert_error(ann.post(TABLES, {"rules": fast, "seats": quick}, "json"), 400, "invalid_rules")
    casual = ann.post(TABLES, {"rules": fast, "seats": quick, "rated": False}, "json")
    assert casual.status_code == 201 and casual.json()["rated"] is False
    untimed = {"preset": "standard", "turn_seconds": 0}
    assert ann.post(TABLES, {"rules": untimed, "seats": quick}, "json").json()["rated"] is True


def play_out(game_id) -> None:
    """Bots (and the server, for resigned seats) play until the match ends."""
    for _ in range(5000):
        head = store.read(game_id)
        if head.status == Game.Status.FINISHED:
            return
        outcome = play.play_bot_turn(game_id=game_id, expected_version=head.version)
        assert outcome == play.Outcome.DONE, (outcome, head.state().turn)
    raise AssertionError("the match does not end")


def test_a_casual_match_leaves_ratings_unchanged(user_factory):
    ann = user_factory()
    table = lobby.table_create(user=ann, rules=SHORT, seats=[EASY, EASY, EASY], rated=False)
    play_out(table.pk)
    settle(table.pk)
    assert MatchRecord.objects.get(pk=table.pk).rated is False
    assert PlayerMatch.objects.count() == 0  # a bot level playing itself has no record
    casual = lobby.table_create(
        user=ann, rules=SHORT, seats=[{"kind": "user"}, EASY, {"kind": "bot"}], rated=False
    )
    play.resign(casual.pk, ann.pk)  # the server plays Ann's seat to the end
    play_out(casual.pk)
    settle(casual.pk)
    row = PlayerMatch.objects.get(match_id=casual.pk, player=ann)
    assert (row.mu_before, row.sigma_before) == (row.mu, row.sigma) == DEFAULT_RATING
    assert {(s.mu, s.sigma) for s in PlayerStats.objects.all()} == {DEFAULT_RATING}
    before = snapshot()
    call_command("rebuild_projections", "--no-progress")
    assert snapshot() == before


def test_resign_is_an_event_the_resigner_is_last_and_the_rebuild_agrees(auth_client):
    seats = [{"kind": "user"}, EASY, {"kind": "bot", "level": "normal"}]
    game_id = auth_client.post(TABLES, {"rules": SHORT, "seats": seats}, "json").json()["id"]
    response = auth_client.post(game_url(game_id, "/resign"))
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["events"][0]["type"] == "resigned" and body["events"][0]["data"]["seat"] == 0
    assert_error(auth_client.post(game_url(game_id, "/resign")), 409, "already_resigned")
    play_out(game_id)
    # Nobody waited for a deadline: the seat never rests on the resigner's turn.
    resigned_at = Event.objects.get(game_id=game_id, type="resigned").seq
    assert not Event.objects.filter(game_id=game_id, type="turn_timed_out").exists()
    assert Event.objects.filter(game_id=game_id, seq__gt=resigned_at, actor="system").exists()
    assert store.verify_chain(game_id) is None
    # The legality audit knows resign and the server's moves for a resigned seat.
    audit = selectors.soundness(game_id, finished=True)
    assert audit["failure"] is None and audit["legal_ok"] and audit["seal_ok"], audit
    settle(game_id)
    row = PlayerMatch.objects.get(match_id=game_id, player=auth_client.user)
    assert row.resigned is True and row.placement == 3 and row.result == "loss"
    assert sorted(MatchRecord.objects.get(pk=game_id).placements)[-1] == 3
    history = auth_client.get(f"/api/v1/players/{auth_client.user.username}/matches").json()
    assert history["results"][0]["resigned"] is True
    before = snapshot()
    call_command("rebuild_projections", "--no-progress")
    assert snapshot() == before
    assert_error(auth_client.post(game_url(game_id, "/resign")), 409, "not_active")


def test_resign_refusals(clients):
    ann, ben, _ = clients
    waiting = invite(ann, ben)
    assert_error(ann.post(game_url(waiting, "/resign")), 409, "not_started")
    started = ann.post(TABLES, {"seats": [{"kind": "user"}, EASY, EASY]}, "json").json()["id"]
    assert_error(ben.post(game_url(started, "/resign")), 403, "not_a_player")


def test_the_sweeper_aborts_an_idle_untimed_table(auth_client, settings):
    untimed = {"preset": "standard", "turn_seconds": 0}
    seats = [{"kind": "user"}, EASY, EASY]
    game_id = auth_client.post(TABLES, {"rules": untimed, "seats": seats}, "json").json()["id"]
    for _ in range(10):  # let the bots move until it is the person's turn
        head = store.read(game_id)
        if play.play_bot_turn(game_id=game_id, expected_version=head.version) != "done":
            break
    game = Game.objects.get(pk=game_id)
    assert game.awaiting == Game.Awaiting.USER
    old = timezone.now() - timedelta(seconds=settings.TONGITS_ABORT_IDLE_SECONDS + 60)
    Game.objects.filter(pk=game_id).update(updated_at=old)
    assert scheduling.idle_untimed(before=timezone.now() - timedelta(days=7), limit=10) == [
        (game.pk, game.version)
    ]
    assert scheduling.sweep()[scheduling.ABORT_IDLE] == 1  # queued to the task, by name
    assert play.abort_idle(game_id=game_id, expected_version=game.version) == "done"
    game.refresh_from_db()
    assert game.status == Game.Status.ABORTED and game.due_at is None
    last = Event.objects.filter(game_id=game_id).order_by("-seq").first()
    assert (last.type, last.actor, last.data) == (
        "aborted",
        "system",
        {"type": "aborted", "reason": "idle"},
    )
    assert store.verify_chain(game_id) is None
    audit = selectors.soundness(game.pk, finished=False)
    assert audit["failure"] is None and audit["legal_ok"], audit
    assert not MatchRecord.objects.filter(pk=game_id).exists()
    call_command("rebuild_projections", "--no-progress")
    assert not MatchRecord.objects.filter(pk=game_id).exists()
    assert scheduling.idle_untimed(before=timezone.now(), limit=10) == []
    assert auth_client.get(table_url(game_id)).json()["status"] == "aborted"
    # A timed table is never aborted for idling (its deadlines move it on).
    assert play.abort_idle(game_id=game_id, expected_version=game.version + 1) == "moved_on"
