import pytest


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """These tests register many players; PBKDF2 for each would take most of the run."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def deal_at_once(settings):
    """No worker here: the next round is dealt inside the command's transaction."""
    settings.TONGITS_DEAL_INLINE = True
    settings.TONGITS_BOT_DELAY_SECONDS = 0.0
