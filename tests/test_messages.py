"""The translations' catalogs are complete and true to the code: every text the code marks (the
server's gettext, the browser table's t()/tn()) is in the committed template and translated in
every language with the same placeholders (ops/messages.py)."""

from __future__ import annotations

import pytest
from babel.messages.pofile import read_po

from ops import messages


@pytest.mark.parametrize("domain", messages.DOMAINS, ids=lambda d: d.name)
def test_the_committed_template_holds_every_text_the_code_marks(domain):
    with (messages.LOCALE_DIR / f"{domain.name}.pot").open("rb") as handle:
        committed = {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(handle)}
    extracted = {m.id if isinstance(m.id, str) else m.id[0] for m in messages.template(domain)}
    assert sorted(extracted - committed) == [], "run `make messages` and translate"
    assert sorted(committed - extracted) == [], "texts no longer in the code: `make messages`"


def test_every_language_translates_every_text_with_its_placeholders():
    found = messages.problems()
    assert found == [], f"{len(found)} problems, the first:\n" + "\n".join(found[:30])


def test_placeholders_are_read_in_both_styles():
    assert messages.placeholders("%(player)s at %(table)s") == ["player", "table"]
    assert messages.placeholders("{n} of {suit}") == ["n", "suit"]
    assert messages.placeholders("100% sure") == []
