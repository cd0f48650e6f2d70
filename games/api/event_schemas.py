"""One OpenAPI schema per event type (a ``oneOf`` discriminated on ``type``), derived from the
rules core's event dataclasses (``games.rules.events.EVENT_TYPES``).

Adding an event type to the rules core is the whole change: its schema is built here from the
dataclass's fields and their annotations. Two tables cover what annotations cannot say:
``FIELD_OVERRIDES`` (a field whose JSON is more than its Python type: card codes, rules, seats,
enums) and ``REDACTED`` (what ``games.rules.views.redact_event`` removes or adds for a seat that
may not see everything). An annotation this module cannot map raises at import, so an event
never ships untyped; tests/api/test_event_schemas.py checks every event type, redacted and
revealed, against its schema.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable
from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from games.api.commands import CARD_PATTERN
from games.rules import RuleSet
from games.rules.bots import LEVELS
from games.rules.events import EVENT_TYPES, Event
from games.rules.ruleset import DRAW_CALL_TIMINGS, FIRST_DEALERS, STOCK_OUT_TIES

Factory = Callable[..., serializers.Field]

MELD_KINDS = ("set", "run")
ROUND_END_REASONS = ("tongits", "draw", "stock_out", "turn_cap")
BOT_LEVELS = tuple(LEVELS)


class CardField(serializers.CharField):
    """A card code as the server writes it (documented with its pattern)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("help_text", 'A card code, rank then suit: "AS", "7H", "TD".')
        super().__init__(**kwargs)
        # Added here, not after construction: DRF re-creates declared fields from their
        # arguments when it copies a serializer's fields.
        self.validators.append(RegexValidator(CARD_PATTERN))


def card_field(**kwargs: Any) -> serializers.Field:
    return CardField(**kwargs)


def cards_field(**kwargs: Any) -> serializers.Field:
    return serializers.ListField(child=card_field(), **kwargs)


class EventSeatSerializer(serializers.Serializer):
    """A seat as ``game_started`` records it."""

    kind = serializers.ChoiceField(choices=["user", "bot"])
    user_id = serializers.IntegerField(required=False)
    username = serializers.CharField(required=False)
    level = serializers.ChoiceField(choices=BOT_LEVELS, required=False)


#: Fields whose JSON says more than their annotation (by field name, or "type.field").
FIELD_OVERRIDES: dict[str, Factory] = {
    "card": card_field,
    "cards": cards_field,
    "stock": cards_field,
    "hands": lambda **kw: serializers.ListField(child=cards_field(), **kw),
    "rules": lambda **kw: rules_serializer()(**kw),
    "seats": lambda **kw: EventSeatSerializer(many=True, **kw),
    "kind": lambda **kw: serializers.ChoiceField(choices=MELD_KINDS, **kw),
    "round_ended.reason": lambda **kw: serializers.ChoiceField(choices=ROUND_END_REASONS, **kw),
    "salt": lambda **kw: serializers.CharField(help_text="The deal's salt (revealed only).", **kw),
}

#: Fields left out of an event while empty: seeded shuffles (docs/verifying.md; the rules core's
#: own games have none, and the next deal's seed is redacted from every reader until the match
#: ends), a table's buy-in and its room's service fee (docs/chips.md; 0 is left out).
OPTIONAL = {
    "next_server_seed",
    "next_server_seed_hash",
    "server_seed",
    "client_seeds",
    "buy_in",
    "fee_percent",
}
#: The events whose content some reader may not see (``games.rules.hidden_from_some``): the
#: server stores a random ``nonce`` in them, shown and redacted with that content.
NONCE_EVENTS = ("round_started", "drew", "melded")


def nonce_field() -> serializers.Field:
    return serializers.RegexField(
        r"^[0-9a-f]{32}$",
        required=False,
        help_text="16 random bytes, hex: keeps the event's hash from telling its hidden "
        "content. Present when you may see that content (absent in events stored before "
        "receipts).",
    )


#: Per event type: the fields a seat that may not see them does not get ("absent"), and the
#: ones redaction puts in their place ("added"), as ``games.rules.views.redact_event`` does.
REDACTED: dict[str, dict[str, Any]] = {
    "round_started": {
        "absent": ("hands", "stock", "salt", "server_seed"),
        "added": {
            "hand_counts": lambda: serializers.ListField(
                child=serializers.IntegerField(), required=False, help_text="Redacted only."
            ),
            "stock_count": lambda: serializers.IntegerField(
                required=False, help_text="Redacted only."
            ),
            "hand": lambda: cards_field(
                required=False, help_text="Redacted only: your own hand (players only)."
            ),
        },
    },
    "drew": {"absent": ("card",)},
    "melded": {
        "absent": ("cards",),
        "added": {
            "size": lambda: serializers.IntegerField(
                required=False, help_text="Another's secret set: its size instead of its cards."
            )
        },
    },
}


def _annotation_field(name: str, hint: Any, **kwargs: Any) -> serializers.Field:
    """The serializer field of a plain annotation; anything else must be in FIELD_OVERRIDES."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union) and type(None) in args:
        (inner,) = [a for a in args if a is not type(None)]
        return _annotation_field(name, inner, allow_null=True, **kwargs)
    if hint is bool:
        return serializers.BooleanField(**kwargs)
    if hint is int:
        return serializers.IntegerField(**kwargs)
    if hint is str:
        return serializers.CharField(allow_blank=True, **kwargs)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return serializers.ListField(child=_annotation_field(name, args[0]), **kwargs)
    raise TypeError(
        f"event field {name!r}: no schema for {hint!r}; add it to FIELD_OVERRIDES "
        "in games/api/event_schemas.py"
    )


#: The rules options that are enums (the others are typed by their annotation).
RULES_CHOICES = {
    "stock_out_tie": STOCK_OUT_TIES,
    "draw_call_timing": DRAW_CALL_TIMINGS,
    "first_dealer": FIRST_DEALERS,
}
_rules_serializer: list[type[serializers.Serializer]] = []


def rules_serializer() -> type[serializers.Serializer]:
    """``Rules``: every option of a RuleSet (``RuleSet.to_dict``), derived from the dataclass,
    so an option added to the rules core is documented with it."""
    if not _rules_serializer:
        hints = typing.get_type_hints(RuleSet)
        attrs: dict[str, Any] = {"__doc__": "Every option of a table's rules (docs/rules.md)."}
        for f in dataclasses.fields(RuleSet):
            if f.name in RULES_CHOICES:
                attrs[f.name] = serializers.ChoiceField(choices=RULES_CHOICES[f.name])
            else:
                attrs[f.name] = _annotation_field(f.name, hints[f.name])
        _rules_serializer.append(type("RulesSerializer", (serializers.Serializer,), attrs))
    return _rules_serializer[0]


def _camel(event_type: str) -> str:
    return "".join(part.capitalize() for part in event_type.split("_"))


def _type_field(event_type: str) -> serializers.Field:
    @extend_schema_field({"type": "string", "enum": [event_type]})
    class TypeField(serializers.ChoiceField):
        pass

    return TypeField(choices=[event_type])


def event_serializer(cls: type[Event]) -> type[serializers.Serializer]:
    """The schema of one event type: its dataclass fields, redacted ones optional."""
    hints = typing.get_type_hints(cls)
    redacted = REDACTED.get(cls.type, {})
    absent = set(redacted.get("absent", ()))
    attrs: dict[str, Any] = {"type": _type_field(cls.type)}
    for f in dataclasses.fields(cls):
        kwargs: dict[str, Any] = {}
        if f.name in absent or f.name in OPTIONAL:
            kwargs["required"] = False
        factory = FIELD_OVERRIDES.get(f"{cls.type}.{f.name}") or FIELD_OVERRIDES.get(f.name)
        attrs[f.name] = (
            factory(**kwargs) if factory else _annotation_field(f.name, hints[f.name], **kwargs)
        )
    for name, factory in redacted.get("added", {}).items():
        attrs[name] = factory()
    if cls.type in NONCE_EVENTS:
        attrs["nonce"] = nonce_field()
    doc = (cls.__doc__ or "").strip()
    if not doc or doc.startswith(cls.__name__ + "("):  # the dataclass's generated signature
        doc = f"The `{cls.type}` event."
    if absent:
        doc += (
            f" Redacted for a seat that may not see them: without {', '.join(sorted(absent))}"
            + (f"; with {', '.join(redacted['added'])} instead" if redacted.get("added") else "")
            + ". Revealed (a finished match): every field."
        )
    attrs["__doc__"] = doc
    return type(f"{_camel(cls.type)}EventSerializer", (serializers.Serializer,), attrs)


EVENT_SERIALIZERS: dict[str, type[serializers.Serializer]] = {
    event_type: event_serializer(cls) for event_type, cls in EVENT_TYPES.items()
}
EVENT_COMPONENTS: dict[str, str] = {
    event_type: re.sub("Serializer$", "", s.__name__) for event_type, s in EVENT_SERIALIZERS.items()
}


def event_schema(**kwargs: Any) -> PolymorphicProxySerializer:
    """The ``oneOf`` of every event type, discriminated on ``type``."""
    return PolymorphicProxySerializer(
        component_name="Event",
        serializers=EVENT_SERIALIZERS,
        resource_type_field_name="type",
        **kwargs,
    )


@extend_schema_field(event_schema())
class EventDataField(serializers.DictField):
    """An event as the reader may see it (``games.rules.views.redact_event``)."""


@extend_schema_field({"type": "string", "enum": list(EVENT_TYPES)})
class EventTypeField(serializers.CharField):
    """The event's type (also ``data.type``)."""
