"""Spectators: a table's visibility, the spectator delay, the watch list, and a leak scan of
everything a spectator reads over a whole match (docs/live.md "Spectators")."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from games import selectors
from games.models import Event, Game
from tests.api.games_support import (
    TABLES,
    assert_error,
    card_strings,
    fast_password_hashing,  # noqa: F401 (a fixture)
    game_url,
    get_view,
    secrets,
    states_by_version,
    table_url,
)
from tests.api.test_games_match import play_match, register

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

QUICK = {"preset": "standard", "wins_to_match": 1, "turn_seconds": 0}


def make_table(clients, **options) -> str:
    """A started table of the three clients (the first creates it, the others accept)."""
    owner, *others = clients
    seats = [{"kind": "user"}] + [{"kind": "user", "username": c.user.username} for c in others]
    body = {"rules": QUICK, "seats": seats, **options}
    response = owner.post(TABLES, body, "json")
    assert response.status_code == 201, response.content
    game_id = response.json()["id"]
    for other in others:
        assert other.post(table_url(game_id, "/invitation"), {"answer": "accept"}, "json")
    response = owner.post(table_url(game_id, "/start"))
    assert response.status_code == 200, response.content
    return game_id


@pytest.fixture
def people(api_client):
    return [register(api_client, name) for name in ("ana", "ben", "cora", "dan")]


def test_the_table_options_and_their_strict_types(people):
    owner = people[0]
    response = owner.post(TABLES, {}, "json")
    table = response.json()
    assert (table["visibility"], table["spectator_delay"], table["spectator_chat"]) == (
        "private",
        0,
        False,
    )
    assert table["spectators"] == 0
    body = {"visibility": "public", "spectator_delay": 7, "spectator_chat": True}
    table = owner.post(TABLES, body, "json").json()
    assert {k: table[k] for k in body} == body
    for wrong in (
        {"visibility": "secret"},
        {"visibility": 1},
        {"visibility": ["public"]},
        {"spectator_delay": "3"},
        {"spectator_delay": 3.0},
        {"spectator_delay": -1},
        {"spectator_delay": 51},
        {"spectator_delay": True},
        {"spectator_chat": 1},
        {"spectator_chat": "true"},
    ):
        body = assert_error(owner.post(TABLES, wrong, "json"), 400, "invalid")
        assert list(body["fields"]) == list(wrong), wrong


def test_a_private_table_is_for_its_players_and_staff(api_client, people):
    game_id = make_table(people[:3], spectator_delay=5)
    stranger = people[3]
    for suffix in ("", "/events", "/replay", "/audit", "/export", "/stream"):
        assert_error(stranger.get(game_url(game_id, suffix)), 403, "not_a_player")
    assert_error(stranger.post(game_url(game_id, "/stream-ticket")), 403, "not_a_player")
    # Staff keep reading everything, live (no delay), and the replay while it runs.
    staff = register(api_client, "staff")
    get_user_model().objects.filter(pk=staff.user.pk).update(is_staff=True)
    view = get_view(staff, game_id)
    assert view["seat"] is None and view["version"] == Game.objects.get(pk=game_id).version
    assert staff.get(game_url(game_id, "/replay")).status_code == 200


def test_a_waiting_watchable_table_is_not_started_for_a_spectator(people):
    response = people[0].post(TABLES, {"visibility": "public"}, "json")
    game_id = response.json()["id"]
    assert_error(people[3].get(game_url(game_id)), 409, "not_started")


def test_the_watch_list(people):
    public = make_table(people[:3], visibility="public")
    make_table(people[:3], visibility="unlisted")
    make_table(people[:3])
    waiting = people[3].post(TABLES, {"visibility": "public"}, "json").json()["id"]
    listed = people[3].get(TABLES, {"watch": 1}).json()
    assert [t["id"] for t in listed] == [public]
    assert listed[0]["spectators"] == 0 and listed[0]["status"] == "active"
    assert waiting in [t["id"] for t in people[3].get(TABLES, {"watch": "0"}).json()]
    assert [t["id"] for t in people[3].get(TABLES, {"watch": 1, "offset": 1}).json()] == []
    assert_error(people[3].get(TABLES, {"watch": ""}), 400, "invalid")


@pytest.mark.parametrize("delay", [0, 6])
def test_a_spectator_reads_a_whole_match_and_never_a_hidden_card(people, delay):
    players, watcher = people[:3], people[3]
    game_id = make_table(players, visibility="public", spectator_delay=delay)
    seen: list[tuple[int, dict]] = []  # (the game's version then, what the spectator read)
    live = {"version": 0}
    last = {"seq": 0}

    def watch() -> None:
        view = get_view(watcher, game_id)
        seen.append((live["version"], view))
        assert view["seat"] is None and view["view"]["hand"] == [] and not view["legal_commands"]
        feed = watcher.get(game_url(game_id, "/events"), {"after": last["seq"]}).json()
        seen.append((live["version"], feed))
        if feed["events"]:
            last["seq"] = feed["events"][-1]["seq"]
        if view["status"] == "active":
            for suffix in ("/replay", "/audit", "/export"):
                assert_error(watcher.get(game_url(game_id, suffix)), 409, "not_finished")

    def record(seat, body) -> None:
        version = body.get("version") or body["game"]["version"]
        if version != live["version"]:
            live["version"] = version
            watch()

    commands = play_match(players, game_id, record)
    watch()
    rows = list(
        Event.objects.filter(game_id=game_id).order_by("seq").values_list("data", flat=True)
    )
    states = states_by_version(rows)
    scanned = behind = 0
    for version, body in seen:
        at = body["version"]
        if states[version].phase != "match_over":
            # While it runs, the spectator sees the game exactly ``delay`` events behind.
            assert at == max(1, version - delay), (version, at)
            behind += at < version
        if states[at].phase == "match_over":
            continue  # everything is revealed by design
        for item in body.get("events", []):
            assert item["seq"] <= at
            leaked = set(card_strings(item)) & secrets(states[item["seq"]], None)
            assert not leaked, (item, leaked)
            scanned += 1
        rest = {k: v for k, v in body.items() if k != "events"}
        leaked = set(card_strings(rest)) & secrets(states[at], None)
        assert not leaked, (at, leaked)
        if "view" in body and body["status"] == "active":
            assert body["turn_deadline"] is None or not delay
    # Every event of the writes the watcher saw while the match ran was scanned (bar the delay
    # and a little slack); the match-ending write's events come face up by design, however many.
    while_running = max(v for v, _body in seen if states[v].phase != "match_over")
    assert scanned >= while_running - delay - 3 and commands > 5
    assert (behind > commands / 2) if delay else behind == 0

    # Once the match is over: everything, replay and audit included.
    final = get_view(watcher, game_id)
    assert final["status"] == "finished" and final["version"] == len(rows)
    assert "revealed" in final
    replay = watcher.get(game_url(game_id, "/replay"), {"at": 2}).json()
    assert replay["revealed"] is True and replay["seat"] is None
    assert sum(len(h) for h in replay["view"]["hands"]) + len(replay["view"]["stock"]) == 52
    audit = watcher.get(game_url(game_id, "/audit")).json()
    assert audit["chain_ok"] is True and audit["snapshot_ok"] is True
    assert watcher.get(game_url(game_id, "/export")).json()["revealed"] is True


def test_an_unlisted_table_with_a_delay_resumes_no_further_than_its_spectators_see(people):
    game_id = make_table(people[:3], visibility="unlisted", spectator_delay=50)
    game = Game.objects.get(pk=game_id)
    view = get_view(people[3], game_id)
    assert view["version"] == 1 < game.version  # game_started only: no deal yet
    feed = people[3].get(game_url(game_id, "/events")).json()
    assert [e["seq"] for e in feed["events"]] == [1] and feed["version"] == 1
    body = assert_error(
        people[3].get(game_url(game_id, "/stream"), {"after": game.version}),
        400,
        "invalid_last_event_id",
    )
    assert body["version"] == 1  # never the live version


def test_past_states_fold_on_from_the_nearest(people, django_assert_max_num_queries):
    game_id = make_table(people[:3])
    version = Game.objects.get(pk=game_id).version
    selectors.past_states.clear()
    first = selectors.past_state(game_id, 1)
    assert first.version == 1
    with django_assert_max_num_queries(1):
        again = selectors.past_state(game_id, version)
    assert again.version == version
    with django_assert_max_num_queries(0):
        assert selectors.past_state(game_id, version) is again
