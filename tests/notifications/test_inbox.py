"""The inbox: what the projector writes from a played match and the chips ledger, what the lobby
and the accounts write with their causes, the rebuild check, and the API."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts import services as accounts
from accounts.tasks import settle_match_now
from games import archive, lobby, store
from games.models import Event
from games.projection import turn_key
from games.rules import evolve
from notifications import inbox, rebuild
from notifications.models import Cursor, Kind, Notification, WebhookMessage
from notifications.projector import Projector
from tests.api.games_support import assert_error, start_game
from tests.chips.support import play_to_the_end, quick_table

pytestmark = pytest.mark.django_db

RULES = {"preset": "standard", "wins_to_match": 1, "turn_seconds": 0}
INBOX = "/api/v1/me/notifications"


@pytest.fixture(autouse=True)
def _fast_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _kinds(user) -> list[str]:
    return sorted(Notification.objects.filter(user=user).values_list("kind", flat=True))


def _turn_starts(game_id: str) -> list[tuple[int, int]]:
    """(version, seat) of every write that began a new turn, from the stored rows alone."""
    rows = list(Event.objects.filter(game_id=game_id).order_by("seq"))
    starts, state = [], None
    i = 0
    while i < len(rows):
        before = state
        at = rows[i].recorded_at
        while i < len(rows) and rows[i].recorded_at == at:
            state = evolve(state, rows[i].data)
            i += 1
        key = turn_key(state)
        if key is not None and key != turn_key(before):
            starts.append((state.version, state.turn))
    return starts


def test_a_played_match_gives_each_player_their_turns_and_the_end_once(auth_client_factory):
    clients = [auth_client_factory() for _ in range(3)]
    game_id = start_game(clients, rules=RULES)
    users = {i: c.user for i, c in enumerate(clients)}
    play_to_the_end(game_id, users, seed=3)

    found = Projector().run_all()
    turns = Notification.objects.filter(kind=Kind.YOUR_TURN, game_id=game_id)
    expected = _turn_starts(game_id)
    assert expected  # the deal is the server's: a round may be short, never empty
    got = sorted((n.data["version"], n.data["seat"], n.user_id) for n in turns)
    assert got == sorted((v, s, users[s].pk) for v, s in expected)
    for note in turns:  # the state at that version agrees: that seat is to act
        state = store.fold_from_zero(game_id, upto=note.data["version"])
        assert state.turn == note.data["seat"] and state.in_round
        assert note.created_at == Event.objects.get(game_id=game_id, seq=state.version).recorded_at
    over = Notification.objects.filter(kind=Kind.MATCH_OVER, game_id=game_id)
    assert sorted(n.user_id for n in over) == sorted(u.pk for u in users.values())
    winner = store.load(game_id).match_winner
    assert [n.data["won"] for n in over.order_by("data__seat")] == [s == winner for s in range(3)]
    assert (
        WebhookMessage.objects.filter(kind="match.finished", cause__contains=game_id).count() == 1
    )
    assert len(found.notifications) == turns.count() + 3

    # Read again from the start: the cause keys write nothing twice.
    Cursor.objects.all().delete()
    assert Projector().run_all().notifications == []
    assert rebuild.check().same

    # Packed into its archive, the match's rows are gone from the log the projector reads: what
    # they caused stays in the inbox, and the rebuild's check leaves it out of the comparison.
    settle_match_now(game_id)
    Projector().run_all()
    kept = Notification.objects.filter(game_id=game_id).count()
    assert archive.compact_game(game_id) == "archived"
    assert rebuild.check().same
    assert Notification.objects.filter(game_id=game_id).count() == kept


def test_a_run_costs_the_same_statements_however_many_turns_it_reads(auth_client_factory):
    """A busy node's notifier reads many moves a run: its statements must not grow with them
    (one insert for the run's notifications, one read of their users' devices, one notice);
    only a match's end adds its webhook message."""

    def one_match(seed: int) -> None:
        clients = [auth_client_factory() for _ in range(3)]
        game_id = start_game(clients, rules=RULES)
        play_to_the_end(game_id, {i: c.user for i, c in enumerate(clients)}, seed=seed)

    def statements() -> tuple[int, int]:
        Notification.objects.all().delete()
        WebhookMessage.objects.all().delete()
        Cursor.objects.all().delete()
        with CaptureQueriesContext(connection) as run:
            found = Projector().run_all()
        return len(run.captured_queries), len(found.notifications)

    one_match(3)
    once, told_once = statements()
    one_match(4)
    twice, told_twice = statements()
    assert told_twice >= told_once + 5
    assert twice <= once + 2  # the second match's webhook message (and its endpoints)


def test_short_timed_turns_are_not_announced_and_long_ones_are(auth_client_factory, settings):
    settings.TONGITS_YOUR_TURN_MIN_SECONDS = 60
    short = start_game(
        [auth_client_factory() for _ in range(3)], rules={**RULES, "turn_seconds": 20}
    )
    long = start_game(
        [auth_client_factory() for _ in range(3)], rules={**RULES, "turn_seconds": 90}
    )
    Projector().run_all()
    assert not Notification.objects.filter(kind=Kind.YOUR_TURN, game_id=short).exists()
    assert Notification.objects.filter(kind=Kind.YOUR_TURN, game_id=long).count() == 1


def test_a_projector_read_in_small_batches_and_restarted_writes_the_same_inbox(
    auth_client_factory, monkeypatch
):
    clients = [auth_client_factory() for _ in range(3)]
    game_id = start_game(clients, rules=RULES)
    play_to_the_end(game_id, {i: c.user for i, c in enumerate(clients)}, seed=5)
    Projector().run_all()
    whole = rebuild._projected()

    Notification.objects.filter(kind__in=rebuild.PROJECTED).delete()
    Cursor.objects.all().delete()
    monkeypatch.setattr("notifications.projector.BATCH", 7)
    for _ in range(4):  # a fresh projector (a restart) every few batches, from the saved cursor
        projector = Projector()
        for _ in range(3):
            projector.run()
    Projector().run_all()
    assert rebuild._projected() == whole


def test_invitations_and_their_answers_are_written_with_them(auth_client_factory):
    owner, a, b = (auth_client_factory() for _ in range(3))
    seats = [{"kind": "user"}, {"kind": "user", "username": a.user.username}, {"kind": "open"}]
    seats[2] = {"kind": "user", "username": b.user.username}
    game = lobby.table_create(user=owner.user, rules=RULES, seats=seats)
    assert _kinds(a.user) == [Kind.INVITED] and _kinds(b.user) == [Kind.INVITED]
    invite = Notification.objects.get(user=a.user)
    assert invite.data == {"game_id": str(game.pk), "seat": 1, "by_user_id": owner.user.pk}
    lobby.table_respond(game_id=game.pk, user=a.user, accept=True)
    lobby.table_respond(game_id=game.pk, user=b.user, accept=False)
    answers = Notification.objects.filter(user=owner.user, kind=Kind.INVITATION_ANSWERED)
    assert sorted((n.data["user_id"], n.data["accepted"]) for n in answers) == sorted(
        [(a.user.pk, True), (b.user.pk, False)]
    )


def test_a_sign_in_from_a_new_device_is_news_and_the_same_device_is_not(user_factory):
    user = user_factory()
    accounts.session_create(user=user, device="phone")  # the first: no news
    assert _kinds(user) == []
    accounts.session_create(user=user, device="phone")
    assert _kinds(user) == []
    session, _ = accounts.session_create(user=user, device="tablet")
    note = Notification.objects.get(user=user)
    assert note.kind == Kind.NEW_SIGN_IN
    assert note.data == {"session_id": str(session.pk), "device": "tablet"}


def test_chips_paid_out_are_news_for_the_wallets_they_moved(user_factory):
    user = user_factory()
    game = quick_table(user, buy_in=100)
    play_to_the_end(game.pk, {0: user}, seed=1)
    assert settle_match_now(str(game.pk)) == "settled"
    Projector().run_all()
    paid = Notification.objects.filter(user=user, kind=Kind.CHIPS_SETTLED)
    for note in paid:
        assert note.data["game_id"] == str(game.pk) and note.data["cause"] == "payout"
        assert isinstance(note.data["amount"], int) and note.data["amount"] != 0
    assert WebhookMessage.objects.filter(kind="chips.settled").count() == 1
    assert Notification.objects.filter(user=user, kind=Kind.MATCH_OVER).count() == 1


def test_a_deleted_account_loses_its_inbox_and_studios_hear_of_it(user_factory):
    user = user_factory(password="pw-12345-long")
    accounts.session_create(user=user, device="a")
    accounts.session_create(user=user, device="b")
    assert _kinds(user) == [Kind.NEW_SIGN_IN]
    accounts.account_delete(user=user, password="pw-12345-long")
    assert _kinds(user) == []
    message = WebhookMessage.objects.get(kind="account.deleted")
    assert message.payload["data"] == {"user_id": user.pk}


# ---------------------------------------------------------------- the API


def _add(user, n: int) -> list[Notification]:
    notes = []
    for i in range(n):
        notes += inbox.add(
            [user.pk],
            Kind.YOUR_TURN,
            cause=f"test:{i}",
            game_id=None,
            data={"i": i},
            at=timezone.now(),
        )
    return notes


def test_the_inbox_lists_newest_first_by_cursor_with_the_unread_count(auth_client, user_factory):
    _add(auth_client.user, 25)
    _add(user_factory(), 3)  # somebody else's
    first = auth_client.get(INBOX)
    assert first.status_code == 200
    body = first.json()
    assert body["unread"] == 25 and len(body["results"]) == 20
    ids = [n["id"] for n in body["results"]]
    assert ids == sorted(ids, reverse=True)
    assert {n["kind"] for n in body["results"]} == {"your_turn"}
    second = auth_client.get(body["next"]).json()
    assert len(second["results"]) == 5 and second["next"] is None
    assert set(ids).isdisjoint(n["id"] for n in second["results"])

    marked = auth_client.post(f"{INBOX}/read", {"ids": ids[:3]}, "json")
    assert marked.status_code == 200 and marked.json() == {"marked": 3, "unread": 22}
    unread = auth_client.get(INBOX, {"unread": "true", "page_size": 100}).json()
    assert len(unread["results"]) == 22 and not any(n["read"] for n in unread["results"])
    assert auth_client.post(f"{INBOX}/read", {"all": True}, "json").json() == {
        "marked": 22,
        "unread": 0,
    }


def test_the_inbox_refuses_bad_input_and_strangers(auth_client, api_client):
    assert_error(api_client.get(INBOX), 401, "not_authenticated")
    assert_error(auth_client.get(INBOX, {"cursor": "nonsense"}), 400, "invalid")
    assert_error(auth_client.post(f"{INBOX}/read", {}, "json"), 400, "invalid")
    assert_error(
        auth_client.post(f"{INBOX}/read", {"ids": [1], "all": True}, "json"), 400, "invalid"
    )
    assert_error(auth_client.post(f"{INBOX}/read", {"all": 1}, "json"), 400, "invalid")
    other = _add(auth_client.user.__class__.objects.create_user(username="zz-other"), 1)
    body = auth_client.post(f"{INBOX}/read", {"ids": [other[0].id]}, "json").json()
    assert body["marked"] == 0  # not mine: nothing changes
    assert Notification.objects.get(pk=other[0].id).read_at is None


def test_settings_the_notifications_cannot_use_stop_the_start(settings):
    from notifications.checks import notification_settings

    assert notification_settings() == []
    settings.TONGITS_WEBPUSH_VAPID_PRIVATE_KEY = "not a key"
    settings.TONGITS_WEBHOOKS = [{"url": "https://studio.example/hooks", "secret": "nope"}]
    assert [e.id for e in notification_settings()] == ["notifications.E001", "notifications.E002"]


def test_a_repair_adds_what_is_missing_without_pushing_it(auth_client_factory, settings):
    from notifications.models import Device, PushDelivery

    settings.TONGITS_FCM_CREDENTIALS = "/etc/tongits/service-account.json"  # FCM is served

    clients = [auth_client_factory() for _ in range(3)]
    for client in clients:
        Device.objects.create(
            user=client.user, session=client.auth_session, kind="fcm", token=f"t{client.user.pk}"
        )
    game_id = start_game(clients, rules=RULES)
    Projector().run_all()
    pushed = PushDelivery.objects.count()
    assert pushed > 0
    Notification.objects.filter(kind=Kind.YOUR_TURN, game_id=game_id).delete()
    assert not rebuild.check().same
    assert rebuild.repair() > 0
    assert rebuild.check().same
    assert PushDelivery.objects.count() < pushed  # the old turns came back, unpushed
