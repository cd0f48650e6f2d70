"""The language of an answer: the account's, else Accept-Language, else English; every answer
says which in Content-Language, and the error's code never changes with it."""

from __future__ import annotations

import pytest
from django.utils import translation

from accounts.services import InvalidCredentials
from runtime import i18n

pytestmark = pytest.mark.django_db

LANGUAGES = ["fil", "es", "vi", "tr", "ar"]


def in_language(language: str, text) -> str:
    with translation.override(language):
        return str(text)


def wrong_login(client, **headers):
    body = {"username": "nobody-here", "password": "not-the-password"}
    return client.post("/api/v1/auth/token", body, format="json", **headers)


@pytest.mark.parametrize("language", LANGUAGES)
def test_accept_language_gives_the_detail_in_that_language_and_the_same_code(api_client, language):
    english = wrong_login(api_client)
    answer = wrong_login(api_client, HTTP_ACCEPT_LANGUAGE=f"{language},en;q=0.5")
    assert answer.status_code == english.status_code == 401
    assert answer.json()["code"] == english.json()["code"] == "invalid_credentials"
    assert answer["Content-Language"] == language and english["Content-Language"] == "en"
    assert "Accept-Language" in answer["Vary"]
    expected = in_language(language, InvalidCredentials.detail)
    assert answer.json()["detail"] == expected != english.json()["detail"]


def test_regional_and_tagalog_tags_find_filipino_and_spanish():
    assert i18n.from_header("fil-PH") == "fil"
    assert i18n.from_header("tl-PH,en;q=0.8") == "fil"
    assert i18n.from_header("es-419") == "es"
    assert i18n.from_header("de-DE,fr;q=0.9") == "en"
    assert i18n.from_header("de,ar;q=0.3") == "ar"
    assert i18n.from_header("") == "en"
    assert i18n.from_header("*") == "en"


def test_an_unknown_language_gives_english(api_client):
    answer = wrong_login(api_client, HTTP_ACCEPT_LANGUAGE="de-DE,fr;q=0.9")
    assert answer["Content-Language"] == "en"
    assert answer.json()["detail"] == in_language("en", InvalidCredentials.detail)


def test_the_accounts_language_wins_over_the_header(auth_client):
    auth_client.patch("/api/v1/me", {"language": "fil"}, format="json")
    too_long = {"display_name": "x" * 25}
    plain = auth_client.patch("/api/v1/me", too_long, format="json")
    spanish_phone = auth_client.patch(
        "/api/v1/me", too_long, format="json", HTTP_ACCEPT_LANGUAGE="es"
    )
    for answer in (plain, spanish_phone):
        assert answer.status_code == 400 and answer.json()["code"] == "display_name_refused"
        assert answer["Content-Language"] == "fil"
    text = translation.gettext_lazy("A display name has at most %(max)s characters.")
    expected = in_language("fil", text) % {"max": 24}
    assert plain.json()["detail"] == spanish_phone.json()["detail"] == expected
    assert expected != in_language("en", text) % {"max": 24}


def test_a_validation_message_is_translated_in_fields_too(auth_client):
    auth_client.patch("/api/v1/me", {"language": "es"}, format="json")
    answer = auth_client.patch("/api/v1/me", {"avatar": "dragon"}, format="json")
    assert answer.status_code == 400 and answer.json()["code"] == "invalid"
    assert answer["Content-Language"] == "es"
    english = in_language("en", '"{input}" is not a valid choice.').format(input="dragon")
    assert answer.json()["fields"]["avatar"] != [english]


def test_a_success_carries_content_language_too(api_client):
    answer = api_client.get("/api/v1/avatars", HTTP_ACCEPT_LANGUAGE="vi")
    assert answer.status_code == 200 and answer["Content-Language"] == "vi"


def test_the_password_reset_mail_is_in_the_accounts_language(user_factory, mailoutbox):
    from accounts import services

    user = user_factory(email="tala@example.com", language="tr")
    assert services.password_reset_send(email="tala@example.com") == 1
    mail = mailoutbox[-1]
    subject = in_language("tr", translation.gettext_lazy("Reset your Tongits password"))
    assert mail.subject == subject != "Reset your Tongits password"
    assert user.username in mail.body and "/api/v1/auth/password-reset/confirm" in mail.body
