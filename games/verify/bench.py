"""Benchmark of the legality audit: ``python -m games.verify.bench [matches] [seed]``.

Plays whole matches with the rules core's bots (``normal`` against two ``easy``; every fifth
turn a time-out), records them as the server would (actors, hash chain, nonces, seeded deals),
then times ``check_chain`` and ``check_legality`` over each whole match. Prints the median and
the worst.
A benchmark, never a test: the figure depends on the machine and its load.
"""

from __future__ import annotations

import hashlib
import random
import secrets
import statistics
import sys
import time

from games.rules import (
    RuleSet,
    deal,
    decide,
    event_to_dict,
    evolve,
    hidden_from_some,
    legal_commands,
    new_game,
    player_view,
    time_out,
)
from games.rules.bots import get_bot
from games.verify.core import (
    GENESIS_HASH,
    Record,
    actor_of_seat,
    check_chain,
    check_legality,
    event_hash,
)

GAME_ID = "00000000-0000-4000-8000-000000000000"


def recorded_match(
    rng: random.Random,
    rules: RuleSet,
    game_id: str = GAME_ID,
    seats: list[dict] | None = None,
) -> list[Record]:
    """One whole match as its stored stream (by default a user at seat 0, easy bots at 1 and
    2): what the server would store for game ``game_id``, every event legal."""
    seats = seats or [
        {"kind": "user", "user_id": 1},
        {"kind": "bot", "level": "easy"},
        {"kind": "bot", "level": "easy"},
    ]
    actors = [actor_of_seat(spec) for spec in seats]
    players = [get_bot("normal"), get_bot("easy"), get_bot("easy")]
    records: list[Record] = []
    prev = GENESIS_HASH
    state = None

    def add(actor: str, events: list) -> None:
        nonlocal prev, state
        for event in events:
            data = event_to_dict(event)
            if hidden_from_some(data):
                data["nonce"] = secrets.token_hex(16)
            if data["type"] in ("game_started", "round_ended"):  # as games.application does
                seed = secrets.token_hex(32)
                data["next_server_seed"] = seed
                data["next_server_seed_hash"] = hashlib.sha256(seed.encode()).hexdigest()
            seq = len(records) + 1
            at = f"2026-01-01T00:00:{seq % 60:02d}+00:00"
            digest = event_hash(
                prev, game_id=game_id, seq=seq, actor=actor, recorded_at=at, data=data
            )
            records.append(Record(seq, data["type"], actor, at, prev, digest, data))
            prev = digest
            state = evolve(state, data)

    add(actors[0], [new_game(rules, seats, rng)])
    turns = 0
    while state.phase != "match_over":
        if state.phase in ("dealing", "round_over"):
            add("system", [deal(state, rng, game_id)])
            continue
        seat = state.turn
        turns += 1
        if turns % 5 == 0:
            add("system", time_out(state))
            continue
        command = players[seat].choose(player_view(state, seat), legal_commands(state, seat), rng)
        add(actors[seat], decide(state, seat, command))
    return records


def main(argv: list[str]) -> None:
    matches = int(argv[0]) if argv else 30
    rng = random.Random(int(argv[1]) if len(argv) > 1 else 1)
    chain_ms, legal_ms, sizes = [], [], []
    for i in range(matches):
        rules = RuleSet.preset(("standard", "house", "h19")[i % 3])
        records = recorded_match(rng, rules)
        sizes.append(len(records))
        started = time.perf_counter()
        assert check_chain(GAME_ID, records) is None
        chain_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        failure = check_legality(records, GAME_ID)
        legal_ms.append((time.perf_counter() - started) * 1000)
        assert failure is None, failure
    print(f"{matches} matches, {statistics.median(sizes):.0f} events (median), max {max(sizes)}")
    print(
        f"legality audit of a whole match: median {statistics.median(legal_ms):.1f} ms, "
        f"worst {max(legal_ms):.1f} ms"
    )
    print(
        f"hash chain of a whole match: median {statistics.median(chain_ms):.1f} ms, "
        f"worst {max(chain_ms):.1f} ms"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
