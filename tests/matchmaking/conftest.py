import pytest


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """These tests make many people; PBKDF2 for each would take most of the run."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
