"""Cases: detection's flags open one (or add to the open one, once per flag), with its evidence
and the accounts' links; held winnings stay out of reach until a decision releases or
confiscates them; compensation is posted once; an appeal reopens the case."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import LoginClaim
from chips import services as chips
from chips.errors import InsufficientChips
from chips.models import Entry
from fairplay.models import Case, CaseEvent, SignInAddress, Suspension
from tests.chips.support import assert_sound, available, quick_table
from tests.conftest import DEFAULT_PASSWORD
from tests.fairplay.support import dumped_match, raise_flag, staff_client

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def grants(settings):
    settings.TONGITS_SIGNUP_GRANT = 1000
    settings.TONGITS_DAILY_BONUS = 200


def test_a_flag_opens_a_case_and_the_same_flag_twice_adds_nothing(user_factory):
    main, feeder = user_factory(), user_factory()
    flag = raise_flag("chip_dumping", (main.pk, feeder.pk), games=["g1"])
    case = Case.objects.get()
    assert (case.kind, case.status, case.score, case.hold) == ("chip_dumping", "open", 5.0, True)
    assert list(case.members.values_list("user_id", flat=True)) == [main.pk, feeder.pk]
    assert list(case.events.values_list("type", flat=True)) == ["opened", "flag"]
    from fairplay.detection.signals import flag_raised

    flag_raised.send(sender=type(flag), flag=flag)  # the same flag again
    assert Case.objects.count() == 1 and CaseEvent.objects.count() == 2
    raise_flag("chip_dumping", (main.pk, feeder.pk), score=7.5)  # new evidence: same case
    case.refresh_from_db()
    assert Case.objects.count() == 1 and case.score == 7.5
    assert list(case.events.values_list("type", flat=True)) == ["opened", "flag", "flag"]
    assert chips.holding(main.pk) and not chips.holding(feeder.pk)  # the beneficiary's
    raise_flag("collusion", (main.pk, feeder.pk))  # another kind: a case of its own
    assert Case.objects.count() == 2
    assert chips.holding(feeder.pk)  # collusion holds both seats


def test_case_history_is_append_only(user_factory):
    raise_flag("collusion", (user_factory().pk, user_factory().pk))
    event = CaseEvent.objects.first()
    for statement in (
        "UPDATE fairplay_caseevent SET reason = 'edited'",
        "DELETE FROM fairplay_caseevent",
    ):
        with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement)
    event.refresh_from_db()
    assert event.reason == ""


def test_held_winnings_cannot_be_bought_in_and_a_dismissal_releases_them(
    user_factory, auth_client_factory
):
    main, feeder, other = user_factory(), user_factory(), user_factory()
    raise_flag("chip_dumping", (main.pk, feeder.pk))
    game = dumped_match([main, feeder, other], buy_in=400)
    won = Entry.objects.get(key=f"payout:{game.pk}").data["paid"][0]
    assert won > 0
    held = Entry.objects.get(key=f"held_winnings:{game.pk}:{main.pk}")
    assert held.data == {"amount": won}
    # dumped_match may have needed a few matches: each win is held, each loss was paid.
    results = [
        entry.data["paid"][entry.data["seats"].index(main.pk)]
        for entry in Entry.objects.filter(cause=Entry.Cause.PAYOUT, data__seats__contains=[main.pk])
    ]
    wins, lost = sum(r for r in results if r > 0), sum(r for r in results if r < 0)
    assert chips.held_balance(main.pk) == wins
    assert available(main) == 1000 + lost  # the buy-ins back, the winnings held
    with pytest.raises(InsufficientChips):
        quick_table(main, 1000 + lost + won)  # what it won cannot be bought in with
    assert_sound()
    staff = staff_client(auth_client_factory, user_factory)
    case = Case.objects.get()
    answer = staff.post(
        f"/api/v1/staff/cases/{case.pk}/decision",
        {"decision": "dismiss", "reason": "a lucky streak"},
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    assert available(main) == 1000 + lost + wins and chips.held_balance(main.pk) == 0
    assert not chips.holding(main.pk)
    assert_sound()
    again = staff.post(
        f"/api/v1/staff/cases/{case.pk}/decision",
        {"decision": "dismiss", "reason": "twice"},
        format="json",
    )
    assert again.status_code == 409 and again.json()["code"] == "case_decided"


def test_confiscation_and_compensation_keep_the_ledger_zero_sum_and_post_once(
    user_factory, auth_client_factory
):
    main, feeder, victim = user_factory(), user_factory(), user_factory()
    raise_flag("chip_dumping", (main.pk, feeder.pk))
    game = dumped_match([main, feeder, victim], buy_in=300)
    won = chips.held_balance(main.pk)
    assert won > 0
    staff = staff_client(auth_client_factory, user_factory)
    case = Case.objects.get()
    body = {
        "decision": "suspend",
        "reason": "dumped chips from a feeder",
        "until": None,
        "confiscate": True,
        "compensate": [{"username": victim.username, "chips": 150}],
    }
    before = available(victim)
    answer = staff.post(f"/api/v1/staff/cases/{case.pk}/decision", body, format="json")
    assert answer.status_code == 201, answer.json()
    decided = answer.json()
    assert decided["by"] == staff.user.username and decided["reason"] == body["reason"]
    assert len(decided["data"]["suspensions"]) == 2  # both accounts of the case
    assert chips.held_balance(main.pk) == 0 and available(victim) == before + 150
    confiscated = Entry.objects.get(cause="confiscation")
    assert confiscated.data == {"amount": won} and confiscated.created_by_id == staff.user.pk
    compensation = Entry.objects.get(cause="compensation")
    assert compensation.key == f"compensation:{case.pk}:{victim.pk}"
    assert_sound()
    # Appealed, reopened, decided again with the same compensation: posted once.
    login = APIClient().post(
        "/api/v1/auth/token",
        {"username": main.username, "password": DEFAULT_PASSWORD},
        format="json",
    )
    appeal_key = login.json()["suspension"]["appeal_token"]
    player = APIClient()
    player.credentials(HTTP_AUTHORIZATION=f"Token {appeal_key}")
    appealed = player.post("/api/v1/me/appeals", {"text": "my brother played"}, format="json")
    assert appealed.status_code == 201, appealed.json()
    case.refresh_from_db()
    assert case.status == "reopened"
    body["decision"] = "warn"
    body["reason"] = "a warning is enough"
    again = staff.post(f"/api/v1/staff/cases/{case.pk}/decision", body, format="json")
    assert again.status_code == 201
    assert len(again.json()["data"]["lifted"]) == 2  # the case's suspensions lifted
    assert Entry.objects.filter(cause="compensation").count() == 1
    assert available(victim) == before + 150
    assert (
        APIClient()
        .post(
            "/api/v1/auth/token",
            {"username": main.username, "password": DEFAULT_PASSWORD},
            format="json",
        )
        .status_code
        == 200
    )
    # The player sees it all: the suspension lifted, its appeal, the warning, nothing held.
    mine = player.get("/api/v1/me/sanctions").json()
    assert mine["suspended"] is False and mine["held_chips"] == 0
    assert mine["suspensions"][0]["lifted_at"] is not None
    assert mine["suspensions"][0]["appeal"]["text"] == "my brother played"
    assert [w["reason"] for w in mine["warnings"]] == ["a warning is enough"]
    assert player.get("/api/v1/me").status_code == 200  # the appeal's key, a session again
    assert Entry.objects.filter(game_id=game.pk, cause="held_winnings").count() == 1
    assert_sound()


def test_an_appeal_reopens_the_case_once_and_only_while_suspended(
    user_factory, auth_client_factory
):
    player = user_factory()
    staff = staff_client(auth_client_factory, user_factory)
    client = auth_client_factory(player)
    nothing = client.post("/api/v1/me/appeals", {"text": "why?"}, format="json")
    assert nothing.status_code == 409 and nothing.json()["code"] == "not_suspended"
    until = timezone.now() + timedelta(days=2)
    staff.post(
        "/api/v1/staff/suspensions",
        {"username": player.username, "reason": "abuse", "until": until.isoformat()},
        format="json",
    )
    login = APIClient().post(
        "/api/v1/auth/token",
        {"username": player.username, "password": DEFAULT_PASSWORD},
        format="json",
    )
    appeal_client = APIClient()
    appeal_client.credentials(
        HTTP_AUTHORIZATION=f"Token {login.json()['suspension']['appeal_token']}"
    )
    made = appeal_client.post("/api/v1/me/appeals", {"text": "I did nothing"}, format="json")
    assert made.status_code == 201
    twice = appeal_client.post("/api/v1/me/appeals", {"text": "really"}, format="json")
    assert twice.status_code == 409 and twice.json()["code"] == "already_appealed"
    case = Case.objects.get()
    assert case.status == "reopened" and Suspension.objects.get().case_id is None
    assert list(case.events.values_list("type", flat=True)) == ["opened", "reopened"]
    queue = staff.get("/api/v1/staff/cases").json()
    assert [c["id"] for c in queue] == [case.pk] and queue[0]["accounts"] == [player.username]
    mine = appeal_client.get("/api/v1/me/sanctions").json()
    assert mine["suspensions"][0]["appeal"]["text"] == "I did nothing"


def test_a_case_shows_its_evidence_chip_flow_and_links(user_factory, auth_client_factory):
    main, feeder, other = user_factory(), user_factory(), user_factory()
    twin = user_factory()
    LoginClaim.objects.create(user=main, method="device", subject="d" * 64)
    LoginClaim.objects.create(user=twin, method="device", subject="d" * 64)
    now = timezone.now()
    SignInAddress.objects.create(user=feeder, address="203.0.113.9", at=now)
    SignInAddress.objects.create(user=main, address="203.0.113.9", at=now - timedelta(hours=2))
    SignInAddress.objects.create(user=other, address="203.0.113.9", at=now - timedelta(days=9))
    game = dumped_match([main, feeder, other], buy_in=200)
    raise_flag("chip_dumping", (main.pk, feeder.pk), games=[str(game.pk)])
    staff = staff_client(auth_client_factory, user_factory)
    case = Case.objects.get()
    queue = staff.get("/api/v1/staff/cases").json()
    assert queue[0]["accounts"] == [main.username, feeder.username]
    assert queue[0]["kind"] == "chip_dumping" and queue[0]["score"] == 5.0
    detail = staff.get(f"/api/v1/staff/cases/{case.pk}")
    assert detail.status_code == 200, detail.json()
    body = detail.json()
    # The flow holds every match the two played (dumped_match may need a few); this one's row.
    (paid,) = [row["paid"] for row in body["chip_flow"]["games"] if row["game"] == str(game.pk)]
    assert paid[main.username] > 0 and paid[feeder.username] < 0
    links = {(link["kind"], link["account"], link["other"]) for link in body["links"]}
    assert ("sign_in_identity", main.username, twin.username) in links
    assert ("address", main.username, feeder.username) in links
    assert ("address", feeder.username, other.username) not in links  # days apart
    export = body["exports"][0]
    assert export["game"] == str(game.pk) and export["revealed"] and export["seal"]
    assert body["events"][1]["data"]["evidence"]["signals"] == {"resignations": 5.0}
    missing = staff.get("/api/v1/staff/cases/999999")
    assert missing.status_code == 404 and missing.json()["code"] == "case_not_found"


def test_log_ins_record_the_clients_address(user_factory):
    user = user_factory()
    APIClient().post(
        "/api/v1/auth/token",
        {"username": user.username, "password": DEFAULT_PASSWORD},
        format="json",
        REMOTE_ADDR="198.51.100.4",
    )
    assert list(SignInAddress.objects.values_list("user_id", "address")) == [
        (user.pk, "198.51.100.4")
    ]


def test_verify_ledger_names_chips_moved_without_a_decided_case(user_factory):
    from chips import ledger

    user = user_factory()
    assert ledger.problems() == []
    posted = chips.compensate(
        user_id=user.pk, chips=10, cause_key="999:1", reason="x", staff_id=None
    )
    assert ledger.problems() == [
        f"entry {posted.entry_id} (compensation:999:1) names no case staff decided"
    ]


def test_a_game_the_evidence_names_that_cannot_be_read_is_left_out(
    user_factory, auth_client_factory
):
    raise_flag("collusion", (user_factory().pk, user_factory().pk), games=["not-a-game"])
    staff = staff_client(auth_client_factory, user_factory)
    body = staff.get(f"/api/v1/staff/cases/{Case.objects.get().pk}").json()
    assert body["exports"] == [] and body["chip_flow"] == {"games": [], "totals": {}}


def test_the_admin_lists_cases_reports_suspensions_and_appeals(user_factory, client):
    admin = user_factory(is_staff=True, is_superuser=True)
    raise_flag("collusion", (user_factory().pk, user_factory().pk))
    client.force_login(admin)
    for page in ("case", "report", "suspension", "appeal"):
        assert client.get(f"/admin/fairplay/{page}/").status_code == 200, page
    case = Case.objects.get()
    change = client.get(f"/admin/fairplay/case/{case.pk}/change/")
    assert change.status_code == 200 and b"collusion" in change.content
    assert client.get("/admin/fairplay/case/add/").status_code == 403  # read-only


def test_a_tournament_prize_and_a_leaderboard_reward_under_review_are_held(user_factory):
    winner, runner_up, third = user_factory(), user_factory(), user_factory()
    tournament = uuid.uuid4()
    for number, user in enumerate((winner, runner_up, third), start=1):
        chips.tournament_enter(
            tournament_id=tournament, registration_id=number, user_id=user.pk, buy_in=100, fee=0
        )
    raise_flag("collusion", (winner.pk, third.pk))  # holds both; runner_up is not reviewed
    before = {user.pk: available(user) for user in (winner, runner_up)}

    for _ in range(2):  # a payment run again pays, and holds, each prize once
        chips.tournament_prize(tournament_id=tournament, place=1, user_id=winner.pk, amount=200)
        chips.tournament_prize(tournament_id=tournament, place=2, user_id=runner_up.pk, amount=100)
        chips.season_reward(season_key="room:2026-W49", user_id=winner.pk, amount=50, place=1)

    assert available(winner) == before[winner.pk]  # nothing of the prize or the reward to spend
    assert chips.held_balance(winner.pk) == 250
    with pytest.raises(InsufficientChips):
        quick_table(winner, before[winner.pk] + 1)
    assert available(runner_up) == before[runner_up.pk] + 100  # no hold: the wallet's
    assert chips.held_balance(runner_up.pk) == 0
    held = Entry.objects.filter(cause="held_winnings", user_id=winner.pk)
    assert sorted(held.values_list("key", flat=True)) == [
        f"held_winnings:season_reward:room:2026-W49:{winner.pk}",
        f"held_winnings:tournament_prize:{tournament}:1",
    ]
    assert chips.escrow_balance(tournament) == 0
    assert_sound()
