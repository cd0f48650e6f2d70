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
    print(f"{Path.cwd()}: {args.requests} requests each, in process")
    print("  (best p50: the lowest median of 5 equal slices, which a busy machine disturbs least)")
    for name, times in rows:
        step = max(1, len(times) // 5)
        best = min(statistics.median(times[i : i + step]) for i in range(0, len(times), step))
        times.sort()
        p50 = statistics.median(times) * 1e3
        p99 = times[int(len(times) * 0.99)] * 1e3
        print(f"  {name:32} p50 {p50:6.3f} ms   best p50 {best * 1e3:6.3f} ms   p99 {p99:6.3f} ms")
    user_model.objects.filter(username="bench-auth").delete()


if __name__ == "__main__":
    main()
