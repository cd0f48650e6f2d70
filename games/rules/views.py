"""What one seat may see: ``player_view`` and ``redact_event``.

The single place that decides secrecy, so the API, the bots and the event feed cannot disagree
about it: own hand only, hidden melds as their size, no stock order and no salt while a round runs.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .cards import CODES, codes_of
from .events import Event, event_to_dict
from .melds import deadwood_of, run_display
from .state import DRAW_CALL, MATCH_OVER, ROUND_OVER, GameState


@lru_cache(maxsize=64)
def _rules_dict(rules) -> dict[str, Any]:
    return rules.to_dict()


@lru_cache(maxsize=256)
def _event_dict(event: Event) -> dict[str, Any]:
    """An event's dict without the server's secret for the next deal (``next_server_seed``)."""
    data = event.to_dict()
    data.pop("next_server_seed", None)
    return data


def _meld_view(meld, seat: int | None, reveal: bool) -> dict[str, Any]:
    show = reveal or not meld.hidden or meld.owner == seat
    return {
        "meld_id": meld.meld_id,
        "owner": meld.owner,
        "kind": meld.kind,
        "cards": run_display(meld.mask) if show else None,
        "hidden": meld.hidden,
        "size": meld.mask.bit_count(),
    }


def player_view(state: GameState, seat: int | None, reveal: bool = False) -> dict[str, Any]:
    """JSON-ready view of the game for ``seat`` (``None``: a spectator, who holds no hand).

    ``reveal`` (replay and audit of a finished match) adds every hand, the stock in order and
    the deal's salt, and shows secret sets face up.
    """
    over = reveal or state.phase in (ROUND_OVER, MATCH_OVER)
    rules = state.rules
    view: dict[str, Any] = {
        "seat": seat,
        "phase": state.phase,
        "round": state.round,
        "dealer": state.dealer,
        "turn": state.turn if state.turn >= 0 else None,
        "hand": codes_of(state.hands[seat]) if seat is not None else [],
        "deadwood": deadwood_of(state.hands[seat], rules) if seat is not None else None,
        "melds": [_meld_view(m, seat, over) for m in state.melds],
        "discard_pile": [CODES[c] for c in state.discard],
        "stock_count": len(state.stock),
        "hand_counts": [h.bit_count() for h in state.hands],
        "opened": [state.opened(s) for s in range(3)],
        "blocked": sorted(state.blocked),
        "turns": state.turns,
        "round_wins": list(state.round_wins),
        "chips": list(state.chips),
        "buy_in": state.buy_in,
        "last_round": _event_dict(state.last_round) if state.last_round else None,
        "match_winner": state.match_winner,
        "draw_call": None,
        "rules": _rules_dict(rules),
    }
    if state.phase == DRAW_CALL:
        view["draw_call"] = {
            "caller": state.draw_caller,
            "answers": [{"seat": s, "answer": a} for s, a in state.answers],
        }
    if over and state.round > 0:
        view["hands"] = [codes_of(h) for h in state.hands]
    if reveal:
        view["stock"] = [CODES[c] for c in state.stock]
        view["salt"] = state.salt
    return view


def hidden_from_some(event: Event | dict[str, Any]) -> bool:
    """Whether some reader may not see all of this event (a deal, a draw, a secret set): the
    server then stores a random ``nonce`` in it, redacted with the content, so the event's hash
    cannot be brute-forced back to the hidden cards."""
    data = event_to_dict(event) if isinstance(event, Event) else event
    kind = data.get("type")
    return kind in ("round_started", "drew") or (kind == "melded" and bool(data.get("hidden")))


def redact_event(event: Event | dict[str, Any], seat: int | None, reveal: bool = False) -> dict:
    """The event as ``seat`` may see it: same ``type`` (and seq, kept by the caller), with the
    hidden fields removed, and the ``nonce`` with them. ``reveal`` (a finished match) returns it
    whole."""
    data = event_to_dict(event) if isinstance(event, Event) else dict(event)
    if reveal:
        return data
    kind = data.get("type")
    data.pop("next_server_seed", None)  # game_started, round_ended: the next deal's secret
    if kind == "round_started":
        hands = data.pop("hands", [])
        data.pop("salt", None)
        data.pop("server_seed", None)
        data.pop("nonce", None)
        stock = data.pop("stock", [])
        data["hand_counts"] = [len(h) for h in hands]
        data["stock_count"] = len(stock)
        if seat is not None and 0 <= seat < len(hands):
            data["hand"] = list(hands[seat])
    elif kind == "drew" and data.get("seat") != seat:
        data.pop("card", None)
        data.pop("nonce", None)
    elif kind == "melded" and data.get("hidden") and data.get("seat") != seat:
        data["size"] = len(data.pop("cards", []))
        data.pop("nonce", None)
    return data
