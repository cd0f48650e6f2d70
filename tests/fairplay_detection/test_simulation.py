"""The simulation at its seed, small enough for the suite: colluding bots and feeders are
flagged, honest bots are not; the evidence names real decisions of the log."""

from __future__ import annotations

import random

from fairplay.detection import simulate
from fairplay.detection.scoring import score_match
from fairplay.detection.stats import Thresholds


def test_colluders_and_feeders_are_flagged_and_honest_pairs_are_not():
    run, series, shares = simulate.simulate(
        seed=1,
        honest_pairs=8,
        colluding_pairs=3,
        feeders=2,
        matches=12,
        checkpoints=(12,),
        thresholds=Thresholds(),
        thirds=20,
    )
    assert run.matches == (8 + 3 + 2) * 12
    by_kind: dict[str, list[simulate.Series]] = {}
    for s in series:
        by_kind.setdefault(s.kind, []).append(s)
    assert all(s.flagged_at is not None for s in by_kind["colluding"]), by_kind["colluding"]
    # A feeder who resigns is flagged for chip dumping; one who plays to lose, for feeding the
    # main (collusion) this early, for chip dumping too by 50 matches (docs/fair-play.md).
    assert all(s.flagged_at is not None for s in by_kind["resigner"])
    assert all(s.any_flag_at is not None for s in by_kind["loser"])
    assert all(s.any_flag_at is None for s in by_kind["honest"]), by_kind["honest"]
    kinds = {kind for kind, _ in run.flagged}
    assert kinds <= {"collusion", "chip_dumping"}
    assert shares[12]["colluding"] == 1.0 and shares[12]["honest"] == 0.0
    assert shares[12]["incidental"] == 0


def test_a_colluders_feeds_are_discards_its_partner_took_while_a_safer_card_was_held():
    rng = random.Random(7)
    kinds = {1: "colluder", 2: "colluder", 3: "normal"}
    partners = {1: 2, 2: 1}
    rules = simulate.dataclasses.replace(simulate.RuleSet.preset("standard"), stake=5)
    feeds = pair_feeds = 0
    for _ in range(4):
        accounts = [1, 2, 3]
        rng.shuffle(accounts)
        events, paid = simulate.play_one(rng, accounts, kinds, partners, rules)
        found = score_match("g", events, accounts, paid, simulate.BUY_IN)
        assert sum(paid) == 0
        for d in found.decisions:
            if d["signal"] != "feed":
                continue
            feeds += 1
            discard, taken = events[d["seq"] - 1], events[d["seq"]]
            assert discard["type"] == "discarded" and discard["card"] == d["card"]
            assert taken["type"] == "took_discard" and taken["card"] == d["card"]
            assert accounts[discard["seat"]] == d["by"] and accounts[taken["seat"]] == d["for"]
            pair_feeds += {d["by"], d["for"]} == {1, 2}
        ab = found.pairs[(1, 2)]
        assert ab.games == 1 and ab.chips == -found.pairs[(2, 1)].chips
    assert pair_feeds > feeds / 2  # mostly the partner, not the third seat


def test_the_settings_defaults_are_the_thresholds_the_simulation_chose(settings):
    chosen = Thresholds()
    assert chosen.collusion == settings.TONGITS_FAIRPLAY_COLLUSION_THRESHOLD
    assert chosen.chip_dumping == settings.TONGITS_FAIRPLAY_CHIP_DUMPING_THRESHOLD
    assert chosen.dumping_min_chips == settings.TONGITS_FAIRPLAY_DUMPING_MIN_CHIPS
    assert chosen.min_games == settings.TONGITS_FAIRPLAY_MIN_GAMES
