"""The schema and the server agree: what the server refuses, the schema says; what the schema
says is not a string (a number, a boolean, an empty query value) the server refuses too."""

from __future__ import annotations

import pytest
from drf_spectacular.generators import SchemaGenerator

from tests.api.games_support import assert_error, game_url, get_view, post_command, start_game

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("bad_type", [["draw"], {"draw": 1}, 3, True, None])
def test_a_command_type_that_is_not_a_string_is_400(auth_client_factory, bad_type):
    clients = [auth_client_factory() for _ in range(3)]
    game_id = start_game(clients)
    view = get_view(clients[0], game_id)
    response = post_command(clients[0], game_id, {"type": bad_type}, view["version"])
    body = assert_error(response, 400, "invalid")
    assert "command.type" in body["fields"]


def test_card_codes_are_exactly_the_schemas(auth_client_factory):
    clients = [auth_client_factory() for _ in range(3)]
    game_id = start_game(clients)
    view = get_view(clients[0], game_id)
    for card in (" AH", "AH ", 7, ["AH"]):
        command = {"type": "discard", "card": card}
        body = assert_error(
            post_command(clients[0], game_id, command, view["version"]), 400, "invalid"
        )
        assert "command.card" in body["fields"], card


@pytest.mark.parametrize(
    "body",
    [
        {"rated": 0},
        {"rated": "true"},
        {"buy_in": "100"},
        {"buy_in": 1.0},
        {"rules": {"preset": "standard", "burning": 1}},
        {"rules": {"preset": "standard", "stake": "5"}},
        {"seats": [{"kind": "user"}, {"kind": "user", "username": 42}, {"kind": "open"}]},
    ],
)
def test_table_bodies_take_json_types_only(auth_client, body):
    assert_error(auth_client.post("/api/v1/tables", body, "json"), 400, "invalid")


def test_command_numbers_are_json_numbers(auth_client_factory):
    clients = [auth_client_factory() for _ in range(3)]
    game_id = start_game(clients)
    version = get_view(clients[0], game_id)["version"]
    for body in (
        {"command": {"type": "draw"}, "expected_version": str(version)},
        {"command": {"type": "draw"}, "expected_version": version, "seat": "0"},
        {"command": {"type": "lay_off", "card": "AH", "meld_id": "1"}, "expected_version": 1},
        {
            "command": {"type": "meld", "cards": ["AH", "AD", "AS", "AC"], "hidden": 1},
            "expected_version": 1,
        },
    ):
        response = clients[0].post(game_url(game_id, "/commands"), body, "json")
        assert_error(response, 400, "invalid")


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/players/{name}/matches?until=",
        "/api/v1/players/{name}/matches?since=&result=win",
        "/api/v1/players/{name}/matches?cursor=",
        "/api/v1/leaderboard?min_games=",
        "/api/v1/leaderboard?order=",
    ],
)
def test_an_empty_query_value_is_400(api_client, user_factory, url):
    user = user_factory()
    body = assert_error(api_client.get(url.format(name=user.username)), 400, "invalid")
    assert body["fields"]


def test_empty_query_values_of_signed_in_reads_are_400(auth_client):
    for url in ("/api/v1/tables?status=", "/api/v1/me/wallet/entries?page_size="):
        assert_error(auth_client.get(url), 400, "invalid")


def test_the_schema_states_the_password_rules(api_client):
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    for name, field in (
        ("RegisterInputRequest", "password"),
        ("PasswordChangeInputRequest", "new_password"),
        ("PasswordResetConfirmInputRequest", "new_password"),
    ):
        prop = components[name]["properties"][field]
        assert prop["minLength"] == 8, (name, prop)
        assert "not all digits" in prop["description"], (name, prop)
    for password in ("short", "12345678901", "password123"):
        body = {"username": "newcomer", "password": password}
        refused = assert_error(
            api_client.post("/api/v1/auth/register", body, "json"), 400, "invalid"
        )
        assert "password" in refused["fields"]
    for body in (
        {"username": 7, "password": "a-long-passphrase"},
        {"username": "x", "password": 12345678},
    ):
        assert_error(api_client.post("/api/v1/auth/register", body, "json"), 400, "invalid")
