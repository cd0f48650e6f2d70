"""A tournament anyone can check: its draw, its matches, its standings and its payouts.

Pure, like the rest of ``games.verify``: the server draws every stage and computes the prizes
with these same functions, and ``python -m games.verify`` checks a tournament's export
(``GET /api/v1/tournaments/{id}/export``) with them, so the two cannot disagree.
docs/tournaments.md gives the algorithms, so a verifier can be written in any language.

- ``seed_commitment``: ``sha256`` of the seating seed's text, published before the start.
- ``draw``: one stage's tables from the seed, the entrants' own seeds and who plays the stage.
- ``prize_amounts``: whole chips of the pool for each place, any remainder to the first.
- ``final_ranking``: the final table's places from its match.
- ``verify_tournament``: all of it over one export, answering the first ``Failure`` or None.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .core import Failure, canonical_json, records_of, sha256_hex, verify_export, verify_signature

#: The ``format`` of a tournament's export.
TOURNAMENT_FORMAT = "tongits-tournament/1"
#: Entrants of a tournament: one table, three tables then a final, or nine, three, one.
SIZES = (3, 9, 27)


def seed_commitment(seed: str) -> str:
    """What the manifest publishes before the start: sha256 of the seed's ASCII text."""
    return sha256_hex(seed)


def _uniform(tournament: str, stage: int, seed: str, seeds: Sequence[str]) -> Callable[[int], int]:
    """Uniform integers below ``n`` from HMAC-SHA256 blocks keyed by the seeds (the deal's
    construction, docs/verifying.md section 4, over the tournament's own message)."""
    message = canonical_json({"v": 1, "tournament": tournament, "stage": stage, "seeds": seeds})
    key = hmac.new(seed.encode("ascii"), message.encode("ascii"), hashlib.sha256).digest()
    state = {"counter": 0, "buffer": b""}

    def next_u32() -> int:
        if len(state["buffer"]) < 4:
            block = hmac.new(key, state["counter"].to_bytes(8, "big"), hashlib.sha256).digest()
            state["buffer"] += block
            state["counter"] += 1
        value, state["buffer"] = state["buffer"][:4], state["buffer"][4:]
        return int.from_bytes(value, "big")

    def uniform(n: int) -> int:
        limit = 2**32 - (2**32 % n)
        while True:
            u = next_u32()
            if u < limit:
                return u % n

    return uniform


def _shuffled(items: Sequence[int], uniform: Callable[[int], int]) -> list[int]:
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = uniform(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def draw(
    tournament: str,
    stage: int,
    seed: str,
    entrants: Sequence[Mapping[str, Any]],
    playing: Sequence[int],
) -> list[list[int]]:
    """The tables of ``stage`` (1, 2, 3): lists of three entrant numbers, seat order.

    ``entrants`` is the manifest's list (each with ``kind`` "user" or "bot" and its ``seed``);
    ``playing`` the entrant numbers in the stage (all of them at stage 1, then the previous
    stage's winners in table order). The people are shuffled, then the bots, each with the
    stream of the stage; the n-th of people-then-bots sits at table ``n % tables``, so people
    spread over the tables before any table gets a second one.
    """
    if len(playing) % 3 or not playing:
        raise ValueError(f"a stage seats a multiple of three entrants, not {len(playing)}")
    uniform = _uniform(tournament, stage, seed, [str(e.get("seed", "")) for e in entrants])
    people = [n for n in playing if entrants[n].get("kind") == "user"]
    bots = [n for n in playing if entrants[n].get("kind") != "user"]
    order = _shuffled(people, uniform) + _shuffled(bots, uniform)
    count = len(playing) // 3
    tables: list[list[int]] = [[] for _ in range(count)]
    for n, entrant in enumerate(order):
        tables[n % count].append(entrant)
    return tables


def stages_of(size: int) -> int:
    """How many stages a tournament of ``size`` entrants plays (3: 1, 9: 2, 27: 3)."""
    if size not in SIZES:
        raise ValueError(f"a tournament has 3, 9 or 27 entrants, not {size}")
    return SIZES.index(size) + 1


def prize_amounts(pool: int, shares: Sequence[int]) -> list[int]:
    """Whole chips of ``pool`` for each place by its percent share (rounded down), any
    remainder to the first place (the higher place)."""
    amounts = [pool * share // 100 for share in shares]
    if amounts:
        amounts[0] += pool - sum(amounts)
    return amounts


def match_result(events: Sequence[Mapping[str, Any]]) -> tuple[int, list[int]] | None:
    """(winner's seat, seats from first to last) of a finished match from its events: the
    winner first, then the others by rounds won, then by chips won over the rounds, then by
    seat. None when the events hold no ``match_ended``."""
    ended = next((e["data"] for e in events if e.get("type") == "match_ended"), None)
    if ended is None:
        return None
    winner = int(ended["winner"])
    wins = list(ended.get("round_wins") or (0, 0, 0))
    chips = [0, 0, 0]
    for event in events:
        if event.get("type") == "round_ended":
            for seat, amount in enumerate(event["data"].get("payouts") or (0, 0, 0)):
                chips[seat] += int(amount)
    others = sorted((s for s in range(3) if s != winner), key=lambda s: (-wins[s], -chips[s], s))
    return winner, [winner, *others]


def standings(
    size: int, tables: Sequence[Mapping[str, Any]], final: Sequence[int]
) -> list[dict[str, int]]:
    """Every entrant's place: the final table's three 1, 2, 3 (``final``, entrant numbers in
    order); those knocked out earlier share the place after everyone who went further (4 for
    the losers of the stage before the final, 10 for those of the one before that)."""
    out = [{"entrant": e, "place": place} for place, e in enumerate(final, start=1)]
    stages = stages_of(size)
    further = 3
    for stage in range(stages - 1, 0, -1):
        losers = sorted(
            e for t in tables if t["stage"] == stage for e in t["entrants"] if e != t.get("winner")
        )
        out += [{"entrant": e, "place": further + 1} for e in losers]
        further += len(losers)
    return out


def seal_payload(doc: Mapping[str, Any]) -> str:
    """The text a tournament's seal signs: canonical JSON of its manifest, revealed seed, every
    table (stage, index, entrants, game, winner, ranking, the match seal's signature), its
    standings and its prize entries."""
    return canonical_json(
        {
            "format": TOURNAMENT_FORMAT,
            "tournament": str(doc.get("tournament")),
            "manifest": doc.get("manifest"),
            "seed": doc.get("seed"),
            "tables": [
                {
                    "stage": t.get("stage"),
                    "index": t.get("index"),
                    "entrants": t.get("entrants"),
                    "game": t.get("game"),
                    "winner": t.get("winner"),
                    "ranking": t.get("ranking"),
                    "match_seal": (t.get("match_seal") or {}).get("signature"),
                }
                for t in doc.get("tables", [])
            ],
            "standings": doc.get("standings"),
            "prizes": doc.get("prizes"),
        }
    )


def _seat_is(spec: Mapping[str, Any], entrant: Mapping[str, Any]) -> bool:
    """A match's seat (``game_started``) is the entrant the draw put there."""
    if entrant.get("kind") == "user":
        return spec.get("kind") == "user" and spec.get("user_id") == entrant.get("user_id")
    return spec.get("kind") == "bot" and spec.get("level") == entrant.get("level")


def _check_table(
    table: Mapping[str, Any],
    entrants: Sequence[Mapping[str, Any]],
    keys: Mapping[str, str] | None,
) -> tuple[Failure | None, list[int]]:
    """One table's match: sound on its own, its seats the drawn entrants, its seal the one the
    tournament lists; answers the entrants in the match's order of places."""
    where = f"stage {table['stage']} table {table['index']}"
    export = table.get("export") or {}
    if str(export.get("game")) != str(table.get("game")):
        return Failure(None, "match", f"{where}: the export is of another game"), []
    failure = verify_export(export, keys)
    if failure is not None:
        return Failure(failure.seq, "match", f"{where}: {failure}"), []
    if (table.get("match_seal") or {}).get("signature") != (export.get("seal") or {}).get(
        "signature"
    ):
        return Failure(None, "match", f"{where}: the match seal listed is not the match's"), []
    seats = export["events"][0]["data"].get("seats") or []
    drawn = table["entrants"]
    if len(seats) != 3 or not all(
        _seat_is(spec, entrants[e]) for spec, e in zip(seats, drawn, strict=True)
    ):
        return Failure(None, "match", f"{where}: its seats are not the drawn entrants"), []
    result = match_result(export["events"])
    if result is None:
        return Failure(None, "match", f"{where}: the match did not end"), []
    return None, [drawn[seat] for seat in result[1]]


def verify_tournament(
    doc: Mapping[str, Any], public_keys: Mapping[str, str] | None = None
) -> Failure | None:
    """Everything about a finished tournament's export, in this order, the first failure
    answered: ``format``; ``commitment`` (the revealed seed is the one committed to); ``draw``
    (each stage's tables follow from the seed, the entrants' seeds and the previous stage's
    winners); ``match`` (each table's match is sound, sealed, and seats the drawn entrants);
    ``winners`` (each table's winner, and the final's ranking, follow from its match);
    ``standings``; ``prizes`` (the structure applied to the pool, paid to the places);
    ``seal`` (the tournament seal over all of it, by a trusted key)."""
    if doc.get("format") != TOURNAMENT_FORMAT:
        return Failure(None, "format", f"not a {TOURNAMENT_FORMAT} document")
    try:
        tournament = str(doc["tournament"])
        manifest, seed, tables = doc["manifest"], str(doc["seed"]), list(doc["tables"])
        entrants = list(manifest["entrants"])
        size = int(manifest["size"])
        stages = stages_of(size)
    except (KeyError, TypeError, ValueError) as exc:
        return Failure(None, "format", f"the export lacks {exc}")
    if len(entrants) != size:
        return Failure(None, "format", f"{len(entrants)} entrants listed for {size} places")
    if seed_commitment(seed) != manifest.get("seed_commitment"):
        return Failure(None, "commitment", "the revealed seed is not the one committed to")
    keys = (
        dict(public_keys)
        if public_keys
        else {k["id"]: k["public_key"] for k in doc.get("keys", [])}
    )
    playing = list(range(size))
    final: list[int] = []
    for stage in range(1, stages + 1):
        at_stage = sorted((t for t in tables if t.get("stage") == stage), key=lambda t: t["index"])
        expected = draw(tournament, stage, seed, entrants, playing)
        if [t["index"] for t in at_stage] != list(range(len(expected))):
            return Failure(None, "draw", f"stage {stage} lists other tables than its draw")
        for table, want in zip(at_stage, expected, strict=True):
            if list(table["entrants"]) != want:
                return Failure(
                    None,
                    "draw",
                    f"stage {stage} table {table['index']}: seats {table['entrants']}, "
                    f"the draw gives {want}",
                )
        winners = []
        for table in at_stage:
            failure, order = _check_table(table, entrants, keys)
            if failure is not None:
                return failure
            where = f"stage {stage} table {table['index']}"
            if table.get("winner") != order[0]:
                return Failure(None, "winners", f"{where}: the match's winner is {order[0]}")
            if stage == stages:
                if list(table.get("ranking") or []) != order:
                    return Failure(None, "winners", f"{where}: the match ranks {order}")
                final = order
            winners.append(order[0])
        playing = winners
    if [t.get("stage") for t in tables if not 1 <= int(t.get("stage", 0)) <= stages]:
        return Failure(None, "draw", "a table of a stage the tournament does not play")
    want_standings = standings(size, tables, final)
    if list(doc.get("standings") or []) != want_standings:
        return Failure(None, "standings", "the standings do not follow from the matches")
    failure = _check_prizes(doc, manifest, entrants, final)
    if failure is not None:
        return failure
    seal = doc.get("seal") or {}
    public = keys.get(str(seal.get("key_id")))
    if public is None:
        return Failure(None, "seal", f"unknown key id {seal.get('key_id')!r}")
    if not verify_signature(public, str(seal.get("signature", "")), seal_payload(doc)):
        return Failure(None, "seal", "the tournament's signature does not verify")
    return None


def _check_prizes(
    doc: Mapping[str, Any],
    manifest: Mapping[str, Any],
    entrants: Sequence[Mapping[str, Any]],
    final: Sequence[int],
) -> Failure | None:
    """The pool is the buy-ins of the people registered; each place's prize is its share of
    it (``prize_amounts``), paid to the entrant in that place (a bot's back to the house)."""
    people = sum(1 for e in entrants if e.get("kind") == "user")
    pool = int(manifest.get("buy_in", 0)) * people
    if manifest.get("pool") != pool:
        return Failure(None, "prizes", f"the pool is {pool}, not {manifest.get('pool')}")
    amounts = prize_amounts(pool, manifest.get("prizes") or [])
    want = [
        {
            "place": place,
            "entrant": final[place - 1],
            "user_id": entrants[final[place - 1]].get("user_id"),
            "amount": amount,
        }
        for place, amount in enumerate(amounts, start=1)
        if amount > 0
    ]
    got = [{k: p.get(k) for k in ("place", "entrant", "user_id", "amount")} for p in doc["prizes"]]
    if got != want:
        return Failure(None, "prizes", "the prizes do not follow the structure and the pool")
    return None


def verify_tournament_export(
    doc: Mapping[str, Any], public_keys: Mapping[str, str] | None = None
) -> Failure | None:
    """``verify_tournament``; an export whose tables lack their events is a format failure."""
    for table in doc.get("tables", []) if isinstance(doc, Mapping) else []:
        try:
            records_of((table.get("export") or {}).get("events", []))
        except (KeyError, TypeError) as exc:
            return Failure(None, "format", f"a table's events lack {exc}")
    return verify_tournament(doc, public_keys)
