"""Tournaments over the API, played out in this process: create (staff), list, register and
unregister with their refusals, the start (sit-and-go when full, scheduled at its time, with
bots or cancelled below its minimum), cancel, and a whole event's prizes and ledger."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts import services as accounts
from chips.models import Entry
from games.models import Game, Seat
from notifications.models import Notification
from tests.chips.support import assert_sound
from tests.tasks.support import in_threads
from tests.tournaments.support import TOURNAMENTS, create, play_out, soon, url, wallet
from tournaments import services
from tournaments.admin import SeriesForm
from tournaments.models import Registration, Series, Tournament

pytestmark = pytest.mark.django_db
GRANT = 1000


@pytest.fixture(autouse=True)
def grant(settings) -> None:
    settings.TONGITS_SIGNUP_GRANT = GRANT


@pytest.fixture
def staff(auth_client_factory, user_factory):
    return auth_client_factory(user_factory(is_staff=True))


def test_staff_create_a_sit_and_go_and_players_list_it(staff, auth_client):
    body = {
        "name": "Friday 9",
        "rules": "standard",
        "wins_to_match": 1,
        "entrants": 9,
        "buy_in": 100,
        "fee": 10,
        "prizes": [50, 30, 20],
        "bots": False,
    }
    response = staff.post(TOURNAMENTS, body, "json")
    assert response.status_code == 201, response.content
    made = response.json()
    assert made["status"] == "registering" and made["format"] == "sit_and_go"
    assert made["entrants"] == 9 and made["stages"] == 2 and made["registered"] == 0
    assert len(made["seed_commitment"]) == 64 and made["seed"] is None
    assert made["rules"]["wins_to_match"] == 1

    listed = auth_client.get(TOURNAMENTS, {"status": "registering"}).json()["results"]
    assert [t["id"] for t in listed] == [made["id"]]
    assert auth_client.get(TOURNAMENTS, {"status": "running"}).json()["results"] == []
    refused = auth_client.get(TOURNAMENTS, {"status": "nope"})
    assert refused.status_code == 400 and refused.json()["code"] == "invalid_tournament"


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"entrants": 4}, "invalid_tournament"),
        ({"prizes": [50, 30]}, "invalid_tournament"),
        ({"prizes": [20, 30, 50]}, "invalid_tournament"),
        ({"rules": {"turn_seconds": 0}}, "invalid_tournament"),
        ({"rules": "no-such-preset"}, "invalid_rules"),
        ({"starts_at": "2001-01-01T00:00:00Z"}, "invalid_tournament"),
        ({"wins_to_match": 0}, "invalid"),
    ],
)
def test_a_tournament_that_cannot_be_is_refused_with_its_code(staff, change, code):
    body = {"name": "x", "wins_to_match": 1, "entrants": 3, **change}
    response = staff.post(TOURNAMENTS, body, "json")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == code
    assert not Tournament.objects.exists()


def test_only_staff_create_and_cancel(auth_client, staff):
    response = auth_client.post(TOURNAMENTS, {"name": "x", "wins_to_match": 1, "entrants": 3})
    assert response.status_code == 403
    made = create(staff.user)
    assert auth_client.post(url(made.pk, "/cancel")).status_code == 403


def test_register_and_unregister_move_the_buy_in_and_fee_once(staff, auth_client_factory, settings):
    made = create(staff.user, buy_in=100, fee=10)
    client = auth_client_factory()
    response = client.post(url(made.pk, "/registration"), {"seed": "lucky"}, "json")
    assert response.status_code == 201, response.content
    assert response.json()["registered"] == 1 and response.json()["registered_me"]
    assert response.json()["escrow"] == 100 and wallet(client.user) == GRANT - 110

    again = client.post(url(made.pk, "/registration"))
    assert again.status_code == 409 and again.json()["code"] == "already_registered"

    assert client.delete(url(made.pk, "/registration")).status_code == 204
    assert wallet(client.user) == GRANT
    gone = client.delete(url(made.pk, "/registration"))
    assert gone.status_code == 409 and gone.json()["code"] == "not_registered"
    assert client.post(url(made.pk, "/registration")).status_code == 201
    causes = list(Entry.objects.filter(user=client.user).values_list("cause", flat=True))
    assert causes.count("tournament_entry") == 2 and causes.count("tournament_refund") == 1
    assert_sound()


def test_registration_refusals(staff, auth_client_factory, user_factory, settings):
    made = create(staff.user, buy_in=GRANT, fee=1)
    poor = auth_client_factory()
    short = poor.post(url(made.pk, "/registration"))
    assert short.status_code == 409 and short.json()["code"] == "insufficient_chips"
    assert wallet(poor.user) == GRANT and not Registration.objects.exists()

    small = create(staff.user, starts_at=soon(), bots=True, minimum=1)
    first, second, third, fourth = (auth_client_factory() for _ in range(4))
    for client in (first, second, third):
        assert client.post(url(small.pk, "/registration")).status_code == 201
    full = fourth.post(url(small.pk, "/registration"))
    assert full.status_code == 409 and full.json()["code"] == "tournament_full"

    Tournament.objects.filter(pk=small.pk).update(starts_at=timezone.now() - timedelta(seconds=1))
    late = first.delete(url(small.pk, "/registration"))
    assert late.status_code == 409 and late.json()["code"] == "registration_closed"
    missing = fourth.get(url("00000000-0000-0000-0000-000000000000"))
    assert missing.status_code == 404


def test_a_sit_and_go_starts_when_full_and_pays_its_prizes(staff, auth_client_factory):
    made = create(staff.user, entrants=9, buy_in=100, fee=10, prizes=[50, 30, 20])
    clients = [auth_client_factory() for _ in range(9)]
    for client in clients[:8]:
        assert client.post(url(made.pk, "/registration")).status_code == 201
    assert services.advance(made.pk) == "nothing_to_do"  # not full yet
    assert clients[8].post(url(made.pk, "/registration")).status_code == 201
    before = sum(wallet(c.user) for c in clients)

    assert play_out(made) == Tournament.Status.FINISHED
    detail = clients[0].get(url(made.pk)).json()
    assert detail["status"] == "finished" and detail["seed"] and detail["escrow"] == 0
    assert [len(s["tables"]) for s in detail["stages_list"]] == [3, 1]
    assert all(t["game_status"] == "finished" for s in detail["stages_list"] for t in s["tables"])
    prizes = detail["prize_entries"]
    assert [(p["place"], p["amount"]) for p in prizes] == [(1, 450), (2, 270), (3, 180)]
    final = detail["stages_list"][1]["tables"][0]
    assert [p["entrant"] for p in prizes] == final["ranking"]
    assert [s["place"] for s in detail["standings"]] == [1, 2, 3] + [4] * 6
    # Every chip is where it should be: the pool paid out whole, the fees with the house.
    assert sum(wallet(c.user) for c in clients) == before + 900
    assert Entry.objects.filter(cause="tournament_prize").count() == 3
    assert services.advance(made.pk) == "nothing_to_do"
    assert Entry.objects.filter(cause="tournament_prize").count() == 3
    assert_sound()
    # Tables of a tournament are public, casual and played for nothing.
    games = Game.objects.filter(pk__in=[t["game_id"] for t in detail["stages_list"][0]["tables"]])
    assert {(g.visibility, g.rated, g.buy_in) for g in games} == {("public", False, 0)}


def test_a_scheduled_event_below_its_minimum_is_cancelled_and_refunded_once(
    staff, auth_client_factory
):
    made = create(
        staff.user, entrants=9, buy_in=100, fee=10, starts_at=soon(), bots=True, minimum=3
    )
    clients = [auth_client_factory() for _ in range(2)]
    for client in clients:
        assert client.post(url(made.pk, "/registration")).status_code == 201
    assert services.advance(made.pk) == "reminded"  # within TONGITS_TOURNAMENT_REMIND_SECONDS
    assert services.advance(made.pk) == "nothing_to_do"
    reminded = Notification.objects.filter(kind="tournament_starting")
    assert sorted(reminded.values_list("user_id", flat=True)) == sorted(c.user.pk for c in clients)
    inbox = clients[0].get("/api/v1/me/notifications").json()["results"]
    assert inbox[0]["title"] == "Tournament starting"
    later = made.starts_at + timedelta(seconds=1)
    assert services.advance(made.pk, now=later) == "cancelled"
    assert services.advance(made.pk, now=later) == "nothing_to_do"
    assert staff.post(url(made.pk, "/cancel")).status_code == 200  # again: nothing more
    made.refresh_from_db()
    assert made.status == "cancelled" and made.reason == "below_minimum"
    assert [wallet(c.user) for c in clients] == [GRANT, GRANT]
    assert Entry.objects.filter(cause="tournament_refund").count() == 2
    assert_sound()


def test_bots_fill_the_empty_seats_one_person_a_table(staff, auth_client_factory):
    made = create(staff.user, entrants=9, starts_at=soon(), bots=True, minimum=3)
    clients = [auth_client_factory() for _ in range(3)]
    for client in clients:
        assert client.post(url(made.pk, "/registration")).status_code == 201
    assert services.advance(made.pk, now=made.starts_at) == "started"
    made.refresh_from_db()
    kinds = [e["kind"] for e in made.manifest["entrants"]]
    assert kinds == ["user"] * 3 + ["bot"] * 6
    tables = list(made.tables.order_by("index"))
    assert len(tables) == 3
    for table in tables:
        seats = list(Seat.objects.filter(game_id=table.game_id).order_by("index"))
        assert [s.user_id is not None for s in seats] == [True, False, False]
        assert {s.bot_level for s in seats[1:]} == {"normal"}
        told = Notification.objects.get(kind="tournament_table", game_id=table.game_id)
        assert told.user_id == seats[0].user_id and told.data["stage"] == 1
    assert play_out(made) == Tournament.Status.FINISHED
    assert_sound()


def test_staff_cancel_refunds_every_buy_in_once(staff, auth_client_factory):
    made = create(staff.user, buy_in=50, fee=5)
    client = auth_client_factory()
    client.post(url(made.pk, "/registration"))
    first = staff.post(url(made.pk, "/cancel"))
    assert first.status_code == 200 and first.json()["status"] == "cancelled"
    assert staff.post(url(made.pk, "/cancel")).status_code == 200
    assert wallet(client.user) == GRANT
    assert Entry.objects.filter(cause="tournament_refund").count() == 1
    closed = client.post(url(made.pk, "/registration"))
    assert closed.status_code == 409 and closed.json()["code"] == "registration_closed"
    assert_sound()


@pytest.mark.django_db(transaction=True)
def test_registration_racing_the_start_either_plays_or_keeps_its_chips(staff, auth_client_factory):
    made = create(staff.user, entrants=3, buy_in=100, starts_at=soon(), bots=True, minimum=1)
    first, racer = auth_client_factory(), auth_client_factory()
    assert first.post(url(made.pk, "/registration")).status_code == 201
    due = made.starts_at + timedelta(seconds=1)
    for _ in range(3):
        answers = in_threads(
            lambda: services.advance(made.pk, now=due),
            lambda: racer.post(url(made.pk, "/registration")).status_code,
        )
        made.refresh_from_db()
        if made.status == Tournament.Status.RUNNING:
            break
    assert made.status == Tournament.Status.RUNNING, answers
    people = [e["user_id"] for e in made.manifest["entrants"] if e["kind"] == "user"]
    registered = Registration.objects.filter(tournament=made, user=racer.user, active=True)
    if racer.user.pk in people:
        assert registered.exists() and wallet(racer.user) == GRANT - 100
    else:
        assert not registered.exists() and wallet(racer.user) == GRANT
    assert made.manifest["pool"] == 100 * len(people)
    assert_sound()


def test_a_deleted_account_gives_its_place_back(staff, auth_client_factory, user_factory):
    made = create(staff.user, buy_in=100, fee=10)
    leaving = user_factory(password="a-long-passphrase-1")
    client = auth_client_factory(leaving)
    assert client.post(url(made.pk, "/registration")).status_code == 201
    accounts.account_delete(user=leaving, password="a-long-passphrase-1")
    assert not Registration.objects.filter(tournament=made, active=True).exists()
    assert Entry.objects.filter(cause="tournament_refund", user=leaving).count() == 1
    assert staff.get(url(made.pk)).json()["escrow"] == 0
    assert_sound()


def test_an_active_series_always_has_a_tournament_registering(staff, auth_client_factory):
    series = Series.objects.create(
        name="Room sit-and-go",
        rules="standard",
        size=3,
        buy_in=10,
        prizes=[100],
        created_by=staff.user,
    )
    assert services.replenish() == 1
    assert services.replenish() == 0  # one open at a time
    first = Tournament.objects.get(series=series)
    assert (first.status, first.size, first.buy_in, first.prizes) == ("registering", 3, 10, [100])
    for client in [auth_client_factory() for _ in range(3)]:
        assert client.post(url(first.pk, "/registration")).status_code == 201
    assert services.advance(first.pk) == "started"
    assert services.replenish() == 1  # the next one opens as this one starts
    assert Tournament.objects.filter(series=series, status="registering").count() == 1
    series.active = False
    series.save()
    Tournament.objects.filter(series=series, status="registering").update(status="cancelled")
    assert services.replenish() == 0


def test_the_admin_refuses_series_settings_that_make_no_tournament(staff):
    fields = {"name": "x", "rules": '"standard"', "wins_to_match": 1, "buy_in": 0, "fee": 0}
    bad = SeriesForm(data={**fields, "size": 4, "prizes": "[100]", "active": True})
    assert not bad.is_valid() and "3, 9 or 27" in str(bad.errors)
    good = SeriesForm(data={**fields, "size": 9, "prizes": "[60, 40]", "active": True})
    assert good.is_valid(), good.errors
    assert not Tournament.objects.exists()  # the check made none
