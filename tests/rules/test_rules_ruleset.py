"""docs/rules.md "Variants at a glance", "Payments" and "Turn cap": RuleSet options and presets."""

import dataclasses
import json

import pytest

from games.rules import RuleSet

STANDARD = {
    "ace_high_runs": False,
    "take_discard_to_lay_off": False,
    "draw_call": True,
    "secret_sets": True,
    "burning": True,
    "stock_out_tie": "last_drawer",
    "wins_to_match": 3,
    "turn_seconds": 20,
    "turn_cap": 200,
    "base": 1,
    "tongits": 3,
    "draw_won_challenged": 3,
    "per_ace": 1,
    "per_secret_set": 3,
    "burned_penalty": 1,
}

HOUSE_TABLE = {
    "ace_high_runs": True,
    "take_discard_to_lay_off": True,
    "draw_call": False,
    "secret_sets": True,
    "burning": False,
    "stock_out_tie": "fewer_cards",
    "wins_to_match": 3,
    "turn_seconds": 20,
}


def test_standard_preset_has_all_rules_md_defaults():
    rules = RuleSet.preset("standard")
    for name, value in STANDARD.items():
        assert getattr(rules, name) == value, name


def test_house_preset_matches_variants_table_house_column():
    rules = RuleSet.preset("house")
    for name, value in HOUSE_TABLE.items():
        assert getattr(rules, name) == value, name


def test_preset_shortcuts_equal_named_presets():
    assert RuleSet.standard() == RuleSet.preset("standard")
    assert RuleSet.house() == RuleSet.preset("house")
    assert RuleSet.standard() != RuleSet.house()


def test_unknown_preset_is_rejected():
    with pytest.raises((ValueError, KeyError)):
        RuleSet.preset("no_such_variant")


@pytest.mark.parametrize("name", ["standard", "house"])
def test_to_dict_is_json_and_round_trips(name):
    rules = RuleSet.preset(name)
    d = rules.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert RuleSet.from_dict(d) == rules
    for option in STANDARD:
        assert option in d, option


def test_from_dict_partial_applies_on_top_of_standard_defaults():
    rules = RuleSet.from_dict({"burning": False, "per_ace": 2})
    assert rules == dataclasses.replace(RuleSet.standard(), burning=False, per_ace=2)
    assert RuleSet.from_dict({}) == RuleSet.standard()


def test_from_dict_unknown_key_raises_value_error():
    with pytest.raises(ValueError):
        RuleSet.from_dict({"jokers": True})


def test_ruleset_is_frozen_and_replace_works():
    rules = RuleSet.standard()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.burning = False
    changed = dataclasses.replace(rules, turn_cap=6, wins_to_match=1)
    assert changed.turn_cap == 6 and changed.wins_to_match == 1
    assert rules.turn_cap == 200 and rules.wins_to_match == 3
    assert RuleSet.from_dict(changed.to_dict()) == changed


# ---------------------------------------------------------------- options added with h19

NEW_OPTIONS = {"draw_call_timing", "draw_folded", "first_dealer", "stake"}


def test_new_options_default_to_the_old_behaviour():
    rules = RuleSet.standard()
    assert rules.draw_call_timing == "start" and not rules.in_turn
    assert rules.draw_folded is None
    assert rules.first_dealer == "random"
    assert rules.stake == 1
    assert RuleSet.house().draw_call_timing == "start" and RuleSet.house().stake == 1


@pytest.mark.parametrize("name", ["standard", "house"])
def test_stored_rules_dicts_from_before_the_new_options_still_load(name):
    stored = {k: v for k, v in RuleSet.preset(name).to_dict().items() if k not in NEW_OPTIONS}
    assert set(STANDARD) == set(stored)  # exactly the options that existed before
    assert RuleSet.from_dict(stored) == RuleSet.preset(name)
    assert RuleSet.from_dict(dict(STANDARD)) == RuleSet.standard()


@pytest.mark.parametrize("name", ["standard", "house", "h19"])
def test_every_preset_round_trips_with_the_new_options(name):
    rules = RuleSet.preset(name)
    d = rules.to_dict()
    assert set(d) >= NEW_OPTIONS
    assert json.loads(json.dumps(d)) == d
    assert RuleSet.from_dict(json.loads(json.dumps(d))) == rules


def test_new_options_round_trip_when_changed():
    rules = RuleSet.from_dict(
        {
            "draw_call_timing": "in_turn",
            "draw_folded": 0,
            "first_dealer": "creator",
            "stake": 100,
            "stock_out_tie": "last_drawer_loses",
        }
    )
    assert rules.in_turn and rules.draw_folded == 0 and rules.stake == 100
    assert RuleSet.from_dict(rules.to_dict()) == rules
    assert RuleSet.from_dict({"preset": "h19", "stake": 10}).stake == 10
    assert RuleSet.from_dict({"preset": "h19", "draw_folded": None}).draw_folded is None


@pytest.mark.parametrize(
    "bad",
    [
        {"draw_call_timing": "whenever"},
        {"draw_call_timing": 1},
        {"stock_out_tie": "first_drawer_loses"},
        {"first_dealer": "oldest"},
        {"draw_folded": -1},
        {"draw_folded": True},
        {"draw_folded": "1"},
        {"stake": 0},
        {"stake": -10},
        {"stake": 1.5},
    ],
)
def test_new_options_refuse_bad_values(bad):
    with pytest.raises(ValueError):
        RuleSet.from_dict(bad)
