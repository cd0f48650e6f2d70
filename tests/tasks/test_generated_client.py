"""A client generated from the live schema with openapi-python-client plays a whole match.

What a mobile team does: generate the client from ``/api/schema/``, then use nothing else. With
it, a player registers, plays a quick-play match against two bots (the worker plays them) to the
end with commands built from the generated command types, and reads the feed, replay, audit,
history, stats, match detail and leaderboard. Every answer must parse into the generated models
with no field the model does not declare (``additional_properties`` empty everywhere, and
``to_dict()`` equal to the raw JSON). A client still holding a revoked token can log in.
"""

from __future__ import annotations

import datetime
import importlib
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
from django.core.wsgi import get_wsgi_application

from games.rules.bots.greedy import GreedyBot
from tests.conftest import DEFAULT_PASSWORD
from tests.tasks.support import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

PACKAGE = "tongits_generated_client"
BASE_URL = "http://localhost"
MATCH_TIMEOUT_SECONDS = 90.0
#: Generated models whose extra keys are their documented content (additionalProperties).
MAP_MODELS = {"Fields"}


@pytest.fixture
def generated(transactional_db, tmp_path) -> Any:
    """The client package generated from the live schema (offline: a pip package, no network)."""
    root = tmp_path
    transport = httpx.WSGITransport(app=get_wsgi_application())
    with httpx.Client(base_url=BASE_URL, transport=transport) as http:
        response = http.get("/api/schema/", headers={"Accept": "application/vnd.oai.openapi+json"})
    assert response.status_code == 200
    (root / "schema.json").write_bytes(response.content)
    (root / "config.yaml").write_text(
        f"post_hooks: []\npackage_name_override: {PACKAGE}\nproject_name_override: {PACKAGE}\n"
    )
    generator = Path(sys.executable).with_name("openapi-python-client")
    run = subprocess.run(
        [generator, "generate", "--path", "schema.json", "--output-path", PACKAGE,
         "--meta", "none", "--config", "config.yaml", "--fail-on-warning"],
        cwd=root, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def _same(raw: Any, dumped: Any) -> bool:
    """``to_dict()`` equals the raw JSON (datetimes compared as instants)."""
    if isinstance(raw, dict) and isinstance(dumped, dict):
        return raw.keys() == dumped.keys() and all(_same(raw[k], dumped[k]) for k in raw)
    if isinstance(raw, list) and isinstance(dumped, list):
        return len(raw) == len(dumped) and all(map(_same, raw, dumped))
    if isinstance(raw, str) and isinstance(dumped, str) and raw != dumped:
        try:
            return datetime.datetime.fromisoformat(raw) == datetime.datetime.fromisoformat(dumped)
        except ValueError:
            return False
    return raw == dumped and type(raw) is type(dumped)


def undeclared(model: Any, path: str = "$") -> list[str]:
    """Keys of the raw body that landed in a model's ``additional_properties``."""
    out: list[str] = []
    if attrs.has(type(model)):
        extra = getattr(model, "additional_properties", {})
        if extra and not type(model).__name__.endswith(tuple(MAP_MODELS)):
            out.append(f"{path} ({type(model).__name__}): {sorted(extra)}")
        for field in attrs.fields(type(model)):
            if field.name != "additional_properties":
                out += undeclared(getattr(model, field.name), f"{path}.{field.name}")
    elif isinstance(model, list):
        for index, item in enumerate(model):
            out += undeclared(item, f"{path}[{index}]")
    return out


class Checked:
    """Calls a generated operation and checks its answer against the generated models."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, operation: Any, expected: int, /, **kwargs: Any) -> Any:
        response = operation.sync_detailed(**kwargs)
        assert response.status_code == expected, (operation.__name__, response.content[:500])
        raw = json.loads(response.content)
        parsed = response.parsed
        assert parsed is not None, f"{operation.__name__}: no model for {expected}"
        self.calls += 1
        assert undeclared(parsed) == [], operation.__name__
        dumped = [m.to_dict() for m in parsed] if isinstance(parsed, list) else parsed.to_dict()
        assert _same(raw, dumped), (operation.__name__, raw, dumped)
        return parsed


def command_model(client_models: Any, command: dict[str, Any]) -> Any:
    """The generated request model of one command, built field by field."""
    kinds = {
        "draw": ("DrawCommandRequest", "DrawCommandTypeEnum"),
        "take_discard": ("TakeDiscardCommandRequest", "TakeDiscardCommandTypeEnum"),
        "meld": ("MeldCommandRequest", "MeldCommandTypeEnum"),
        "lay_off": ("LayOffCommandRequest", "LayOffCommandTypeEnum"),
        "discard": ("DiscardCommandRequest", "DiscardCommandTypeEnum"),
        "call_draw": ("CallDrawCommandRequest", "CallDrawCommandTypeEnum"),
        "challenge": ("ChallengeCommandRequest", "ChallengeCommandTypeEnum"),
        "fold": ("FoldCommandRequest", "FoldCommandTypeEnum"),
    }
    model_name, enum_name = kinds[command["type"]]
    fields = {k: v for k, v in command.items() if k != "type"}
    type_ = getattr(client_models, enum_name)(command["type"])
    return getattr(client_models, model_name)(type_=type_, **fields)


def test_a_generated_client_plays_a_match_and_reads_everything(generated, worker):
    from importlib import import_module

    api = lambda name: import_module(f"{PACKAGE}.api.{name}")  # noqa: E731
    models = import_module(f"{PACKAGE}.models")
    accounts, tables, games = api("accounts"), api("tables"), api("games")
    players, live = api("players"), api("live")
    mod = lambda package, name: import_module(f"{package.__name__}.{name}")  # noqa: E731
    transport = httpx.WSGITransport(app=get_wsgi_application())

    def client(token: str | None = None) -> Any:
        """A generated client as generated (it sends "Bearer <token>"), served in-process."""
        args = {"base_url": BASE_URL, "httpx_args": {"transport": transport}}
        if token is None:
            return generated.Client(**args)
        made = generated.AuthenticatedClient(token=token, **args)
        assert made.prefix == "Bearer"
        return made

    call = Checked()
    started = time.monotonic()
    anonymous = client()
    registered = call(
        mod(accounts, "auth_register"), 201, client=anonymous,
        body=models.RegisterInputRequest(username="mobile", password=DEFAULT_PASSWORD),
    )  # fmt: skip
    me = client(registered.token)
    table = call(
        mod(tables, "tables_create"), 201, client=me,
        body=models.TableCreateInputRequest(
            rules=models.RuleOptionsRequest(preset=models.PresetEnum.STANDARD, wins_to_match=1),
            seats=[
                models.SeatInputRequest(kind=models.SeatKindEnum.USER),
                models.SeatInputRequest(kind=models.SeatKindEnum.BOT, level=models.LevelEnum.EASY),
                models.SeatInputRequest(kind=models.SeatKindEnum.BOT, level=models.LevelEnum.EASY),
            ],
        ),
    )  # fmt: skip
    game_id = table.id
    assert table.status == models.StatusEnum.ACTIVE

    retrieve, command = mod(games, "games_retrieve"), mod(games, "games_command")
    bot, rng = GreedyBot(), random.Random(0)
    payload = call(retrieve, 200, game_id=game_id, client=me)
    commands = 0
    while payload.status != models.StatusEnum.FINISHED:
        assert time.monotonic() - started < MATCH_TIMEOUT_SECONDS, "the match does not end"
        if not payload.legal_commands:
            time.sleep(0.02)
            payload = call(retrieve, 200, game_id=game_id, client=me)
            continue
        view = payload.to_dict()
        chosen = bot.choose(view["view"], view["legal_commands"], rng)
        body = models.CommandInputRequest(
            command=command_model(models, chosen), expected_version=payload.version
        )
        answer = call(command, 200, game_id=game_id, client=me, body=body)
        assert answer.events and answer.version == answer.game.version
        payload = answer.game
        commands += 1
        if commands == 1:  # a typed error: the stale version carries the current one
            stale = call(command, 409, game_id=game_id, client=me, body=body)
            assert stale.code.value == "stale_version" and stale.version >= answer.version
            # The generated types cannot build a discard without its card...
            missing = {"command": {"type": "discard"}, "expected_version": payload.version}
            with pytest.raises((KeyError, TypeError, ValueError)):
                models.CommandInputRequest.from_dict(missing)
            # ... and the server refuses it sent raw, with the documented 400.
            raw = me.get_httpx_client().post(f"/api/v1/games/{game_id}/commands", json=missing)
            assert raw.status_code == 400
            invalid = models.GamesCommandError400.from_dict(raw.json())
            assert invalid.code.value == "invalid" and "command.card" in invalid.fields.to_dict()
    assert payload.view.match_winner is not None

    feed = call(mod(games, "games_events"), 200, game_id=game_id, client=me, after=0)
    types = {item.type_.value for item in feed.events}
    assert {"game_started", "round_started", "round_ended", "match_ended"} <= types
    assert all(item.data.type_.value == item.type_.value for item in feed.events)
    replay = call(mod(games, "games_replay"), 200, game_id=game_id, client=me)
    assert replay.revealed and len(replay.view.hands) == 3
    audit = call(mod(games, "games_audit"), 200, game_id=game_id, client=me)
    assert audit.chain_ok and audit.commitments_ok

    history = wait_for(
        lambda: (
            (
                page := call(
                    mod(players, "players_matches"), 200, client=anonymous, username="mobile"
                )
            ).results
            and page
        ),
        10,
        interval=0.1,
    )
    assert history and str(history.results[0].game_id) == str(game_id)
    call(mod(players, "players_stats"), 200, client=anonymous, username="mobile")
    call(mod(players, "matches_retrieve"), 200, client=anonymous, game_id=game_id)
    board = call(mod(players, "leaderboard"), 200, client=anonymous)
    assert "mobile" in {entry.username for entry in board.results}
    call(mod(live, "me_games"), 200, client=me)
    call(mod(tables, "tables_retrieve"), 200, game_id=game_id, client=me)
    listed = call(mod(tables, "tables_list"), 200, client=me, status=models.StatusEnum.FINISHED)
    assert str(game_id) in {str(t.id) for t in listed}
    call(mod(games, "games_stream_ticket"), 201, game_id=game_id, client=me)
    call(mod(live, "me_stream_ticket"), 201, client=me)
    call(mod(accounts, "me"), 200, client=me)

    # Log out, then log in again from a client that still sends the revoked token.
    logout = mod(accounts, "auth_logout").sync_detailed(client=me)
    assert logout.status_code == 204
    refused = call(mod(accounts, "me"), 401, client=me)
    assert refused.code.value == "authentication_failed"
    again = call(
        mod(accounts, "auth_token"), 200, client=me,
        body=models.TokenInputRequest(username="mobile", password=DEFAULT_PASSWORD),
    )  # fmt: skip
    assert again.token != registered.token
    # The check itself: a field the model does not declare is caught.
    me_body = {
        "id": 1,
        "username": "x",
        "email": "",
        "date_joined": "2026-01-01T00:00:00Z",
        "display_name": "x",
        "avatar": "sun",
        "country": "",
        "language": "",
        "guest": False,
        "show_presence": True,
    }
    assert undeclared(models.UserOutput.from_dict({**me_body, "salt": "s"})) != []
    assert undeclared(models.UserOutput.from_dict(me_body)) == []
    elapsed = time.monotonic() - started
    print(f"generated client: {commands} commands, {call.calls} checked answers, {elapsed:.1f} s")
