"""Input fields and serializers that accept exactly what the schema says.

DRF's fields are lenient in ways the OpenAPI schema does not state: a ``CharField`` turns
``123`` into ``"123"``, an ``IntegerField`` takes ``"3"`` and ``3.0``, a ``BooleanField``
takes ``0``, ``"yes"`` and ``"on"``, and a query string's empty value counts as no value. A
client generated from the schema never sends those, and one that does has a bug worth a 400:
so request bodies use the strict fields here (their type is the JSON type, nothing else), and
query strings refuse empty values (leave a parameter out instead).
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import serializers

#: The strict text fields' refusal of a number, boolean, list or object.
NOT_A_STRING = gettext_lazy("Not a string.")


class StrictCharField(serializers.CharField):
    """A JSON string; a number, boolean, list or object is 400 ``invalid``."""

    default_error_messages = {"not_a_string": NOT_A_STRING}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("not_a_string")
        return super().to_internal_value(data)


class StrictEmailField(serializers.EmailField):
    default_error_messages = {"not_a_string": NOT_A_STRING}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("not_a_string")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer; a string, a float or a boolean is 400 ``invalid``."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """JSON ``true`` or ``false``; ``0``, ``1`` or ``"true"`` is 400 ``invalid``."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class QuerySerializer(serializers.Serializer):
    """A query string's parameters: an empty value (``?until=``) is 400 ``invalid``, where DRF
    would take it as no value at all, which the schema cannot say."""

    def to_internal_value(self, data: Any) -> Any:
        empty = {
            name: [_("Give a value, or leave the parameter out.")]
            for name in self.fields
            if hasattr(data, "get") and name in data and data.get(name) == ""
        }
        if empty:
            raise serializers.ValidationError(empty)
        return super().to_internal_value(data)


class StrictRegexField(serializers.RegexField):
    default_error_messages = {"not_a_string": NOT_A_STRING}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("not_a_string")
        return super().to_internal_value(data)


class StrictChoiceField(serializers.ChoiceField):
    """One of the choices, as a JSON string; DRF's ``ChoiceField`` would match ``1`` to
    ``"1"`` and ``true`` to ``"True"``."""

    default_error_messages = {"not_a_string": NOT_A_STRING}

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str):
            self.fail("not_a_string")
        return super().to_internal_value(data)
