"""The offline verifier over a tournament's export: a finished event is sound, and each kind of
tampering is caught at its own check (the draw against the commitment, a swapped table, a
changed winner, standing or prize, the seal)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

from games.verify import tournaments as bracket
from tests.tournaments.support import create, play_out, soon, url
from tournaments import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def export(auth_client_factory, user_factory, settings):
    """A finished nine-entrant event (three people, six bots), exported."""
    settings.TONGITS_SIGNUP_GRANT = 1000
    staff = auth_client_factory(user_factory(is_staff=True))
    made = create(
        staff.user, entrants=9, buy_in=100, starts_at=soon(), bots=True, minimum=3, prizes=[60, 40]
    )
    for seed in ("alpha", "beta", "gamma"):
        services.register(user=user_factory(), tournament_id=made.pk, seed=seed)
    assert play_out(made, now=made.starts_at) == "finished"
    response = staff.get(url(made.pk, "/export"))
    assert response.status_code == 200, response.content
    return response.json()


def failure_of(doc) -> tuple[str, str] | None:
    found = bracket.verify_tournament_export(doc)
    return None if found is None else (found.check, found.reason)


def test_a_finished_tournament_verifies_and_each_tampering_is_caught_where_it_is(export, tmp_path):
    assert failure_of(export) is None
    assert export["manifest"]["pool"] == 300
    assert [(p["place"], p["amount"]) for p in export["prizes"]] == [(1, 180), (2, 120)]

    # The seed revealed is not the one committed to before the start.
    doc = copy.deepcopy(export)
    doc["seed"] = "0" * 64
    assert failure_of(doc) == ("commitment", "the revealed seed is not the one committed to")

    # A draw that does not follow from the seed: two entrants traded seats across tables.
    doc = copy.deepcopy(export)
    first, second = doc["tables"][0], doc["tables"][1]
    first["entrants"][1], second["entrants"][1] = second["entrants"][1], first["entrants"][1]
    check, reason = failure_of(doc)
    assert check == "draw" and reason.startswith("stage 1 table 0:")

    # A swapped table: table 0 shows table 1's match.
    doc = copy.deepcopy(export)
    for key in ("game", "export", "match_seal"):
        doc["tables"][0][key], doc["tables"][1][key] = doc["tables"][1][key], doc["tables"][0][key]
    assert failure_of(doc) == ("match", "stage 1 table 0: its seats are not the drawn entrants")

    # A winner the match does not give.
    doc = copy.deepcopy(export)
    table = doc["tables"][2]
    table["winner"] = next(e for e in table["entrants"] if e != table["winner"])
    check, reason = failure_of(doc)
    assert check == "winners" and reason.startswith("stage 1 table 2:")

    # A changed standing.
    doc = copy.deepcopy(export)
    doc["standings"][0]["place"], doc["standings"][1]["place"] = 2, 1
    assert failure_of(doc)[0] == "standings"

    # A prize not following the structure (the pool's remainder moved down a place).
    doc = copy.deepcopy(export)
    doc["prizes"][0]["amount"] -= 10
    doc["prizes"][1]["amount"] += 10
    assert failure_of(doc)[0] == "prizes"

    # A prize paid to someone else than the place's entrant.
    doc = copy.deepcopy(export)
    doc["prizes"][0]["entrant"], doc["prizes"][1]["entrant"] = (
        doc["prizes"][1]["entrant"],
        doc["prizes"][0]["entrant"],
    )
    assert failure_of(doc)[0] == "prizes"

    # Anything else changed after the seal: the signature does not verify.
    doc = copy.deepcopy(export)
    doc["manifest"]["name"] = "Renamed"
    assert failure_of(doc) == ("seal", "the tournament's signature does not verify")

    # The command line says where, with exit status 1.
    path = tmp_path / "tampered.json"
    doc = copy.deepcopy(export)
    doc["standings"][0]["place"] = 9
    path.write_text(json.dumps(doc))
    run = subprocess.run([sys.executable, "-m", "games.verify", str(path)], capture_output=True)
    assert run.returncode == 1
    assert run.stdout.decode().startswith("FAIL: standings fails at the game:")


def test_the_draw_spreads_people_before_bots_and_depends_on_every_seed():
    entrants = [{"kind": "user", "seed": f"s{n}"} for n in range(4)]
    entrants += [{"kind": "bot", "seed": ""} for _ in range(5)]
    tables = bracket.draw("t", 1, "seed", entrants, list(range(9)))
    assert sorted(e for t in tables for e in t) == list(range(9))
    assert [sum(1 for e in t if e < 4) for t in tables] in ([2, 1, 1], [1, 2, 1], [1, 1, 2])
    assert all(t[0] < 4 for t in tables)  # a person first at every table
    assert bracket.draw("t", 1, "seed", entrants, list(range(9))) == tables  # deterministic
    changed = []
    for n in range(5):
        other = [dict(e) for e in entrants]
        other[3]["seed"] = f"changed {n}"
        changed.append(bracket.draw("t", 1, "seed", other, list(range(9))) != tables)
    assert any(changed)  # an entrant's own seed moves the draw
    assert bracket.prize_amounts(7, [50, 30, 20]) == [4, 2, 1]
    assert bracket.prize_amounts(900, [50, 30, 20]) == [450, 270, 180]
