"""EMAIL_URL: one variable for Django's mail settings (tongits_site.settings.email_settings)."""

import pytest

from tongits_site.settings import email_settings


def test_smtp_with_starttls_and_quoted_credentials():
    got = email_settings("smtp://me%40example.com:p%2Fss@mail.example.com:587?tls=1")
    assert got["EMAIL_BACKEND"].endswith("smtp.EmailBackend")
    assert (got["EMAIL_HOST"], got["EMAIL_PORT"]) == ("mail.example.com", 587)
    assert (got["EMAIL_HOST_USER"], got["EMAIL_HOST_PASSWORD"]) == ("me@example.com", "p/ss")
    assert got["EMAIL_USE_TLS"] and not got["EMAIL_USE_SSL"]


def test_smtps_is_implicit_tls_on_465():
    got = email_settings("smtps://mail.example.com")
    assert got["EMAIL_PORT"] == 465 and got["EMAIL_USE_SSL"] and not got["EMAIL_USE_TLS"]


@pytest.mark.parametrize("name", ["console", "locmem", "dummy"])
def test_the_simple_backends(name):
    assert email_settings(f"{name}:")["EMAIL_BACKEND"].endswith(f"{name}.EmailBackend")


def test_an_unknown_scheme_fails_loudly():
    with pytest.raises(ValueError, match="ftp"):
        email_settings("ftp://mail.example.com")
