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


@pytest.fixture(scope="module")
def keys():
    """A key server on 127.0.0.1 standing in for Apple's and Google's (tests/accounts/keyserver)."""
    from tests.accounts.keyserver import KeyServer

    server = KeyServer.start()
    yield server
    server.stop()


@pytest.fixture
def providers(settings, keys):
    """Apple and Google configured against ``keys``, with a fresh key cache for the test."""
    from accounts import identity
    from tests.accounts.keyserver import APPLE_CLIENT, GOOGLE_CLIENT

    settings.TONGITS_APPLE_CLIENT_IDS = [APPLE_CLIENT]
    settings.TONGITS_GOOGLE_CLIENT_IDS = [GOOGLE_CLIENT, "other-client"]
    settings.TONGITS_APPLE_JWKS_URL = keys.url + "?apple"
    settings.TONGITS_GOOGLE_JWKS_URL = keys.url + "?google"
    settings.TONGITS_JWKS_REFETCH_COOLDOWN_SECONDS = 0.0
    identity._clients.clear()
    yield keys
    identity._clients.clear()
