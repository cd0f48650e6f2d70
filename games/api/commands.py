"""One schema per command type (a ``oneOf`` discriminated on ``type``), and the input field that
validates a command against it.

``COMMAND_SERIALIZERS`` is the one table: the OpenAPI schema of the command body and of
``legal_commands`` is built from it, and ``CommandField`` validates with it, so the schema and
the server agree: a command the schema rejects (no ``type``, an unknown type, a missing or
mistyped field, a string that is not a card code) is 400 ``invalid``; whether a well-formed
command is legal stays the rules core's question (422 with its code).
"""

from __future__ import annotations

import re
from typing import Any

from django.core.validators import RegexValidator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers
from rest_framework.utils.serializer_helpers import BindingDict

from core.api_fields import StrictBooleanField, StrictCharField, StrictIntegerField
from games.rules import COMMAND_TYPES

#: Card codes the server reads: rank then suit ("AS", "7H", "TD"), "10" for ten, any one case.
CARD_INPUT_PATTERN = r"^(?:[A2-9TJQK]|10)[CDHS]$|^(?:[a2-9tjqk]|10)[cdhs]$"
#: Card codes the server writes.
CARD_PATTERN = r"^[A2-9TJQK][CDHS]$"
CARD_HELP = 'A card code, rank then suit: "AS", "7H", "TD" ("10D" and lower case accepted).'


class InputSerializer(serializers.Serializer):
    """A serializer that only validates a request body, its fields built once per class.

    DRF deep-copies every declared field for each serializer instance; for the command body,
    checked on every move (its outer serializer and the command's own), that copying is a
    visible share of a web process's CPU under load (docs/scaling.md). These fields keep no state
    between calls and read no context (no ``partial``, no request), so one bound set serves
    every instance, from any thread. Not for serializers that output data or use a context.
    """

    @property
    def fields(self) -> BindingDict:  # type: ignore[override]
        shared = type(self).__dict__.get("_shared_fields")
        if shared is None:
            shared = BindingDict(self)
            for name, field in self.get_fields().items():
                shared[name] = field
            type(self)._shared_fields = shared  # a race builds two alike; either serves
        return shared


class CardInputField(StrictCharField):
    """A card code as the schema's pattern says: a string, spaces around it refused too."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("help_text", CARD_HELP)
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)
        self.validators.append(RegexValidator(CARD_INPUT_PATTERN, gettext_lazy("Not a card code.")))


def _type_field(command_type: str) -> serializers.Field:
    """The discriminator: a string that must be this one command type."""

    @extend_schema_field({"type": "string", "enum": [command_type]})
    class TypeField(serializers.ChoiceField):
        pass

    return TypeField(choices=[command_type])


def _cards(help_text: str, *, required: bool = True, allow_null: bool = False) -> serializers.Field:
    return serializers.ListField(
        child=CardInputField(), min_length=1, required=required, allow_null=allow_null,
        help_text=help_text,
    )  # fmt: skip


def _command(name: str, command_type: str, doc: str, **fields: serializers.Field) -> type:
    attrs = {"__doc__": doc, "type": _type_field(command_type), **fields}
    return type(name, (InputSerializer,), attrs)


COMMAND_SERIALIZERS: dict[str, type[serializers.Serializer]] = {
    "draw": _command("DrawCommandSerializer", "draw", "Draw the top card of the stock."),
    "take_discard": _command(
        "TakeDiscardCommandSerializer",
        "take_discard",
        "Take the top discard: into a new meld with `cards` from your hand, or (rule "
        "take_discard_to_lay_off) onto your meld `meld_id`. Exactly one of the two "
        "(422 bad_command otherwise).",
        cards=_cards(
            "Hand cards of the new meld, with the discard.", required=False, allow_null=True
        ),
        meld_id=StrictIntegerField(
            required=False,
            allow_null=True,
            min_value=1,
            help_text="Your meld the discard goes onto.",
        ),
    ),  # fmt: skip
    "meld": _command(
        "MeldCommandSerializer",
        "meld",
        "Expose a meld from your hand (a secret set with hidden, where the rules allow).",
        cards=_cards("The meld's cards."),
        hidden=StrictBooleanField(
            required=False, help_text="A secret set: four of a kind kept face down."
        ),
    ),
    "lay_off": _command(
        "LayOffCommandSerializer",
        "lay_off",
        "Lay a card off on a meld on the table.",
        card=CardInputField(),
        meld_id=StrictIntegerField(min_value=1),
    ),
    "discard": _command(
        "DiscardCommandSerializer",
        "discard",
        "Discard a card: ends your turn.",
        card=CardInputField(),
    ),
    "call_draw": _command("CallDrawCommandSerializer", "call_draw", 'Call Draw ("Fight").'),
    "challenge": _command(
        "ChallengeCommandSerializer", "challenge", "Answer a Draw call: challenge it."
    ),
    "fold": _command("FoldCommandSerializer", "fold", "Answer a Draw call: fold."),
}
assert set(COMMAND_SERIALIZERS) == set(COMMAND_TYPES), "a command type without a schema"


def command_schema(*, many: bool = False) -> PolymorphicProxySerializer:
    """The ``oneOf`` of every command, discriminated on ``type``."""
    return PolymorphicProxySerializer(
        component_name="Command",
        serializers=COMMAND_SERIALIZERS,
        resource_type_field_name="type",
        many=many,
    )


@extend_schema_field(command_schema())
class CommandField(serializers.Field):
    """A command object, checked against its type's schema (400 ``invalid`` when it is not)."""

    default_error_messages = {
        "not_an_object": gettext_lazy("A command is a JSON object."),
        "type": gettext_lazy("Give a command type: one of {types}."),
    }

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            self.fail("not_an_object")
        command_type = data.get("type")
        serializer_class = (
            COMMAND_SERIALIZERS.get(command_type) if isinstance(command_type, str) else None
        )
        if serializer_class is None:
            raise serializers.ValidationError(
                {"type": [self.error_messages["type"].format(types=", ".join(COMMAND_TYPES))]}
            )
        command = serializer_class(data=data)
        if not command.is_valid():
            raise serializers.ValidationError(command.errors)
        unknown = sorted(set(data) - set(command.fields))
        if unknown:  # a misspelt field is a malformed request, never silently ignored
            names = ", ".join(repr(str(name)[:20]) for name in unknown[:5])
            raise serializers.ValidationError(
                _("Unknown fields for %(type)s: %(names)s.")
                % {"type": data["type"], "names": names}
            )
        # The rules core reads the command as sent, with the checked fields in their types.
        return {**data, **command.validated_data}

    def to_representation(self, value: Any) -> Any:
        return value


@extend_schema_field(command_schema(many=True))
class CommandListField(serializers.ListField):
    """Commands as the server lists them (``legal_commands``)."""


# ---------------------------------------------------------------- the common case, checked quickly

#: A card code exactly as the serializer's pattern reads it, nothing around it.
_CARD = re.compile(r"(?:[A2-9TJQK]|10)[CDHS]|(?:[a2-9tjqk]|10)[cdhs]")
_SEED = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: The largest version a body may name (a PostgreSQL integer).
MAX_VERSION = 2**31 - 1
#: Per command type: the fields it must have, and the fields it may have.
_FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "draw": (frozenset({"type"}), frozenset({"type"})),
    "call_draw": (frozenset({"type"}), frozenset({"type"})),
    "challenge": (frozenset({"type"}), frozenset({"type"})),
    "fold": (frozenset({"type"}), frozenset({"type"})),
    "discard": (frozenset({"type", "card"}), frozenset({"type", "card"})),
    "lay_off": (frozenset({"type", "card", "meld_id"}), frozenset({"type", "card", "meld_id"})),
    "meld": (frozenset({"type", "cards"}), frozenset({"type", "cards", "hidden"})),
    "take_discard": (frozenset({"type"}), frozenset({"type", "cards", "meld_id"})),
}
_BODY = frozenset({"command", "expected_version", "seat", "client_seed"})


def _card(value: Any) -> bool:
    return type(value) is str and _CARD.fullmatch(value) is not None


def _cards(value: Any) -> bool:
    return type(value) is list and bool(value) and all(_card(card) for card in value)


def _meld_id(value: Any) -> bool:
    return type(value) is int and value >= 1


def _quick_command(data: Any) -> dict[str, Any] | None:
    if type(data) is not dict:
        return None
    kind = data.get("type")
    fields = _FIELDS.get(kind) if type(kind) is str else None
    if fields is None or not fields[0] <= data.keys() <= fields[1]:
        return None
    if "card" in data and not _card(data["card"]):
        return None
    cards = data.get("cards")
    if "cards" in data and not (_cards(cards) or (cards is None and data["type"] != "meld")):
        return None
    meld_id = data.get("meld_id")
    if "meld_id" in data and not (
        _meld_id(meld_id) or (meld_id is None and data["type"] != "lay_off")
    ):
        return None
    if "hidden" in data and type(data["hidden"]) is not bool:
        return None
    return dict(data)


def quick_command_body(data: Any) -> dict[str, Any] | None:
    """What ``CommandInputSerializer`` validates a command body to, for the bodies clients send
    (exact JSON types, no unknown field, card codes and seeds with nothing around them); None for
    any other body, which the serializer itself must judge. The serializer's field machinery
    costs a visible share of a move's CPU (docs/scaling.md); ``tests/api/test_quick_command.py``
    holds this to the serializer's results."""
    if type(data) is not dict or not data.keys() <= _BODY:
        return None
    version, seat, seed = data.get("expected_version"), data.get("seat"), data.get("client_seed")
    if type(version) is not int or not 0 <= version <= MAX_VERSION:
        return None
    if "seat" in data and seat is not None and not (type(seat) is int and 0 <= seat <= 2):
        return None
    if "client_seed" in data and not (type(seed) is str and _SEED.fullmatch(seed)):
        return None
    command = _quick_command(data.get("command"))
    if command is None:
        return None
    return {**data, "command": command}
