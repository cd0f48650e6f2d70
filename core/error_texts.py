"""The texts people read for each error ``code``, registered where they are defined.

The ``code`` of an error is for programs and never changes; its ``detail`` is for people and is
translated. This registry ties the two together so that a test can walk every code the API's
schema lists and find its texts, check that each is marked for translation (it is in the
extracted catalog) and that every language translates it (``tests/api/test_error_texts.py``).

Who registers what:

- ``core.errors.DomainError`` registers each subclass that sets its own ``code`` or ``detail``
  (``register(cls.code, cls.detail)``), so a domain error class is its own entry;
- ``core.framework_texts`` registers DRF's and Django's codes with the framework messages a
  client can provoke;
- the API edge registers the codes it raises with a text of its own (``invalid_ticket``,
  ``invalid_idempotency_key``, ``database_unavailable``, ...), and ``games.errors`` the rules
  core's codes with their texts.

A text with values (``_("... %(name)s ...") % {...}``) raised for a code that already has one
here is marked where it is raised; the extraction finds it there.

Texts are kept as given (usually lazy), so registering at import time translates nothing;
``msgid`` gives the English text a catalog knows them by.
"""

from __future__ import annotations

from django.utils import translation
from django.utils.functional import Promise

_TEXTS: dict[str, list[str | Promise]] = {}


def register(code: str, *texts: str | Promise) -> None:
    """Record that an error with ``code`` may carry each of ``texts`` (lazy or marked with
    ``gettext_noop``); the same text twice is recorded once."""
    known = _TEXTS.setdefault(code, [])
    for text in texts:  # compared by identity: a lazy text is not evaluated at import time
        if all(text is not seen for seen in known):
            known.append(text)


def msgid(text: str | Promise) -> str:
    """The English text a catalog knows ``text`` by (a lazy text evaluated with no language
    active, which is the untranslated message itself)."""
    with translation.override(None):
        return str(text)


def registered() -> dict[str, tuple[str, ...]]:
    """Every registered code with the msgids of its texts, in the order they were registered."""
    return {
        code: tuple(dict.fromkeys(msgid(text) for text in texts)) for code, texts in _TEXTS.items()
    }
