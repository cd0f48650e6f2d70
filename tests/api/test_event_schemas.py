"""Every event type of the rules core has its schema, and every event, as each seat, a
spectator and a finished match's reader see it, fits that schema exactly (no undeclared field)."""

import copy
import dataclasses
import json
import random

import pytest
from drf_spectacular.generators import SchemaGenerator
from openapi_schema_validator import OAS30Validator

from games.api.event_schemas import EVENT_COMPONENTS
from games.rules import RuleSet, fold, time_out
from games.rules.events import EVENT_TYPES, GameStarted, Melded
from games.rules.selfplay import play_match
from games.rules.state import DEALING, MATCH_OVER, ROUND_OVER, evolve
from games.rules.views import player_view, redact_event

CORE_TYPES = {"game_started", "round_started", "drew", "took_discard", "melded", "laid_off"}
CORE_TYPES |= {"discarded", "draw_called", "challenged", "folded", "turn_timed_out"}
CORE_TYPES |= {"round_ended", "match_ended"}
API_SEATS = (
    {"kind": "user", "user_id": 7, "username": "maria"},
    {"kind": "bot", "level": "normal"},
    {"kind": "bot", "level": "hard"},
)


@pytest.fixture(scope="module")
def components() -> dict:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(json.dumps(schema["components"]["schemas"], default=str))


def strict(components: dict) -> dict:
    """The components with ``additionalProperties: false`` on every object: undeclared fields
    fail, as they would leave a generated model."""
    out = copy.deepcopy(components)
    for schema in out.values():
        if schema.get("type") == "object" and "properties" in schema:
            schema["additionalProperties"] = False
            for name, prop in schema["properties"].items():
                schema["properties"][name] = nullable_ref(prop)
    return out


def nullable_ref(prop: dict) -> dict:
    """``{allOf: [$ref], nullable: true}`` (drf-spectacular's nullable nested object) as the
    generators read it, null or the object; the validator would not let null through the $ref."""
    if prop.get("nullable") and len(prop.get("allOf", ())) == 1:
        return {"anyOf": [prop["allOf"][0], {"enum": [None], "nullable": True}]}
    return prop


def validator(components: dict, name: str) -> OAS30Validator:
    document = {"$ref": f"#/components/schemas/{name}", "components": {"schemas": components}}
    return OAS30Validator(document)


def sample_events() -> list:
    """Events of whole bot matches under each preset, plus time-outs, with the lobby's seats."""
    events = []
    presets = ["standard", "house", "h19"]
    for seed in range(1, 40):
        preset = presets[seed % 3]
        if seed > 3 and {e.type for e in events} >= CORE_TYPES:
            break
        record = play_match(
            ["normal", "easy", "normal"], random.Random(seed), RuleSet.preset(preset)
        )
        first = record.events[0]
        events.append(GameStarted(first.rules, API_SEATS, first.first_dealer))
        events += record.events[1:]
        # A turn that times out, in the first round of the same match.
        state = fold(record.events[:2])
        events += time_out(state)
    # A secret set: redacted for the other seats to its size.
    events.append(Melded(1, 1, "set", ("7C", "7D", "7H", "7S"), hidden=True))
    return events


def test_every_rules_event_type_has_a_schema_with_its_fields(components):
    event = components["Event"]
    assert event["discriminator"]["propertyName"] == "type"
    assert set(event["discriminator"]["mapping"]) == set(EVENT_TYPES)
    for event_type, cls in EVENT_TYPES.items():
        schema = components[EVENT_COMPONENTS[event_type]]
        declared = set(schema["properties"])
        assert {f.name for f in dataclasses.fields(cls)} | {"type"} <= declared, event_type
        assert "type" in schema["required"]
        if "card" in schema["properties"]:
            assert schema["properties"]["card"]["pattern"] == "^[A2-9TJQK][CDHS]$"
        if "card" in schema["properties"]:
            assert schema["properties"]["card"]["pattern"] == "^[A2-9TJQK][CDHS]$"
        for name, prop in schema["properties"].items():
            # No untyped object: every property has a type, a $ref or a oneOf.
            assert {"type", "$ref", "allOf", "oneOf"} & set(prop), (event_type, name)


def test_every_event_redacted_and_revealed_fits_its_schema(components):
    strict_components = strict(components)
    check = validator(strict_components, "Event")
    seen = set()
    for event in sample_events():
        data = event.to_dict()
        seen.add(data["type"])
        for seat in (0, 1, 2, None):
            shape = redact_event(data, seat)
            errors = [e.message for e in check.iter_errors(shape)]
            assert errors == [], (seat, shape)
        errors = [e.message for e in check.iter_errors(redact_event(data, None, reveal=True))]
        assert errors == [], data
    assert seen >= CORE_TYPES


def test_player_views_fit_their_schema(components):
    check = validator(strict(components), "PlayerView")
    record = play_match(["normal", "easy", "normal"], random.Random(5), RuleSet.preset("standard"))
    state = fold([record.events[0]])
    for index, event in enumerate(record.events[1:]):
        state = evolve(state, event)
        if index % 7 and state.phase not in (DEALING, ROUND_OVER, MATCH_OVER):
            continue
        for seat in (0, 1, 2, None):
            view = player_view(state, seat)
            assert [(list(e.path), e.message) for e in check.iter_errors(view)] == [], view
        revealed = player_view(state, None, reveal=True)
        assert [e.message for e in check.iter_errors(revealed)] == [], revealed


def test_an_unmappable_event_field_fails_loudly():
    from games.api.event_schemas import event_serializer
    from games.rules.events import Event

    @dataclasses.dataclass(frozen=True)
    class Odd(Event):
        type = "odd"
        payload: dict

    with pytest.raises(TypeError, match="FIELD_OVERRIDES"):
        event_serializer(Odd)
