"""Games played to the end through the services (bots, a person, time-outs), exports, and the
insider's edits: with the append-only trigger off, rows rewritten and the chain recomputed."""

from __future__ import annotations

import random
from datetime import timedelta

from django.db import connection
from django.utils import timezone

from games import lobby, play, store
from games.models import Event, Game
from games.rules import fold, legal_commands, state_to_dict

MAX_WRITES = 3000


def bot_table(user, rules: str = "standard", levels=("easy", "easy")) -> Game:
    """A quick-play table: the user at seat 0, two bots; started at once."""
    seats = [{"kind": "user"}, *({"kind": "bot", "level": level} for level in levels)]
    return lobby.table_create(user=user, rules=rules, seats=seats)


def play_to_end(
    game_id, user, rng: random.Random, timeouts: float = 0.1, upto=None, until=None
) -> None:
    """Play the table through the services until the match ends (or ``upto`` events, or
    ``until(state)``): bots by ``play_bot_turn``, the person by a random legal command or, now
    and then, a time-out; a table that waits between rounds is dealt by ``deal_next_round``."""
    for _ in range(MAX_WRITES):
        head = store.read(game_id)
        state = head.state()
        if state.phase == "match_over" or (upto is not None and head.version >= upto):
            return
        if until is not None and until(state):
            return
        if state.phase == "round_over":  # a table that waits before the next deal
            outcome = play.deal_next_round(game_id=game_id, expected_version=head.version)
            assert outcome == play.Outcome.DONE, outcome
            continue
        seat = state.turn
        if state.seats[seat].get("kind") == "bot":
            outcome = play.play_bot_turn(game_id=game_id, expected_version=head.version)
            assert outcome == play.Outcome.DONE, outcome
        elif rng.random() < timeouts:
            Game.objects.filter(pk=game_id).update(turn_deadline=timezone.now() - timedelta(1))
            outcome = play.expire_turn(game_id=game_id, expected_version=head.version)
            assert outcome == play.Outcome.DONE, outcome
        else:
            command = rng.choice(legal_commands(state, seat))
            play.submit_command(
                game_id=game_id, command=command, expected_version=head.version, user=user
            )
    raise AssertionError("the match did not end")


def export(client, game_id) -> dict:
    response = client.get(f"/api/v1/games/{game_id}/export")
    assert response.status_code == 200, response.content
    return response.json()


def audit(client, game_id) -> dict:
    response = client.get(f"/api/v1/games/{game_id}/audit")
    assert response.status_code == 200, response.content
    return response.json()


def _sql(statement: str, params=None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def rewrite(
    game_id,
    datas: dict[int, dict] | None = None,
    *,
    actors: dict[int, str] | None = None,
    stream: list[tuple[str, dict]] | None = None,
) -> None:
    """The insider's edit: change event data (by seq) or actors, or replace the whole stream
    (``stream``: (actor, data) per event), then recompute every hash from the first changed
    event on and rewrite the head (version, last hash, snapshot) to match: the chain verifies.
    """
    rows = list(Event.objects.filter(game_id=game_id).order_by("seq"))
    if stream is not None:
        template = rows[0]
        rows = [
            Event(
                game_id=game_id,
                seq=i,
                type=d["type"],
                data=d,
                actor=a,
                recorded_at=template.recorded_at,
                hash=b"",
            )
            for i, (a, d) in enumerate(stream, start=1)
        ]
    for seq, data in (datas or {}).items():
        rows[seq - 1].data = data
        rows[seq - 1].type = data["type"]
    for seq, actor in (actors or {}).items():
        rows[seq - 1].actor = actor
    prev = store.GENESIS_HASH
    for row in rows:
        prev = store.event_hash(
            prev,
            game_id=game_id,
            seq=row.seq,
            actor=row.actor,
            recorded_at=row.recorded_at,
            data=row.data,
        )
        row.hash = bytes.fromhex(prev)
    _sql("SET CONSTRAINTS ALL IMMEDIATE")
    _sql("ALTER TABLE games_event DISABLE TRIGGER games_event_no_update_delete")
    try:
        Event.objects.filter(game_id=game_id).delete()
        Event.objects.bulk_create(rows)
    finally:
        _sql("ALTER TABLE games_event ENABLE TRIGGER games_event_no_update_delete")
    state = fold(row.data for row in rows)
    Game.objects.filter(pk=game_id).update(
        version=len(rows), last_hash=bytes.fromhex(prev), snapshot=state_to_dict(state)
    )
    store.heads.clear()


def datas(game_id) -> list[dict]:
    return list(
        Event.objects.filter(game_id=game_id).order_by("seq").values_list("data", flat=True)
    )
