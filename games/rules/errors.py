"""Typed errors of the rules core. ``IllegalMove.code`` is a stable, documented API value."""

from __future__ import annotations

#: Every code ``decide`` may raise, with the reason a client shows. Stable: clients switch on them.
CODES: dict[str, str] = {
    "not_your_turn": "another seat is to act",
    "wrong_phase": "that command is not possible in this phase of the turn",
    "must_draw_first": "draw from the stock or take the discard first",
    "already_drew": "this turn already drew or took the discard",
    "card_not_in_hand": "that card is not in your hand",
    "invalid_meld": "those cards do not make a meld",
    "invalid_lay_off": "that card cannot be laid off on that meld",
    "discard_not_usable": "the top discard does not make a new meld with those cards",
    "draw_blocked": "a lay-off on your meld blocks your Draw call this turn",
    "not_opened": "you need an exposed meld first",
    "no_draw_call_pending": "nobody has called Draw",
    "no_round_in_play": "no round is being played",
    "unknown_command": "unknown command type",
    "bad_command": "the command is malformed",
    "stock_empty": "the stock is empty",
    "unknown_meld": "no meld with that id",
    "rule_disabled": "these rules do not allow that",
    "already_resigned": "this seat has already resigned",
}


class IllegalMove(Exception):
    """A command the rules refuse. ``code`` is one of ``CODES``; the state is never changed."""

    def __init__(self, code: str, detail: str | None = None) -> None:
        if code not in CODES:
            raise ValueError(f"undocumented IllegalMove code {code!r}")
        self.code = code
        self.detail = detail or CODES[code]
        super().__init__(f"{code}: {self.detail}")
