"""Every error code the API documents has texts for people, marked for translation, and the
answers speak the request's language (core/error_texts.py, core/framework_texts.py,
games/errors.py's rules texts)."""

from __future__ import annotations

import ast
import gettext
import pathlib

import pytest
import rest_framework
from django.utils import translation

from core import error_texts, framework_texts
from games.errors import RULES_DETAIL_TEXTS, RULES_TEXTS, move_refused
from games.rules.errors import CODES
from ops import messages
from tests import error_codes

pytestmark = pytest.mark.django_db

RULES_DIR = pathlib.Path(__file__).resolve().parents[2] / "games" / "rules"
SITE_PACKAGES = pathlib.Path(rest_framework.__file__).resolve().parent.parent
#: The frameworks' own catalogs, where their msgids are spelt.
FRAMEWORK_CATALOGS = (
    "rest_framework/locale/{}/LC_MESSAGES/django.mo",
    "django/conf/locale/{}/LC_MESSAGES/django.mo",
    "django/contrib/auth/locale/{}/LC_MESSAGES/django.mo",
)


@pytest.fixture(scope="module")
def schema_codes() -> set[str]:
    schema = error_codes.live_schema()
    codes: set[str] = set()
    for operation in (op for methods in schema["paths"].values() for op in methods.values()):
        for status, response in operation["responses"].items():
            if int(status) < 400:
                continue
            ref = response["content"]["application/json"]["schema"]["$ref"]
            component = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
            codes |= set(component["properties"]["code"]["enum"])
    return codes


@pytest.fixture(scope="module")
def catalog_ids() -> set[str]:
    """Every msgid the extraction finds in the code (singular and plural forms)."""
    django_domain = next(d for d in messages.DOMAINS if d.name == "django")
    ids: set[str] = set()
    for message in messages.template(django_domain):
        ids |= {message.id} if isinstance(message.id, str) else set(message.id)
    ids.discard("")
    return ids


def registered_texts() -> set[str]:
    return {text for texts in error_texts.registered().values() for text in texts}


def test_every_error_code_in_the_schema_has_a_registered_text(schema_codes):
    registered = error_texts.registered()
    assert len(schema_codes) > 60
    assert sorted(code for code in schema_codes if not registered.get(code)) == []


def test_every_registered_text_is_marked_for_translation(catalog_ids):
    unmarked = sorted(registered_texts() - catalog_ids)
    assert unmarked == []


def test_the_rules_texts_cover_exactly_the_rules_codes():
    assert set(RULES_TEXTS) == set(CODES)
    assert {code for code, _reason in RULES_DETAIL_TEXTS} <= set(CODES)


def test_every_fixed_reason_of_the_rules_core_has_a_text():
    """An ``IllegalMove(code, "a literal reason")`` in the rules core is translated by
    ``RULES_DETAIL_TEXTS`` (or is the code's own reason); a reason with values in it falls back
    to the code's text."""
    fixed = set()
    for path in RULES_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "IllegalMove":
                args = [a.value for a in node.args if isinstance(a, ast.Constant)]
                if len(node.args) == 2 and len(args) == 2:
                    fixed.add((args[0], args[1]))
    assert len(fixed) > 10
    missing = {(c, r) for c, r in fixed if r != CODES[c] and (c, r) not in RULES_DETAIL_TEXTS}
    assert missing == set()


def test_a_rules_refusal_keeps_a_translatable_reason_and_otherwise_says_the_codes_text():
    specific = move_refused("wrong_phase", "answer the Draw call: challenge or fold")
    assert (specific.code, str(specific.detail)) == (
        "wrong_phase",
        "Answer the Draw call: challenge or fold.",
    )
    cards = move_refused("card_not_in_hand", "7H, KD")
    assert str(cards.detail) == "Not in your hand: 7H, KD."
    with_values = move_refused("unknown_meld", "no meld 4 on the table")
    assert str(with_values.detail) == "No meld with that id."
    assert str(move_refused("not_your_turn").detail) == "Another seat is to act."


def test_the_framework_msgids_are_the_frameworks_own():
    """A msgid that differs from the framework's by one character would never be looked up."""
    known: set[str] = set()
    for language in ("en", "es"):
        for catalog in FRAMEWORK_CATALOGS:
            with (SITE_PACKAGES / catalog.format(language)).open("rb") as handle:
                keys = gettext.GNUTranslations(handle)._catalog
            known |= {key[0] if isinstance(key, tuple) else key for key in keys}
    ours = [
        *framework_texts.VALIDATION,
        *framework_texts.FIELD_NAMES,
        *(text for texts in framework_texts.BY_CODE.values() for text in texts),
        error_texts.msgid(framework_texts.PASSWORD_TOO_SHORT),
    ]
    assert [text for text in ours if text not in known] == []


def test_a_framework_error_speaks_the_requests_language(api_client):
    english = api_client.get("/api/v1/me")
    spanish = api_client.get("/api/v1/me", HTTP_ACCEPT_LANGUAGE="es")
    assert english.json()["code"] == spanish.json()["code"] == "not_authenticated"
    with translation.override("es"):
        expected = translation.gettext("Authentication credentials were not provided.")
    assert spanish.json()["detail"] == expected != english.json()["detail"]
    assert spanish["Content-Language"] == "es"


def test_the_body_limit_answers_in_the_requests_language(api_client, settings):
    settings.TONGITS_MAX_BODY_BYTES = 10
    answer = api_client.post(
        "/api/v1/tables", {"rules": "standard"}, format="json", HTTP_ACCEPT_LANGUAGE="tr"
    )
    assert answer.status_code == 413 and answer.json()["code"] == "payload_too_large"
    assert answer["Content-Language"] == "tr"


def test_every_registered_text_is_translated_in_every_language():
    """Fails until the translators have filled tongits_site/locale/<language>/LC_MESSAGES/
    django.po for every registered text, with the English text's placeholders."""
    texts = registered_texts()
    found = [line for line in messages.problems() if any(repr(t) in line for t in texts)]
    assert found == [], f"{len(found)} problems, the first: " + "\n".join(found[:20])
