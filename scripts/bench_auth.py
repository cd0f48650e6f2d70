"""What authentication costs a request: ``GET /api/v1/me`` in process, N times, per token mode.

    .venv/bin/python scripts/bench_auth.py [--requests 2000] [--reset]     (`make bench-auth`)

Runs the Django app of the checkout it is started from (the current directory), through
Django's test client (the whole middleware, DRF and the authentication class; no sockets), on a
scratch database ``tongits_bench_auth`` of the local PostgreSQL (migrated, emptied of the
benchmark's user afterwards). It logs in over the API (``POST /auth/token``, which every version
of the server answers with ``{"token": ...}``), then times ``GET /me`` with the token look-up
remembered (``TONGITS_TOKEN_CACHE_SECONDS`` 1) and looked up on every request (0), and an
unauthenticated ``GET /healthz`` as the bare-Django baseline. Run it from another checkout to
compare versions: ``cd /path/to/this/checkout && /path/to/other/.venv/bin/python
/path/to/other/scripts/bench_auth.py``.

``--reset`` also times ``POST /auth/password-reset`` for a known and an unknown address (the
answer must not tell them apart, in time either); it queues the mail tasks on
``BENCH_BROKER_URL`` (Redis database 11, bench-api's, by default) and purges them afterwards.

Then the sign-ins, ``--sign-ins`` each (200): a password log-in (``POST /auth/token``, with the
shipped password hasher), a guest's device sign-in with a known key and with a new one (a new
account), and Apple (ES256) and Google (RS256) ID-token sign-ins of a known account, their keys
served by a key server on 127.0.0.1 (tests/accounts/keyserver.py) and kept by the server as in
production. Each sign-in opens a session, as on a phone; the sign-in throttles count every one
(their rates raised so that none is refused).

A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

DB_URL = "postgres://postgres@127.0.0.1:5432/tongits_bench_auth"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--reset", action="store_true", help="time the password reset too")
    parser.add_argument("--sign-ins", type=int, default=200, help="sign-ins timed per kind")
    args = parser.parse_args()
    os.environ["CELERY_BROKER_URL"] = os.environ.get(
        "BENCH_BROKER_URL", "redis://127.0.0.1:6379/11"
    )

    sys.path.insert(0, str(Path.cwd()))
    os.environ["DATABASE_URL"] = os.environ.get("BENCH_AUTH_DATABASE_URL", DB_URL)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tongits_site.settings")
    os.environ["DATABASE_POOL_MAX_SIZE"] = "0"  # one connection, kept: no pool hop to time
    # Thousands of requests of one token and one address: the throttles (empty rate: none)
    # would refuse them, and counting them is not what is timed here.
    os.environ["TONGITS_RATE_READS"] = ""
    os.environ["TONGITS_RATE_PASSWORD_RESET"] = ""
    os.environ["TONGITS_RATE_SIGN_IN"] = "1000000/m"
    os.environ["TONGITS_RATE_REGISTER"] = "1000000/m"
    import django

    from ops.ensure_db import main as ensure_db

    ensure_db()
    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    call_command("migrate", verbosity=0)
    settings.ALLOWED_HOSTS = ["*"]
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    user_model = get_user_model()
    user_model.objects.filter(username="bench-auth").delete()
    user_model.objects.create_user(
        username="bench-auth", password="bench-auth-passphrase", email="bench-auth@example.com"
    )
    client = Client()
    login = client.post(
        "/api/v1/auth/token",
        {"username": "bench-auth", "password": "bench-auth-passphrase"},
        content_type="application/json",
    )
    token = login.json()["token"]
    headers = {"HTTP_AUTHORIZATION": f"Token {token}"}

    def timed(path: str, body: dict | None = None, **extra: str) -> list[float]:
        def send():
            if body is None:
                return client.get(path, **extra)
            return client.post(path, body, content_type="application/json", **extra)

        expected = 200 if body is None else 202
        for _ in range(50):  # warm up
            assert send().status_code == expected
        out = []
        for _ in range(args.requests):
            start = time.perf_counter()
            response = send()
            out.append(time.perf_counter() - start)
            assert response.status_code == expected, response.content
        return out

    rows = []
    from accounts import token_cache

    for ttl in (1.0, 0.0):
        settings.TONGITS_TOKEN_CACHE_SECONDS = ttl
        token_cache.clear()
        rows.append((f"GET /me, token cache {ttl:g} s", timed("/api/v1/me", **headers)))
    rows.append(("GET /healthz (no auth)", timed("/healthz")))
    if args.reset:
        from tongits_site.celery import app as celery_app

        reset = "/api/v1/auth/password-reset"
        for _ in range(2):  # interleaved, twice: the machine's noise hits both alike
            for label, email in (("known", "bench-auth@example.com"), ("unknown", "no@pe.example")):
                rows.append((f"POST password-reset, {label}", timed(reset, {"email": email})))
        celery_app.control.purge()
    if args.sign_ins:
        rows += sign_ins(client, settings, args.sign_ins)
    print(f"{Path.cwd()}: {args.requests} requests each ({args.sign_ins} a sign-in), in process")
    print("  (best p50: the lowest median of 5 equal slices, which a busy machine disturbs least)")
    for name, times in rows:
        step = max(1, len(times) // 5)
        best = min(statistics.median(times[i : i + step]) for i in range(0, len(times), step))
        times.sort()
        p50 = statistics.median(times) * 1e3
        p99 = times[int(len(times) * 0.99)] * 1e3
        print(f"  {name:32} p50 {p50:6.3f} ms   best p50 {best * 1e3:6.3f} ms   p99 {p99:6.3f} ms")
    user_model.objects.filter(username="bench-auth").delete()


def sign_ins(client, settings, count: int) -> list[tuple[str, list[float]]]:
    """Each way in, ``count`` times, interleaved kind by kind (the machine's noise hits all)."""
    import secrets

    from django.contrib.auth import get_user_model

    from accounts import identity
    from tests.accounts.keyserver import (
        APPLE_CLIENT,
        APPLE_ISSUER,
        GOOGLE_CLIENT,
        GOOGLE_ISSUER,
        KeyServer,
    )

    keys = KeyServer.start()
    apple, google = keys.add_key("ES256"), keys.add_key("RS256")
    settings.TONGITS_APPLE_CLIENT_IDS, settings.TONGITS_GOOGLE_CLIENT_IDS = (
        [APPLE_CLIENT],
        [GOOGLE_CLIENT],
    )
    settings.TONGITS_APPLE_JWKS_URL = keys.url + "?apple"
    settings.TONGITS_GOOGLE_JWKS_URL = keys.url + "?google"
    identity._clients.clear()
    from django.contrib.auth import hashers

    # Django's default hasher, which the project ships (the timings above used a fast one).
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    hashers.get_hashers.cache_clear()
    hashers.get_hashers_by_algorithm.cache_clear()
    user_model = get_user_model()
    user_model.objects.filter(username="bench-sign-in").delete()
    user_model.objects.create_user(username="bench-sign-in", password="bench-auth-passphrase")
    known_key = "bench-known-device-key-" + "k" * 20
    sub = f"bench-{secrets.token_hex(4)}"
    bodies = {
        "POST /auth/token (password)": lambda: (
            "/api/v1/auth/token",
            {"username": "bench-sign-in", "password": "bench-auth-passphrase"},
        ),
        "POST /auth/device (known key)": lambda: ("/api/v1/auth/device", {"device_key": known_key}),
        "POST /auth/device (new account)": lambda: (
            "/api/v1/auth/device",
            {"device_key": secrets.token_urlsafe(32)},
        ),
        "POST /auth/apple (ES256)": lambda: (
            "/api/v1/auth/apple",
            {"id_token": keys.token(apple, iss=APPLE_ISSUER, aud=APPLE_CLIENT, sub=sub)},
        ),
        "POST /auth/google (RS256)": lambda: (
            "/api/v1/auth/google",
            {"id_token": keys.token(google, iss=GOOGLE_ISSUER, aud=GOOGLE_CLIENT, sub=sub)},
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in bodies}
    for body in bodies.values():  # first calls: the accounts exist, the keys are fetched
        path, data = body()
        assert client.post(path, data, content_type="application/json").status_code in (200, 201)
    for _ in range(count):
        for name, body in bodies.items():
            path, data = body()  # a token is made outside the timing, as a phone makes it
            start = time.perf_counter()
            response = client.post(path, data, content_type="application/json")
            times[name].append(time.perf_counter() - start)
            assert response.status_code in (200, 201), (name, response.content)
    keys.stop()
    user_model.objects.filter(username="bench-sign-in").delete()
    return list(times.items())


if __name__ == "__main__":
    main()
