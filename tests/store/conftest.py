import pytest


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Store tests make users only to seat them; PBKDF2 would take most of the run."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
