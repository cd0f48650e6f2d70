"""The Tongits rules core: pure Python, no Django. Commands in, events out.

``decide(state, seat, command) -> events`` validates; ``evolve(state, event) -> state`` applies;
a game's state is always ``fold(events)``. See docs/architecture.md "Contracts" for the JSON forms.
"""

from .cards import CODES as CARD_CODES
from .cards import parse_card
from .engine import (
    COMMAND_TYPES,
    abort,
    command_key,
    deadwood,
    deal,
    decide,
    deck_commitment,
    legal_commands,
    moves_at_once,
    new_game,
    next_dealer,
    play_resigned,
    rematch_dealer,
    resign,
    seeded_deck,
    set_client_seed,
    time_out,
)
from .errors import CODES as ILLEGAL_MOVE_CODES
from .errors import IllegalMove
from .events import EVENT_TYPES, Event, event_from_dict, event_to_dict
from .ruleset import RuleSet
from .scoring import table_stakes
from .state import (
    IN_ROUND_PHASES,
    PHASES,
    GameState,
    Meld,
    evolve,
    fold,
    state_from_dict,
    state_to_dict,
)
from .views import hidden_from_some, player_view, redact_event

__all__ = [
    "CARD_CODES",
    "COMMAND_TYPES",
    "EVENT_TYPES",
    "ILLEGAL_MOVE_CODES",
    "IN_ROUND_PHASES",
    "PHASES",
    "Event",
    "GameState",
    "IllegalMove",
    "Meld",
    "RuleSet",
    "command_key",
    "deadwood",
    "deal",
    "decide",
    "deck_commitment",
    "event_from_dict",
    "event_to_dict",
    "evolve",
    "fold",
    "hidden_from_some",
    "legal_commands",
    "moves_at_once",
    "new_game",
    "next_dealer",
    "parse_card",
    "player_view",
    "redact_event",
    "rematch_dealer",
    "seeded_deck",
    "set_client_seed",
    "state_from_dict",
    "state_to_dict",
    "table_stakes",
    "time_out",
    "abort",
    "play_resigned",
    "resign",
]
