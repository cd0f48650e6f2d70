"""Tables over the API: create (presets, options, seats), list, join, leave, start."""

from __future__ import annotations

import uuid

import pytest

from games.models import Event, Game
from tests.api.games_support import (
    TABLES,
    assert_error,
    fast_password_hashing,  # noqa: F401 (a fixture)
    game_url,
    table_url,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]


@pytest.fixture
def clients(auth_client_factory):
    return [auth_client_factory() for _ in range(4)]


def create(client, **body):
    return client.post(TABLES, body, "json")


def test_create_defaults_to_standard_rules_with_the_creator_and_two_open_seats(clients):
    response = create(clients[0])
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "waiting" and body["version"] == 0
    assert body["created_by"] == clients[0].user.username
    assert body["rules"]["draw_call"] is True and body["rules"]["ace_high_runs"] is False
    assert body["seats"] == [
        {
            "seat": 0,
            "kind": "user",
            "user_id": clients[0].user.pk,
            "username": clients[0].user.username,
            "display_name": clients[0].user.username,
            "avatar": clients[0].user.avatar_key,
        },
        {"seat": 1, "kind": "open"},
        {"seat": 2, "kind": "open"},
    ]
    assert "snapshot" not in body


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        ("house", {"ace_high_runs": True, "draw_call": False, "stock_out_tie": "fewer_cards"}),
        ({"preset": "house", "turn_seconds": 30}, {"turn_seconds": 30, "burning": False}),
        ({"draw_call": False, "wins_to_match": 1}, {"draw_call": False, "wins_to_match": 1}),
        ({"turn_seconds": 0}, {"turn_seconds": 0, "secret_sets": True}),
        (
            "h19",
            {
                "draw_call_timing": "in_turn",
                "stock_out_tie": "last_drawer_loses",
                "draw_folded": 1,
                "first_dealer": "creator",
                "stake": 1,
                "turn_seconds": 15,
            },
        ),
        ({"preset": "h19", "stake": 10}, {"stake": 10, "burned_penalty": 3}),
        ({"stake": 100, "draw_folded": None}, {"stake": 100, "draw_folded": None}),
    ],
)
def test_create_with_a_preset_or_options(clients, rules, expected):
    response = create(clients[0], rules=rules)
    assert response.status_code == 201, response.content
    assert expected.items() <= response.json()["rules"].items()


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"rules": "poker"}, "invalid_rules"),
        ({"rules": {"preset": "poker"}}, "invalid"),
        ({"rules": {"jokers": True}}, "invalid"),
        ({"rules": {"turn_seconds": -1}}, "invalid"),
        ({"rules": {"turn_seconds": 10**9}}, "invalid"),
        ({"rules": {"draw_call": "maybe"}}, "invalid"),
        ({"rules": {"stake": 0}}, "invalid"),
        ({"rules": {"stake": 10**6}}, "invalid"),
        ({"rules": {"draw_call_timing": "never"}}, "invalid"),
        ({"rules": {"stock_out_tie": "coin_flip"}}, "invalid"),
        ({"rules": 7}, "invalid"),
        ({"rules": ["house"]}, "invalid"),
        ({"seats": [{"kind": "user"}, {"kind": "open"}]}, "invalid"),
        ({"seats": [{"kind": "user"}] * 4}, "invalid"),
        ({"seats": [{"kind": "user"}, {"kind": "user"}, {"kind": "open"}]}, "invalid_seats"),
        ({"seats": [{"kind": "ghost"}, {"kind": "open"}, {"kind": "open"}]}, "invalid"),
        (
            {"seats": [{"kind": "bot", "level": "godlike"}, {"kind": "open"}, {"kind": "open"}]},
            "invalid",
        ),
        (
            {
                "seats": [
                    {"kind": "user", "username": "nobody-here"},
                    {"kind": "open"},
                    {"kind": "open"},
                ]
            },
            "unknown_user",
        ),
        ({"seats": "three"}, "invalid"),
    ],
)
def test_create_refuses_bad_rules_and_seats(clients, body, code):
    before = Game.objects.count()
    assert_error(create(clients[0], **body), 400, code)
    assert Game.objects.count() == before


def test_h19_table_the_creator_deals_first_and_the_stake_shows(clients):
    # the creator sits at seat 2 of a quick-play table: it starts at once, seat 2 dealing
    seats = [{"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "easy"}, {"kind": "user"}]
    response = create(clients[0], rules={"preset": "h19", "stake": 10}, seats=seats)
    assert response.status_code == 201, response.content
    game_id = response.json()["id"]
    started = Event.objects.get(game_id=game_id, type="game_started").data
    assert started["first_dealer"] == 2 and started["rules"]["stake"] == 10
    dealt = Event.objects.get(game_id=game_id, type="round_started").data
    assert dealt["dealer"] == 2
    view = clients[0].get(game_url(game_id)).json()
    assert view["view"]["rules"]["stake"] == 10
    rows = clients[1].get(TABLES, {"status": "active"}).json()
    assert [row["rules"]["stake"] for row in rows if row["id"] == game_id] == [10]


def test_nested_validation_errors_name_the_field(clients):
    body = assert_error(
        create(clients[0], seats=[{"kind": "open"}, {"kind": "ghost"}, {"kind": "open"}]),
        400,
        "invalid",
    )
    assert body["fields"] == {"seats.1.kind": ['"ghost" is not a valid choice.']}


def test_list_shows_open_tables_and_filters_by_status(clients):
    waiting = create(clients[0]).json()["id"]
    full = create(
        clients[1],
        seats=[{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot"}],
    ).json()["id"]  # quick play: it starts at once

    listed = clients[2].get(TABLES, {"status": "waiting"})
    assert listed.status_code == 200
    ids = [t["id"] for t in listed.json()]
    assert waiting in ids and full not in ids
    assert [t["id"] for t in clients[2].get(TABLES).json()] == ids  # waiting is the default
    active = [t["id"] for t in clients[2].get(TABLES, {"status": "active"}).json()]
    assert active == [full]
    assert_error(clients[2].get(TABLES, {"status": "lost"}), 400, "invalid")
    assert_error(clients[2].get(TABLES, {"limit": 0}), 400, "invalid")
    assert len(clients[2].get(TABLES, {"limit": 1}).json()) == 1


def test_quick_play_the_creator_and_bots_start_at_once(clients):
    ann, ben = clients[:2]
    response = create(
        ann, seats=[{"kind": "bot", "level": "easy"}, {"kind": "user"}, {"kind": "bot"}]
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "active" and body["version"] == 2 and body["round"] == 1
    assert body["started_at"] and body["turn_deadline"]
    types = Event.objects.filter(game_id=body["id"]).values_list("type", flat=True)
    assert list(types) == ["game_started", "round_started"]
    assert_error(ann.post(table_url(body["id"], "/start")), 409, "already_started")
    assert_error(ben.post(table_url(body["id"], "/join")), 409, "already_started")
    assert ann.get(game_url(body["id"])).json()["seat"] == 1
    # Another user seated by name, or an open seat: those players start it when ready.
    for seats in (
        [{"kind": "user"}, {"kind": "user", "username": ben.user.username}, {"kind": "bot"}],
        [{"kind": "user"}, {"kind": "open"}, {"kind": "bot"}],
    ):
        assert create(ann, seats=seats).json()["status"] == "waiting"


def test_join_leave_and_start(clients):
    ann, ben, cy, dan = clients
    table = create(ann).json()["id"]
    assert_error(ann.post(table_url(table, "/start")), 409, "table_not_full")

    joined = ben.post(table_url(table, "/join"))
    assert joined.status_code == 200, joined.content
    assert joined.json()["seats"][1]["username"] == ben.user.username
    assert_error(ben.post(table_url(table, "/join")), 409, "already_seated")
    assert_error(cy.post(table_url(table, "/join"), {"seat": 1}, "json"), 409, "seat_taken")
    assert_error(cy.post(table_url(table, "/join"), {"seat": 3}, "json"), 400, "invalid")
    assert cy.post(table_url(table, "/join"), {"seat": 2}, "json").status_code == 200
    assert_error(dan.post(table_url(table, "/join")), 409, "table_full")

    left = cy.post(table_url(table, "/leave"))
    assert left.status_code == 200 and left.json()["seats"][2] == {"seat": 2, "kind": "open"}
    assert_error(cy.post(table_url(table, "/leave")), 403, "not_a_player")
    assert dan.post(table_url(table, "/join")).status_code == 200

    assert_error(cy.post(table_url(table, "/start")), 403, "not_a_player")
    started = ben.post(table_url(table, "/start"))
    assert started.status_code == 200, started.content
    body = started.json()
    assert body["status"] == "active" and body["version"] == 2 and body["round"] == 1
    assert body["current_seat"] in (0, 1, 2) and body["turn_deadline"]
    assert list(Event.objects.filter(game_id=table).values_list("type", flat=True)) == [
        "game_started",
        "round_started",
    ]
    for client in (ann, cy):
        assert_error(client.post(table_url(table, "/start")), 409, "already_started")
    assert_error(cy.post(table_url(table, "/join")), 409, "already_started")
    assert_error(ann.post(table_url(table, "/leave")), 409, "already_started")


def test_the_last_user_leaving_abandons_the_table(clients):
    table = create(clients[0]).json()["id"]
    response = clients[0].post(table_url(table, "/leave"))
    assert response.json()["status"] == "abandoned"
    assert_error(clients[1].post(table_url(table, "/join")), 409, "table_closed")
    assert table not in [t["id"] for t in clients[1].get(TABLES).json()]


def test_seats_for_named_users_and_bots_are_recorded_in_game_started(clients):
    ann, ben = clients[:2]
    table = create(
        ann,
        rules="house",
        seats=[
            {"kind": "bot", "level": "hard"},
            {"kind": "user", "username": ben.user.username.upper()},
            {"kind": "user"},
        ],
    ).json()["id"]
    assert_error(ann.post(table_url(table, "/start")), 409, "invitations_pending")
    assert (
        ben.post(table_url(table, "/invitation"), {"answer": "accept"}, "json").status_code == 200
    )
    assert ann.post(table_url(table, "/start")).status_code == 200
    started = Event.objects.get(game_id=table, seq=1).data
    # The log names people by user id only; reads resolve the names (games.players).
    assert started["seats"] == [
        {"kind": "bot", "level": "hard"},
        {"kind": "user", "user_id": ben.user.pk},
        {"kind": "user", "user_id": ann.user.pk},
    ]
    shown = ann.get(game_url(table, "/events")).json()["events"][0]["data"]
    assert shown["seats"] == started["seats"]  # as stored: what its hash covers
    shown = ann.get(game_url(table)).json()["seats"]  # names beside the events, read now
    assert [s.get("username") for s in shown] == [None, ben.user.username, ann.user.username]
    assert started["rules"]["ace_high_runs"] is True
    assert ann.get(game_url(table)).json()["seat"] == 2


def test_a_waiting_table_has_no_game_yet(clients):
    table = create(clients[0]).json()["id"]
    assert clients[0].get(table_url(table)).json()["id"] == table
    for suffix in ("", "/events", "/replay", "/audit"):
        assert_error(clients[0].get(game_url(table, suffix)), 409, "not_started")
    assert_error(
        clients[0].post(
            game_url(table, "/commands"),
            {"command": {"type": "draw"}, "expected_version": 0},
            "json",
        ),
        409,
        "not_started",
    )


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/tables/{id}",
        "/api/v1/games/{id}",
        "/api/v1/games/{id}/events",
        "/api/v1/games/{id}/replay",
        "/api/v1/games/{id}/audit",
    ],
)
def test_unknown_ids_are_json_404s(clients, path):
    assert_error(clients[0].get(path.format(id=uuid.uuid4())), 404, "not_found")
    assert_error(clients[0].get(path.format(id="not-a-uuid")), 404, "not_found")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", TABLES),
        ("get", TABLES),
        ("get", "/api/v1/tables/{id}"),
        ("post", "/api/v1/tables/{id}/join"),
        ("post", "/api/v1/tables/{id}/leave"),
        ("post", "/api/v1/tables/{id}/start"),
        ("get", "/api/v1/games/{id}"),
        ("post", "/api/v1/games/{id}/commands"),
        ("get", "/api/v1/games/{id}/events"),
        ("get", "/api/v1/games/{id}/replay"),
        ("get", "/api/v1/games/{id}/audit"),
    ],
)
def test_every_game_endpoint_needs_a_token(api_client, clients, method, path):
    table = create(clients[0]).json()["id"]
    response = getattr(api_client, method)(path.format(id=table), {}, "json")
    assert_error(response, 401, "not_authenticated")
    api_client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    response = getattr(api_client, method)(path.format(id=table), {}, "json")
    assert_error(response, 401, "authentication_failed")


def test_table_options_list_presets_and_bot_levels_with_their_ratings(clients, client):
    from games.rules import RuleSet
    from games.rules.bots import LEVEL_INFO

    body = clients[0].get(f"{TABLES}/options").json()
    assert [p["name"] for p in body["presets"]] == list(RuleSet.PRESETS)
    assert body["presets"][2]["rules"] == RuleSet.preset("h19").to_dict()
    levels = body["bot_levels"]
    assert [level["level"] for level in levels] == ["easy", "normal", "hard"]
    for level, info in zip(levels, LEVEL_INFO, strict=True):
        assert level["mu"] == info.mu and level["sigma"] == info.sigma
        assert level["rating"] == round(info.mu - 3 * info.sigma, 1)
    # weakest first means what it says: the ratings the tournament gave rise level by level
    assert levels[0]["mu"] < levels[1]["mu"] < levels[2]["mu"]
    # every level offered here is one a table accepts
    seats = [{"kind": "user"}] + [{"kind": "bot", "level": lv["level"]} for lv in levels[1:]]
    assert create(clients[0], seats=seats).status_code == 201
    assert client.get(f"{TABLES}/options").status_code == 401
