"""Verifiable games (docs/architecture.md "Contracts"; docs/verifying.md): receipts, the seal,
the legality audit, the export and the offline verifier, against the real PostgreSQL.

Every tamper test edits the stored rows the way an insider with database access would (the
append-only trigger off, the chain recomputed, the head's snapshot rewritten, so the chain
alone still says "sound"), then asks all three judges: ``/audit``, ``manage.py
verify_events`` and the offline verifier on a fresh export. Each must say "not sound" and name
the seq.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import random
import subprocess
import sys
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from games import play, store
from games.models import Event, Game, GameSeal, SealKey
from games.rules import RuleSet, deck_commitment, legal_commands
from games.verify import key_id, verify_export
from games.verify.__main__ import main as verify_main
from games.verify.bench import recorded_match
from tests.verify import independent
from tests.verify.support import audit, bot_table, datas, export, play_to_end, rewrite

pytestmark = pytest.mark.django_db


@pytest.fixture
def player(auth_client_factory):
    return auth_client_factory()


def finished(player, seed: int, rules: str = "standard", timeouts: float = 0.1) -> str:
    game = bot_table(player.user, rules)
    play_to_end(game.pk, player.user, random.Random(seed), timeouts=timeouts)
    return str(game.pk)


def server_key() -> str:
    (public,) = SealKey.objects.filter(valid_to__isnull=True).values_list("public_key", flat=True)
    return public


def offline(doc: dict, tmp_path, *keys: str) -> tuple[int, str]:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(doc))
    out = StringIO()
    args = [str(path)] + [a for k in keys for a in ("--public-key", k)]
    sys_stdout = sys.stdout
    sys.stdout = out
    try:
        status = verify_main(args)
    finally:
        sys.stdout = sys_stdout
    return status, out.getvalue()


def verdicts(player, game_id: str, tmp_path) -> tuple[dict, str, tuple[int, str]]:
    """What /audit, verify_events and the offline verifier (on a new export) say now."""
    answer = audit(player, game_id)
    out = StringIO()
    with contextlib.suppress(CommandError):
        call_command("verify_events", game_id, stdout=out)
    return answer, out.getvalue(), offline(export(player, game_id), tmp_path, server_key())


def assert_not_sound_at(player, game_id: str, tmp_path, seq: int, check: str) -> None:
    answer, command, (status, printed) = verdicts(player, game_id, tmp_path)
    assert answer["sound"] is False and answer["failure"]["seq"] == seq, answer["failure"]
    assert answer["failure"]["check"] == check, answer["failure"]
    assert f"BROKEN game {game_id}: first bad seq {seq} ({check}:" in command, command
    assert status == 1 and f"FAIL: {check} fails at seq {seq}:" in printed, printed


# ---------------------------------------------------------------- sound games


def test_fifty_exported_games_verify_offline_and_by_the_independent_verifier(player, tmp_path):
    presets = ("standard", "h19")
    key = None
    for i in range(50):
        game_id = finished(player, seed=i, rules=presets[i % 2])
        doc = export(player, game_id)
        key = key or server_key()
        assert doc["revealed"] and doc["seal"]["key_id"] == key_id(key)
        assert verify_export(doc, {key_id(key): key}) is None, (i, game_id)
        assert independent.verify(doc, key) is None, (i, game_id)
        if i % 10 == 0:
            status, printed = offline(doc, tmp_path, key)
            assert status == 0 and printed.startswith("OK: game"), printed
            answer = audit(player, game_id)
            assert answer["sound"] and answer["legal_ok"] and answer["seal_ok"], answer
    kinds = set()
    for game_id in Event.objects.values_list("game_id", flat=True).distinct():
        kinds |= {d["type"] for d in datas(game_id)}
    assert {"turn_timed_out", "round_ended", "match_ended"} <= kinds  # time-outs were played
    out = StringIO()
    call_command("verify_events", stdout=out)
    assert "50 games verified: every game is sound" in out.getvalue()


def test_the_verifier_runs_as_a_module_without_django(player, tmp_path):
    game_id = finished(player, seed=7)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export(player, game_id)))
    code = (
        "import runpy, sys; sys.argv = ['games.verify', sys.argv[1], '--public-key', sys.argv[2]];"
        "\ntry:\n    runpy.run_module('games.verify', run_name='__main__')\nexcept SystemExit as e:"
        "\n    assert not [m for m in sys.modules if m.split('.')[0] in ('django', 'psycopg')]"
        "\n    raise"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path), server_key()],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},  # no DJANGO_SETTINGS_MODULE, no DATABASE_URL
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"OK: game {game_id} is sound")
    other = "00" * 32  # a key that did not sign it
    done = subprocess.run(
        [sys.executable, "-m", "games.verify", str(path), "--public-key", other],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "FAIL: seal fails" in done.stdout, done.stdout


def test_events_stored_without_nonces_still_verify(player, tmp_path, monkeypatch):
    from games import application

    # As before receipts and seeded shuffles: no nonce, no server seed, a shuffle from the rng.
    monkeypatch.setattr(application, "with_server_secrets", lambda data: data)
    game_id = finished(player, seed=3)
    assert not any("nonce" in d for d in datas(game_id))
    answer, command, (status, printed) = verdicts(player, game_id, tmp_path)
    assert answer["sound"] and "every game is sound" in command and status == 0, printed


# ---------------------------------------------------------------- tamper tests


def _first(game_id, kind: str, after: int = 0, **match) -> tuple[int, dict]:
    for seq, data in enumerate(datas(game_id), start=1):
        if seq > after and data["type"] == kind and all(data.get(k) == v for k, v in match.items()):
            return seq, data
    raise AssertionError(f"no {kind}")


def test_the_insider_edit_of_one_move_is_caught_at_its_seq(player, tmp_path):
    """The issue's attack: a draw edited to the card on top of the discard pile (the ace in the
    stock and on the pile at once), the chain recomputed after it, the snapshot rewritten."""
    game_id = finished(player, seed=11)
    events = datas(game_id)
    for seq, data in enumerate(events, start=1):
        if data["type"] == "discarded" and events[seq]["type"] == "drew":
            break
    drew = dict(events[seq], card=data["card"])  # the card just discarded: now in two places
    rewrite(game_id, {seq + 1: drew})
    assert store.verify_chain(game_id) is None  # the chain alone is fooled
    assert_not_sound_at(player, game_id, tmp_path, seq + 1, "legality")


def test_an_edited_deal_with_its_commitment_recomputed_is_caught(player, tmp_path):
    """Two cards swapped between a hand and the stock, the commitment recomputed: the
    commitment check is fooled, the seeded shuffle is not."""
    game_id = finished(player, seed=12)
    seq, deal = _first(game_id, "round_started", after=2)  # round 2's deal
    deal = copy.deepcopy(deal)
    seat = (deal["dealer"] + 1) % 3
    deal["hands"][seat][0], deal["stock"][0] = deal["stock"][0], deal["hands"][seat][0]
    deal["deck_commitment"] = deck_commitment(deal["salt"], deal["hands"], deal["stock"])
    rewrite(game_id, {seq: deal})
    answer = audit(player, game_id)
    assert answer["commitments_ok"] and answer["chain_ok"]  # both fooled
    assert_not_sound_at(player, game_id, tmp_path, seq, "commitment")
    assert "not the shuffle of its seeds" in audit(player, game_id)["failure"]["reason"]
    doc = export(player, game_id)
    assert (
        independent.verify(doc, server_key()) == f"deal at seq {seq}: not the shuffle of its seeds"
    )


def test_a_card_in_two_places_is_caught_at_the_deal(player, tmp_path):
    game_id = finished(player, seed=13)
    seq, deal = _first(game_id, "round_started")
    deal = copy.deepcopy(deal)
    deal["stock"][-1] = deal["hands"][0][0]  # the last stock card is also in seat 0's hand
    deal["deck_commitment"] = deck_commitment(deal["salt"], deal["hands"], deal["stock"])
    rewrite(game_id, {seq: deal})
    assert_not_sound_at(player, game_id, tmp_path, seq, "cards")
    doc = export(player, game_id)
    assert independent.verify(doc, server_key()) == f"deal at seq {seq}: not 52 distinct cards"


def test_a_changed_actor_is_caught(player, tmp_path):
    game_id = finished(player, seed=14)
    seq, _ = _first(game_id, "discarded", seat=0)  # the person's discard, now "by" a bot
    rewrite(game_id, actors={seq: "bot:easy"})
    assert_not_sound_at(player, game_id, tmp_path, seq, "legality")


def test_a_game_rewritten_legally_after_its_seal_fails_the_seal_and_the_receipts(player, tmp_path):
    """A whole other legal match between the same seats put in place of the sealed one: chain
    and legality hold, the seal does not, and the player's saved receipts do not match."""
    game_id = finished(player, seed=15)
    receipts = {e["seq"]: e["hash"] for e in export(player, game_id)["events"]}
    # The insider plays a whole other match for this game id with the rules core: the same
    # seats and rules, seeded deals (the seeds are the insider's now), every move legal.
    started = datas(game_id)[0]
    other = recorded_match(
        random.Random(16),
        RuleSet.from_dict(started["rules"]),
        game_id=game_id,
        seats=started["seats"],
    )
    stream = [(r.actor, r.data) for r in other]
    rewrite(game_id, stream=stream)
    answer, command, (status, printed) = verdicts(player, game_id, tmp_path)
    assert answer["chain_ok"] and answer["legal_ok"] and answer["seal_ok"] is False
    assert answer["sound"] is False and answer["failure"]["check"] == "seal"
    assert f"BROKEN game {game_id}" in command and "(seal:" in command
    assert status == 1 and "FAIL: seal fails" in printed
    doc = export(player, game_id)
    assert independent.verify(doc, server_key()).startswith("seal:")
    assert not independent.receipts_match(doc, receipts)


# ---------------------------------------------------------------- receipts and secrecy


def test_a_redacted_draws_receipt_reveals_nothing_by_brute_force(player):
    game = bot_table(player.user)
    play_to_end(game.pk, player.user, random.Random(21), timeouts=0.0, upto=60)
    feed = player.get(f"/api/v1/games/{game.pk}/events").json()
    assert feed["events"], feed
    deck = [r + s for s in "CDHS" for r in "A23456789TJQK"]
    redacted = 0
    prev = store.GENESIS_HASH
    for item in feed["events"]:
        assert item["prev_hash"] == prev and len(item["hash"]) == 64
        prev = item["hash"]
        data = item["data"]
        if item["type"] != "drew":
            continue
        row = Event.objects.get(game_id=game.pk, seq=item["seq"])
        if data["seat"] == 0:  # my own draw: shown with its nonce, and the receipt checks out
            assert data["nonce"] == row.data["nonce"] and data == row.data
            continue
        assert "card" not in data and "nonce" not in data
        redacted += 1
        guesses = [
            store.event_hash(
                item["prev_hash"],
                game_id=game.pk,
                seq=item["seq"],
                actor=row.actor,
                recorded_at=row.recorded_at,
                data={**data, "card": card},
            )
            for card in deck
        ]
        assert item["hash"] not in guesses
        # The same search against the data without its nonce would have found the card: the
        # nonce, not luck, is what keeps it.
        bare = {k: v for k, v in row.data.items() if k != "nonce"}
        assert (
            store.event_hash(
                item["prev_hash"],
                game_id=game.pk,
                seq=item["seq"],
                actor=row.actor,
                recorded_at=row.recorded_at,
                data=bare,
            )
            in guesses
        )
    assert redacted >= 5


def test_the_server_seed_of_a_round_in_play_is_in_no_response(player):
    """Every seed the server committed to (the round in play's and the next one's) stays out of
    the view, the feed, a command's answer and the export while the match runs; each deal is
    the shuffle of its committed seed, whose hash was published before it."""
    game = bot_table(player.user)
    rng = random.Random(23)
    bodies = []
    for _ in range(4):  # a few rounds, looking at everything a player can read between moves
        play_to_end(game.pk, player.user, rng, timeouts=0.0, upto=store.read(game.pk).version + 40)
        if store.read(game.pk).status == "finished":
            break
        bodies.append(player.get(f"/api/v1/games/{game.pk}").content.decode())
        bodies.append(player.get(f"/api/v1/games/{game.pk}/events").content.decode())
        bodies.append(player.get(f"/api/v1/games/{game.pk}/export").content.decode())
        bodies.append(player.get(f"/api/v1/games/{game.pk}/audit").content.decode())
        state = store.read(game.pk).state()
        if state.turn == 0 and state.in_round:
            command = legal_commands(state, 0)[0]
            answer = player.post(
                f"/api/v1/games/{game.pk}/commands",
                {"command": command, "expected_version": state.version},
                format="json",
            )
            assert answer.status_code == 200, answer.content
            bodies.append(answer.content.decode())
        state = store.read(game.pk).state()
        # The seed of the round in play, or (between rounds) the one committed for the next deal;
        # an ended round's own seed is shown in its round_ended.
        secret = state.server_seed if state.in_round else state.next_server_seed
        assert secret, "a server game always has a committed seed"
        for body in bodies[-5:]:
            assert secret not in body
    events = datas(game.pk)
    committed = events[0]["next_server_seed_hash"]
    for data in events:
        if data["type"] == "round_started":
            assert hashlib.sha256(data["server_seed"].encode()).hexdigest() == committed
        if data["type"] == "round_ended":
            committed = data["next_server_seed_hash"]


def test_export_during_play_gives_only_what_the_feed_gives(player, tmp_path):
    game = bot_table(player.user)
    play_to_end(game.pk, player.user, random.Random(22), timeouts=0.0, upto=30)
    doc = export(player, game.pk)
    feed = player.get(f"/api/v1/games/{game.pk}/events").json()["events"]
    assert not doc["revealed"] and doc["seal"] is None and doc["keys"] == []
    assert [e["data"] for e in doc["events"]] == [e["data"] for e in feed]
    assert [e["hash"] for e in doc["events"]] == [e["hash"] for e in feed]
    assert "salt" not in json.dumps(doc["deals"])
    status, printed = offline(doc, tmp_path)
    assert status == 1 and "the match is not over" in printed


# ---------------------------------------------------------------- the seal and its keys


def test_keys_are_public_and_a_rotation_keeps_old_seals_verifiable(player, api_client, settings):
    first = finished(player, seed=31)
    listed = api_client.get("/api/v1/keys").json()["keys"]
    assert [k["public_key"] for k in listed] == [server_key()]
    old = listed[0]
    assert old["id"] == key_id(old["public_key"]) and old["valid_to"] is None
    settings.TONGITS_SEAL_KEY = "11" * 32  # rotate
    second = finished(player, seed=32)
    listed = api_client.get("/api/v1/keys").json()["keys"]
    assert [k["id"] for k in listed] == [old["id"], key_id(server_key())]
    assert listed[0]["valid_to"] is not None and listed[1]["valid_to"] is None
    assert GameSeal.objects.get(game_id=first).key_id == old["id"]
    assert GameSeal.objects.get(game_id=second).key_id == listed[1]["id"]
    assert audit(player, first)["sound"] and audit(player, second)["sound"]


# ---------------------------------------------------------------- client seeds


def test_players_and_bots_seed_the_next_deal_and_the_verifiers_check_it(player, settings, tmp_path):
    settings.TONGITS_DEAL_INLINE = False  # the table waits between rounds
    settings.TONGITS_NEXT_ROUND_DELAY_SECONDS = 60
    game = bot_table(player.user)
    game_id = str(game.pk)
    rng = random.Random(41)
    first_deal = datas(game_id)[1]
    assert first_deal["client_seeds"] == ["", "", ""]  # dealt with the start: nobody could seed
    play_to_end(game.pk, player.user, rng, timeouts=0.0, until=lambda s: s.phase == "round_over")
    ended_at = store.read(game_id).version
    commitment = datas(game_id)[-1]
    assert commitment["type"] in ("round_ended", "match_ended")
    response = player.post(f"/api/v1/games/{game_id}/seed", {"client_seed": "no spaces"}, "json")
    assert response.status_code == 400 and response.json()["code"] == "invalid"
    response = player.post(f"/api/v1/games/{game_id}/seed", {"client_seed": "ana-42_x"}, "json")
    assert response.status_code == 200, response.content
    (event,) = response.json()["events"]
    assert event["seq"] == ended_at + 1 and event["data"] == {
        "type": "client_seed_set",
        "seat": 0,
        "client_seed": "ana-42_x",
    }
    assert play.deal_next_round(game_id=game_id, expected_version=ended_at + 1) == "done"
    dealt = datas(game_id)[-1]
    assert dealt["type"] == "round_started" and dealt["client_seeds"][0] == "ana-42_x"
    assert all(dealt["client_seeds"][1:])  # the bots sent theirs with their moves
    # A seed on a command (the person's next one) is recorded first, then the command.
    state = store.read(game_id).state()
    play_to_end(game.pk, player.user, rng, timeouts=0.0, until=lambda s: s.turn == 0)
    state = store.read(game_id).state()
    command = legal_commands(state, 0)[-1]
    response = player.post(
        f"/api/v1/games/{game_id}/commands",
        {"command": command, "expected_version": state.version, "client_seed": "again"},
        "json",
    )
    assert response.status_code == 200, response.content
    types = [e["type"] for e in response.json()["events"]]
    assert types[0] == "client_seed_set" and len(types) >= 2
    play_to_end(game.pk, player.user, rng, timeouts=0.05)
    doc = export(player, game_id)
    assert verify_export(doc, {key_id(server_key()): server_key()}) is None
    assert independent.verify(doc, server_key()) is None
    response = player.post(f"/api/v1/games/{game_id}/seed", {"client_seed": "late"}, "json")
    assert response.status_code == 422 and response.json()["code"] == "wrong_phase"


def test_a_deal_with_a_client_seed_swapped_afterwards_is_caught(player, tmp_path):
    game_id = finished(player, seed=42)
    seq, deal = _first(game_id, "round_started", after=2)
    assert any(deal["client_seeds"])
    deal = dict(deal, client_seeds=["forged", *deal["client_seeds"][1:]])
    rewrite(game_id, {seq: deal})
    assert_not_sound_at(player, game_id, tmp_path, seq, "commitment")


def test_a_finished_match_without_a_seal_is_not_sound_until_sealed(player, tmp_path):
    """Matches that ended before seals existed: no seal, so not sound; ``verify_events
    --seal-missing`` seals them (reads never write)."""
    game_id = finished(player, seed=43)
    GameSeal.objects.filter(game_id=game_id).delete()
    answer = audit(player, game_id)
    assert answer["seal_ok"] is False and answer["failure"]["check"] == "seal"
    assert not GameSeal.objects.filter(game_id=game_id).exists()
    with pytest.raises(CommandError):
        call_command("verify_events", game_id, stdout=StringIO())
    out = StringIO()
    call_command("verify_events", game_id, "--seal-missing", stdout=out)
    assert "every game is sound" in out.getvalue()
    assert audit(player, game_id)["sound"]


def test_server_events_with_receipts_and_seeds_fit_the_event_schemas(player, settings):
    """The typed event schemas (strict: no undeclared field) hold the server's own events too:
    nonces, committed seeds, client seeds, as a player's feed and a finished export show them."""
    from drf_spectacular.generators import SchemaGenerator

    from tests.api.test_event_schemas import strict, validator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    check = validator(strict(json.loads(json.dumps(schema["components"]["schemas"]))), "Event")
    settings.TONGITS_DEAL_INLINE = False
    settings.TONGITS_NEXT_ROUND_DELAY_SECONDS = 60
    game = bot_table(player.user)
    rng = random.Random(44)
    play_to_end(game.pk, player.user, rng, timeouts=0.1, until=lambda s: s.phase == "round_over")
    response = player.post(f"/api/v1/games/{game.pk}/seed", {"client_seed": "s33d"}, "json")
    assert response.status_code == 200, response.content
    shown = player.get(f"/api/v1/games/{game.pk}/events").json()["events"]
    play_to_end(game.pk, player.user, rng, timeouts=0.1)
    shown += export(player, game.pk)["events"]
    kinds = {e["type"] for e in shown}
    assert {"client_seed_set", "round_started", "drew", "round_ended"} <= kinds
    assert any("nonce" in e["data"] for e in shown)
    for event in shown:
        assert [e.message for e in check.iter_errors(event["data"])] == [], event


def test_with_a_first_deal_window_round_one_is_seeded_too(player, settings, tmp_path):
    """TONGITS_SEED_WINDOW_SECONDS > 0: the start writes game_started only (with its
    commitment); the table waits in "dealing", due when the window ends, and a seat's seed sent
    meanwhile is mixed into round 1's shuffle; the verifiers check it."""
    settings.TONGITS_SEED_WINDOW_SECONDS = 30
    before = timezone.now()
    game = bot_table(player.user)
    game_id = str(game.pk)
    game.refresh_from_db()
    assert [d["type"] for d in datas(game_id)] == ["game_started"]
    assert datas(game_id)[0]["next_server_seed_hash"]
    assert (game.phase, game.awaiting) == ("dealing", Game.Awaiting.DEAL)
    assert game.due_at >= before + timedelta(seconds=30)
    view = player.get(f"/api/v1/games/{game_id}").json()
    assert view["legal_commands"] == [] and view["view"]["hand"] == []
    response = player.post(f"/api/v1/games/{game_id}/seed", {"client_seed": "round-1"}, "json")
    assert response.status_code == 200, response.content
    version = store.read(game_id).version
    assert play.deal_next_round(game_id=game_id, expected_version=version) == "done"
    dealt = datas(game_id)[-1]
    assert dealt["type"] == "round_started" and dealt["client_seeds"] == ["round-1", "", ""]
    play_to_end(game.pk, player.user, random.Random(7), timeouts=0.05)
    doc = export(player, game_id)
    assert verify_export(doc, {key_id(server_key()): server_key()}) is None
    assert independent.verify(doc, server_key()) is None
