"""Helpers for the fair-play tests: staff, flags, tables played for chips to a known end."""

from __future__ import annotations

from typing import Any

from chips import services as chips
from chips.models import Entry
from fairplay.detection.flags import Flag
from fairplay.detection.signals import flag_raised
from games import lobby, play
from tests.chips.support import ONE_ROUND, play_to_the_end, settle


def staff_client(auth_client_factory, user_factory) -> Any:
    return auth_client_factory(user_factory(is_staff=True))


def raise_flag(kind: str, accounts: tuple[int, ...], score: float = 5.0, **evidence: Any) -> Flag:
    """Send ``flag_raised`` as detection does; the flag it sent."""
    flag = Flag(
        kind=kind,
        accounts=accounts,
        score=score,
        threshold=3.0,
        evidence={"signals": {"resignations": score}, **evidence},
        game_ids=tuple(evidence.get("games", ())),
    )
    flag_raised.send(sender=Flag, flag=flag)
    return flag


def dumped_match(users: list[Any], buy_in: int) -> Any:
    """A buy-in table of three people where seats 1 and 2 resign at once and seat 0 plays the
    match out against their time-out play, as a feeder dumps chips: the first such match (of
    a few: the deal decides) whose payout pays seat 0 and takes from seat 1, as the ledger
    entry the cases' chip flow reads says. The game, settled."""
    for user in users:
        chips.open_wallet(user.pk)
    for attempt in range(12):
        seats = [{"kind": "user"}] + [{"kind": "user", "username": u.username} for u in users[1:]]
        game = lobby.table_create(
            user=users[0], rules=ONE_ROUND, seats=seats, rated=False, buy_in=buy_in
        )
        for other in users[1:]:
            lobby.table_respond(game_id=game.pk, user=other, accept=True)
        lobby.table_start(game_id=game.pk, user=users[0])
        play.resign(game.pk, users[1].pk)
        play.resign(game.pk, users[2].pk)
        play_to_the_end(game.pk, dict(enumerate(users)), seed=attempt)
        settle(game.pk)
        paid = Entry.objects.get(cause=Entry.Cause.PAYOUT, game_id=game.pk).data["paid"]
        if paid[0] > 0 and paid[1] < 0:
            return game
    raise AssertionError("no match of 12 paid seat 0 from seat 1 against two resigned seats")
