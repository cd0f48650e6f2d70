"""Commands over the API: bad input never appends and never 500s; idempotency; the event feed,
replay and audit while the match runs."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from games import store
from games.models import Event, Game, IdempotencyRecord
from games.rules.cards import codes_of
from tests.api.games_support import (
    assert_error,
    card_strings,
    fast_password_hashing,  # noqa: F401 (a fixture)
    game_url,
    get_view,
    post_command,
    secrets,
    start_game,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]


@dataclass
class Ctx:
    game_id: str
    version: int
    actor: object  # client of the seat to act (the dealer, in the first turn: no draw)
    waiter: object  # client of a seated player whose turn it is not
    outsider: object  # client seated at another game only
    other_game_id: str
    own_card: str
    foreign_card: str  # in another seat's hand
    waiter_card: str  # in the waiter's hand


@pytest.fixture
def players(auth_client_factory):
    return [auth_client_factory() for _ in range(3)]


@pytest.fixture
def ctx(players, auth_client_factory) -> Ctx:
    game_id = start_game(players)
    outsider = auth_client_factory()
    other_game_id = start_game([outsider, auth_client_factory(), auth_client_factory()])
    view = get_view(players[0], game_id)
    turn = view["view"]["turn"]
    state = store.load(game_id)
    actor, waiter = players[turn], players[(turn + 1) % 3]
    return Ctx(
        game_id=game_id,
        version=view["version"],
        actor=actor,
        waiter=waiter,
        outsider=outsider,
        other_game_id=other_game_id,
        own_card=codes_of(state.hands[turn])[0],
        foreign_card=codes_of(state.hands[(turn + 2) % 3])[0],
        waiter_card=codes_of(state.hands[(turn + 1) % 3])[0],
    )


def event_count(game_id) -> int:
    return Event.objects.filter(game_id=game_id).count()


def cmd(command, version):
    return {"command": command, "expected_version": version}


# Each case: (id, who sends, body builder, expected status, expected code). The body builder
# gets the context; a str body is sent raw as JSON text.
# fmt: off
BAD_INPUT = [
    ("malformed json", "actor", lambda c: '{"command": {"type": "draw"', 400, "parse_error"),
    ("json not an object", "actor", lambda c: "[1, 2, 3]", 400, "invalid"),
    ("empty body", "actor", lambda c: {}, 400, "invalid"),
    ("no expected_version", "actor", lambda c: {"command": {"type": "draw"}}, 400, "invalid"),
    ("no command", "actor", lambda c: {"expected_version": c.version}, 400, "invalid"),
    ("command not an object", "actor", lambda c: cmd("draw", c.version), 400, "invalid"),
    ("command a list", "actor", lambda c: cmd([{"type": "draw"}], c.version), 400, "invalid"),
    ("version not a number", "actor", lambda c: cmd({"type": "draw"}, "v1"), 400, "invalid"),
    ("negative version", "actor", lambda c: cmd({"type": "draw"}, -1), 400, "invalid"),
    ("huge version", "actor", lambda c: cmd({"type": "draw"}, 10**30), 400, "invalid"),
    ("seat out of range", "actor",
     lambda c: {**cmd({"type": "draw"}, c.version), "seat": 5}, 400, "invalid"),
    # What the command's schema (a oneOf on type) rejects is 400, like the rest of the body.
    ("unknown command type", "actor", lambda c: cmd({"type": "fly"}, c.version), 400, "invalid"),
    ("command type not a string", "actor", lambda c: cmd({"type": 7}, c.version), 400,
     "invalid"),
    ("command without type", "actor", lambda c: cmd({"card": "AS"}, c.version), 400, "invalid"),
    ("card that does not exist", "actor",
     lambda c: cmd({"type": "discard", "card": "ZZ"}, c.version), 400, "invalid"),
    ("card of a wrong type", "actor",
     lambda c: cmd({"type": "discard", "card": ["AS"]}, c.version), 400, "invalid"),
    ("card missing", "actor", lambda c: cmd({"type": "discard"}, c.version), 400, "invalid"),
    ("lay off without meld", "actor",
     lambda c: cmd({"type": "lay_off", "card": c.own_card}, c.version), 400, "invalid"),
    ("meld of nonsense", "actor",
     lambda c: cmd({"type": "meld", "cards": [1, None, {}]}, c.version), 400, "invalid"),
    ("meld of no cards", "actor", lambda c: cmd({"type": "meld", "cards": []}, c.version), 400,
     "invalid"),
    # Well-formed, but the rules core refuses it: 422 with its code.
    ("meld with a card twice", "actor",
     lambda c: cmd({"type": "meld", "cards": [c.own_card, c.own_card, c.own_card]}, c.version),
     422, "bad_command"),
    ("lay off on no meld", "actor",
     lambda c: cmd({"type": "lay_off", "card": c.own_card, "meld_id": 99}, c.version), 422,
     "unknown_meld"),
    ("card not in hand", "actor",
     lambda c: cmd({"type": "discard", "card": c.foreign_card}, c.version), 422,
     "card_not_in_hand"),
    ("draw in the dealer's first turn", "actor", lambda c: cmd({"type": "draw"}, c.version), 422,
     "already_drew"),
    ("answer without a draw call", "actor", lambda c: cmd({"type": "fold"}, c.version), 422,
     "no_draw_call_pending"),
    ("out of turn", "waiter",
     lambda c: cmd({"type": "discard", "card": c.waiter_card}, c.version), 422,
     "not_your_turn"),
    ("another player's seat", "waiter",
     lambda c: {**cmd({"type": "draw"}, c.version), "seat": 0 if c.waiter_seat else 1}, 403,
     "not_your_seat"),
    ("another table's game", "outsider",
     lambda c: cmd({"type": "discard", "card": c.own_card}, c.version), 403, "not_a_player"),
    ("stale version", "actor",
     lambda c: cmd({"type": "discard", "card": c.own_card}, c.version - 1), 409,
     "stale_version"),
    ("version from the future", "actor",
     lambda c: cmd({"type": "discard", "card": c.own_card}, c.version + 1), 409,
     "stale_version"),
    ("version zero", "actor", lambda c: cmd({"type": "draw"}, 0), 409, "stale_version"),
]
# fmt: on


@pytest.mark.parametrize(
    ("who", "build", "status", "code"),
    [case[1:] for case in BAD_INPUT],
    ids=[case[0] for case in BAD_INPUT],
)
def test_bad_commands_get_a_4xx_with_a_code_and_append_nothing(ctx, who, build, status, code):
    ctx.waiter_seat = get_view(ctx.waiter, ctx.game_id)["seat"]
    before = event_count(ctx.game_id), event_count(ctx.other_game_id)
    client = getattr(ctx, who)
    body = build(ctx)
    url = game_url(ctx.game_id, "/commands")
    if isinstance(body, str):
        response = client.generic("POST", url, body, content_type="application/json")
    else:
        response = client.post(url, body, "json")
    error = assert_error(response, status, code)
    if code == "stale_version":
        assert error["version"] == ctx.version
    assert (event_count(ctx.game_id), event_count(ctx.other_game_id)) == before
    assert Game.objects.get(pk=ctx.game_id).version == ctx.version


def test_other_bad_requests(ctx, auth_client_factory):
    url = game_url(ctx.game_id, "/commands")
    response = ctx.actor.post(url, "command=draw", content_type="application/x-www-form-urlencoded")
    assert_error(response, 415, "unsupported_media_type")
    assert_error(ctx.actor.get(url), 405, "method_not_allowed")
    assert_error(ctx.actor.post(game_url(ctx.game_id), {}, "json"), 405, "method_not_allowed")
    assert_error(
        post_command(
            ctx.actor, ctx.game_id, {"type": "draw"}, ctx.version, HTTP_IDEMPOTENCY_KEY="x" * 256
        ),
        400,
        "invalid_idempotency_key",
    )
    assert event_count(ctx.game_id) == ctx.version


def test_a_good_command_answers_the_new_events_and_view(ctx):
    response = post_command(
        ctx.actor, ctx.game_id, {"type": "discard", "card": ctx.own_card}, ctx.version
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["version"] == ctx.version + 1 == body["game"]["version"]
    assert body["events"] == [
        {
            "seq": ctx.version + 1,
            "type": "discarded",
            "actor": f"user:{ctx.actor.user.pk}",
            "recorded_at": body["events"][0]["recorded_at"],
            "prev_hash": store.load_events(ctx.game_id, upto=ctx.version)[-1].hash,
            "hash": store.load_events(ctx.game_id, upto=ctx.version + 1)[-1].hash,
            "data": {"type": "discarded", "seat": body["game"]["seat"], "card": ctx.own_card},
        }
    ]
    assert ctx.own_card not in body["game"]["view"]["hand"]
    assert body["game"]["view"]["discard_pile"] == [ctx.own_card]
    assert body["game"]["legal_commands"] == []  # the turn passed
    # The next player now sees it is their turn, and what they may do.
    nxt = get_view(ctx.waiter, ctx.game_id)
    assert nxt["view"]["turn"] == nxt["seat"] and nxt["view"]["phase"] == "start"
    assert {"type": "draw"} in nxt["legal_commands"]
    game = Game.objects.get(pk=ctx.game_id)
    assert game.current_seat == nxt["seat"] and game.version == ctx.version + 1


def test_the_same_idempotency_key_appends_once_and_answers_the_same_body(ctx):
    command = {"type": "discard", "card": ctx.own_card}
    first = post_command(ctx.actor, ctx.game_id, command, ctx.version, HTTP_IDEMPOTENCY_KEY="k-1")
    again = post_command(ctx.actor, ctx.game_id, command, ctx.version, HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == again.status_code == 200
    assert first.content == again.content
    assert again["Idempotent-Replayed"] == "true" and not first.has_header("Idempotent-Replayed")
    assert event_count(ctx.game_id) == ctx.version + 1
    assert IdempotencyRecord.objects.count() == 1

    # Still the first answer after the game has moved on, not a 409.
    nxt = get_view(ctx.waiter, ctx.game_id)
    assert (
        post_command(ctx.waiter, ctx.game_id, {"type": "draw"}, nxt["version"]).status_code == 200
    )
    late = post_command(ctx.actor, ctx.game_id, command, ctx.version, HTTP_IDEMPOTENCY_KEY="k-1")
    assert late.content == first.content

    # The same key for a different request is refused; keys are per user.
    other = post_command(
        ctx.actor, ctx.game_id, {"type": "draw"}, ctx.version, HTTP_IDEMPOTENCY_KEY="k-1"
    )
    assert_error(other, 422, "idempotency_key_reused")
    mine = post_command(
        ctx.waiter, ctx.game_id, {"type": "fold"}, ctx.version + 2, HTTP_IDEMPOTENCY_KEY="k-1"
    )
    assert_error(mine, 422, "no_draw_call_pending")
    assert event_count(ctx.game_id) == ctx.version + 2


def test_a_refused_command_is_not_remembered_under_its_key(ctx):
    bad = post_command(
        ctx.actor, ctx.game_id, {"type": "draw"}, ctx.version, HTTP_IDEMPOTENCY_KEY="k-2"
    )
    assert_error(bad, 422, "already_drew")
    assert not IdempotencyRecord.objects.exists()
    again = post_command(
        ctx.actor, ctx.game_id, {"type": "draw"}, ctx.version, HTTP_IDEMPOTENCY_KEY="k-2"
    )
    assert_error(again, 422, "already_drew")


def test_the_event_feed_is_redacted_for_each_seat(ctx, players):
    post_command(ctx.actor, ctx.game_id, {"type": "discard", "card": ctx.own_card}, ctx.version)
    nxt = get_view(ctx.waiter, ctx.game_id)
    drawn = post_command(ctx.waiter, ctx.game_id, {"type": "draw"}, nxt["version"]).json()
    drew = drawn["events"][0]
    assert drew["type"] == "drew" and "card" in drew["data"]

    state = store.load(ctx.game_id)
    for client in players:
        feed = client.get(game_url(ctx.game_id, "/events"), {"after": 0})
        assert feed.status_code == 200
        body = feed.json()
        seat = body["seat"]
        assert [e["seq"] for e in body["events"]] == list(range(1, state.version + 1))
        assert body["version"] == state.version and body["more"] is False
        started, dealt = body["events"][0], body["events"][1]
        assert started["type"] == "game_started" and dealt["type"] == "round_started"
        assert set(dealt["data"]) >= {"hand", "hand_counts", "stock_count", "deck_commitment"}
        assert not {"hands", "stock", "salt"} & set(dealt["data"])
        assert dealt["data"]["hand_counts"] == [13 if s == state.dealer else 12 for s in range(3)]
        last = body["events"][-1]
        assert last["type"] == "drew" and ("card" in last["data"]) == (seat == drew["data"]["seat"])
        assert not set(card_strings(body)) & secrets(state, seat)

    # Nothing new: an empty list at once; paging with limit.
    empty = ctx.actor.get(game_url(ctx.game_id, "/events"), {"after": state.version}).json()
    assert empty["events"] == [] and empty["more"] is False
    page = ctx.actor.get(game_url(ctx.game_id, "/events"), {"after": 1, "limit": 2}).json()
    assert [e["seq"] for e in page["events"]] == [2, 3] and page["more"] is True
    for query in ({"after": -1}, {"after": "x"}, {"limit": 0}, {"limit": 5000}):
        assert_error(ctx.actor.get(game_url(ctx.game_id, "/events"), query), 400, "invalid")
    assert_error(ctx.outsider.get(game_url(ctx.game_id, "/events")), 403, "not_a_player")


def test_replay_during_play_shows_only_the_callers_past_view(ctx):
    post_command(ctx.actor, ctx.game_id, {"type": "discard", "card": ctx.own_card}, ctx.version)
    replay = ctx.actor.get(game_url(ctx.game_id, "/replay"), {"at": 2})
    assert replay.status_code == 200, replay.content
    body = replay.json()
    assert body["at"] == 2 and body["version"] == 3 and body["revealed"] is False
    assert ctx.own_card in body["view"]["hand"] and len(body["view"]["hand"]) == 13
    assert "stock" not in body["view"] and "hands" not in body["view"]
    state = store.fold_from_zero(ctx.game_id, upto=2)
    assert not set(card_strings(body)) & secrets(state, body["seat"])
    latest = ctx.actor.get(game_url(ctx.game_id, "/replay")).json()
    assert latest["at"] == 3 and ctx.own_card not in latest["view"]["hand"]
    for at in (0, 4, "x"):
        assert_error(ctx.actor.get(game_url(ctx.game_id, "/replay"), {"at": at}), 400, "invalid")
    assert_error(ctx.outsider.get(game_url(ctx.game_id, "/replay")), 403, "not_a_player")


def test_audit_during_play_gives_verdicts_but_no_secrets(ctx):
    audit = ctx.waiter.get(game_url(ctx.game_id, "/audit"))
    assert audit.status_code == 200, audit.content
    body = audit.json()
    assert body["chain_ok"] is True and body["first_broken_seq"] is None
    assert body["commitments_ok"] is True and body["snapshot_ok"] is True
    assert body["revealed"] is False
    assert body["rounds"] == [
        {
            "round": 1,
            "seq": 2,
            "deck_commitment": store.load(ctx.game_id).deck_commitment,
            "commitment_ok": True,
        }
    ]
    assert not list(card_strings(body))
    assert_error(ctx.outsider.get(game_url(ctx.game_id, "/audit")), 403, "not_a_player")
    assert_error(ctx.outsider.get(game_url(ctx.game_id)), 403, "not_a_player")


def test_a_tampered_event_is_named_by_the_audit(ctx):
    from django.db import connection

    post_command(ctx.actor, ctx.game_id, {"type": "discard", "card": ctx.own_card}, ctx.version)
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("ALTER TABLE games_event DISABLE TRIGGER games_event_no_update_delete")
        cursor.execute(
            "UPDATE games_event SET data = jsonb_set(data, '{card}', to_jsonb('TAMPERED'::text)) "
            "WHERE game_id = %s AND seq = 3",
            [ctx.game_id],
        )
        cursor.execute("ALTER TABLE games_event ENABLE TRIGGER games_event_no_update_delete")
    body = ctx.waiter.get(game_url(ctx.game_id, "/audit")).json()
    assert body["chain_ok"] is False and body["first_broken_seq"] == 3
    assert body["snapshot_ok"] is None
