"""Fixtures of the store's tests: the App Store's chain and the Play stand-in, shared per
module; the server's settings pointed at them per test."""

from __future__ import annotations

import pytest

from store import services
from tests.accounts.keyserver import KeyServer
from tests.purchases.appstore import APP_ID, BUNDLE_ID, Authority
from tests.purchases.playstore import SERVICE_ACCOUNT, PlayStandIn

PACKAGE = "com.example.tongits"
AUDIENCE = "https://tongits.example/api/v1/store/google/notifications"
PUSHER = "pubsub-push@tongits-tests.iam.gserviceaccount.com"


@pytest.fixture(scope="module")
def authority() -> Authority:
    return Authority.make()


@pytest.fixture
def apple(authority, settings, tmp_path, db) -> Authority:
    """The server trusts ``authority``'s root: bundle id, app id, Production, no OCSP."""
    settings.TONGITS_APPLE_ROOT_CERTIFICATES = [authority.root_path(tmp_path)]
    settings.TONGITS_APPLE_BUNDLE_ID = BUNDLE_ID
    settings.TONGITS_APPLE_APP_ID = APP_ID
    settings.TONGITS_APPLE_ENVIRONMENT = "Production"
    settings.TONGITS_APPLE_ONLINE_CHECKS = False
    settings.TONGITS_SIGNUP_GRANT = 1000
    settings.TONGITS_STORE_PRODUCTS = "apple:chips_1000:1000,google:chips_1000:1000"
    services.seed_products()
    return authority


@pytest.fixture(scope="module")
def play_server():
    server = PlayStandIn.start(PACKAGE)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def key_server():
    server = KeyServer.start()
    yield server
    server.stop()


@pytest.fixture
def play(play_server, key_server, settings, tmp_path, db) -> PlayStandIn:
    settings.TONGITS_GOOGLE_PLAY_PACKAGE = PACKAGE
    settings.TONGITS_GOOGLE_PLAY_CREDENTIALS = play_server.credentials_file(tmp_path)
    settings.TONGITS_GOOGLE_PLAY_API_URL = play_server.url
    settings.TONGITS_GOOGLE_JWKS_URL = key_server.url
    settings.TONGITS_GOOGLE_PUBSUB_AUDIENCE = AUDIENCE
    settings.TONGITS_GOOGLE_PUBSUB_SERVICE_ACCOUNT = PUSHER
    settings.TONGITS_SIGNUP_GRANT = 1000
    settings.TONGITS_STORE_PRODUCTS = "apple:chips_1000:1000,google:chips_1000:1000"
    services.seed_products()
    play_server.consume_failures = 0
    return play_server


__all__ = ["SERVICE_ACCOUNT"]
