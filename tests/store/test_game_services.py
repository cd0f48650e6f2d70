"""Services without HTTP: the bot driver plays bot seats through the same submit_command door."""

from __future__ import annotations

import random

import pytest

from games import lobby, play, store
from games.errors import NotYourSeat
from games.models import Event, Game
from games.rules import legal_commands, player_view
from games.rules.bots import get_bot

pytestmark = pytest.mark.django_db


def test_a_match_with_two_bot_seats_driven_through_submit_command(user_factory):
    ann = user_factory()
    table = lobby.table_create(
        user=ann,
        rules={"preset": "standard", "wins_to_match": 2},
        seats=[{"kind": "bot", "level": "easy"}, {"kind": "user"}, {"kind": "bot"}],
    )  # quick play: started at once
    rng = random.Random(7)
    bots = {0: get_bot("easy"), 2: get_bot("normal")}
    for _ in range(3000):
        state = store.load(table.pk)
        if state.phase == "match_over":
            break
        seat = state.turn
        view, legal = player_view(state, seat), legal_commands(state, seat)
        if seat == 1:
            command = get_bot("normal").choose(view, legal, rng)
            result = play.submit_command(
                game_id=table.pk, user=ann, command=command, expected_version=state.version
            )
        else:
            command = bots[seat].choose(view, legal, rng)
            result = play.submit_command(
                game_id=table.pk, seat=seat, command=command, expected_version=state.version
            )
        assert result.version > state.version and result.body is None
    game = Game.objects.get(pk=table.pk)
    assert game.status == Game.Status.FINISHED
    actors = set(Event.objects.filter(game=game).values_list("actor", flat=True))
    assert actors == {"bot:easy", "bot:normal", f"user:{ann.pk}", "system"}
    assert store.verify_chain(table.pk) is None


def test_only_bot_seats_play_without_a_user(user_factory):
    ann, ben = user_factory(), user_factory()
    table = lobby.table_create(
        user=ann,
        seats=[{"kind": "user"}, {"kind": "user", "username": ben.username}, {"kind": "bot"}],
    )
    lobby.table_respond(game_id=table.pk, user=ben, accept=True)
    lobby.table_start(game_id=table.pk, user=ann)
    state = store.load(table.pk)
    for seat in (0, 1, 5, None):
        with pytest.raises(NotYourSeat):
            play.submit_command(
                game_id=table.pk,
                seat=seat,
                command={"type": "draw"},
                expected_version=state.version,
            )
    human = 0 if state.turn != 0 else 1
    with pytest.raises(NotYourSeat):  # a user acting for the bot seat
        play.submit_command(
            game_id=table.pk,
            user=[ann, ben][human],
            seat=2,
            command={"type": "draw"},
            expected_version=state.version,
        )
    assert Event.objects.filter(game_id=table.pk).count() == state.version
