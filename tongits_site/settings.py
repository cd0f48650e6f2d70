"""Django settings, driven by environment variables.

Variables (defaults suit a developer machine; production must set the first three):

    DJANGO_SECRET_KEY      secret key (the default is an insecure development key)
    DJANGO_DEBUG           1/true/yes/on for debug mode (default off)
    DJANGO_ALLOWED_HOSTS   comma-separated host names (default localhost,127.0.0.1,[::1])
    DATABASE_URL           postgres://postgres@127.0.0.1:5432/tongits (several hosts:
                           postgres://u@h1:5432,h2:5432/db?target_session_attrs=read-write)
    DATABASE_LISTEN_URL    the connections that need a session of their own (LISTEN), past a
                           transaction-mode pooler (default: DATABASE_URL)
    DATABASE_REPLICA_URL   a standby the public history, stats, leaderboard and match reads go
                           to (default: none, they read DATABASE_URL)
    DATABASE_CONN_MAX_AGE  seconds to keep a database connection open (default 60)
    DATABASE_PREPARED_STATEMENTS  1: the write path's statements are prepared (0 for poolers
                                  that cannot keep prepared statements)
    CELERY_BROKER_URL      redis://127.0.0.1:6379/0
    CELERY_RESULT_BACKEND  where task results go (default: none, results are not stored)
    LOG_LEVEL              INFO
    TONGITS_VAR_DIR        runtime files: static files, beat schedule, embedded PostgreSQL (var/)
    TONGITS_BOT_DELAY_SECONDS         pause before a bot moves, so people can follow (0.8)
    TONGITS_BOT_QUEUE                 the Celery queue of bot moves (empty: the default queue;
                                      `make run` gives them a worker of their own, at a lower
                                      priority than requests)
    TONGITS_BOT_THINK_SECONDS         wall-clock bound of one bot decision on the server (1)
    TONGITS_BOT_QUEUED_SECONDS        a bot move waiting in its queue is not queued again for
                                      this long (120)
    TONGITS_NEXT_ROUND_DELAY_SECONDS  pause between a round's end and the next deal (3)
    TONGITS_DEAL_INLINE               deal the next round inside the write that ends a round
    TONGITS_SEED_WINDOW_SECONDS       wait between game_started and the first deal, a window
                                      for round 1's client seeds (0: in the start's write)
    TONGITS_SWEEP_INTERVAL_SECONDS    period of the beat task that re-queues lost work (10)

`python -m ops.stack` (`make run`) fills in DATABASE_URL and CELERY_BROKER_URL with an
embedded PostgreSQL when they are unset; the defaults below apply to everything else.
"""

import json
import os
import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import dj_database_url
from django.conf import locale as django_locale

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    return float(value)


# Runtime files (git-ignored); the image points it at a directory its user may write.
VAR_DIR = Path(os.environ.get("TONGITS_VAR_DIR") or BASE_DIR / "var")


# The "django-insecure-" prefix makes `manage.py check --deploy` flag the default key.
SECRET_KEY = os.environ.get(
    "DJANGO_SECRET_KEY", "django-insecure-dev-only-key-set-DJANGO_SECRET_KEY-in-production"
)
DEBUG = env_bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",  # only for migration accounts.0003 (its keys become sessions)
    "knox",
    "drf_spectacular",
    "accounts",
    "chips",
    "games",
    "games.live",
    "notifications",
    "chat",
    "social",
    "matchmaking",
    "tournaments",
    "store",
    "fairplay",
    "fairplay.detection",
    "web",
    "ops",
    "metrics",
]

MIDDLEWARE = [
    # First: oversized bodies (413) and control characters in the path or query (400), as JSON.
    "runtime.hardening.RequestLimitsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Static files (the browser table at /, the admin's) straight from the apps' static/
    # folders, found at start-up: `make run` needs no collectstatic.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Django's session, CSRF, log-in, messages and clickjacking middleware, skipped for the
    # token-authenticated API under /api/v1/ (runtime/page_middleware.py).
    "runtime.page_middleware.SessionMiddleware",
    # The answer's language: Accept-Language here, the account's once DRF has authenticated
    # (accounts.authentication); Content-Language on every answer.
    "runtime.i18n.LanguageMiddleware",
    "django.middleware.common.CommonMiddleware",
    "runtime.page_middleware.CsrfViewMiddleware",
    "runtime.page_middleware.AuthenticationMiddleware",
    "runtime.page_middleware.MessageMiddleware",
    "runtime.page_middleware.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "tongits_site.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "tongits_site.wsgi.application"
ASGI_APPLICATION = "tongits_site.asgi.application"

# A pool of connections per process (psycopg_pool): under ASGI each request runs in a thread of
# its own, so a thread's persistent connection would be a new PostgreSQL backend per request.
# 0 turns the pool off (then DATABASE_CONN_MAX_AGE keeps a connection per thread).
DATABASE_POOL_MAX_SIZE = int(os.environ.get("DATABASE_POOL_MAX_SIZE", "8"))


def database_settings(url: str, **kwargs: object) -> dict[str, object]:
    """Django's settings of one database from its URL, which may name several hosts
    (``postgres://user@h1:5432,h2:5433/db?target_session_attrs=read-write``): libpq tries them
    in turn and keeps the first whose session suits ``target_session_attrs``, so a client finds
    a promoted standby without a restart (docs/operations.md, "Failover")."""
    parts = urlsplit(url)
    userinfo, at, hosts = parts.netloc.rpartition("@")
    if "," not in hosts:
        return dj_database_url.parse(url, **kwargs)
    names, ports = [], []
    for item in hosts.split(","):
        host, colon, port = item.rpartition(":") if not item.endswith("]") else (item, "", "")
        if not colon:
            host, port = item, ""
        names.append(host.strip("[]"))
        ports.append(port or "5432")
    first = parts._replace(netloc=f"{userinfo}{at}{hosts.split(',')[0]}").geturl()
    db = dj_database_url.parse(first, **kwargs)
    db["HOST"], db["PORT"] = ",".join(names), ",".join(ports)
    return db


DATABASES = {
    # Read explicitly (not dj_database_url.config) so tests/test_compose.py finds the variable.
    "default": database_settings(
        os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/tongits"),
        conn_max_age=0
        if DATABASE_POOL_MAX_SIZE
        else int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
        conn_health_checks=not DATABASE_POOL_MAX_SIZE,
    )
}
# The connections that hold a session (the LISTEN of the live streams, the scheduler and the
# notifier) must reach PostgreSQL itself, not a pooler in transaction mode: their host, port,
# user, password and options; the database is DATABASE_URL's (core.listening.session_params).
DATABASE_LISTEN_URL = os.environ.get("DATABASE_LISTEN_URL", "").strip()
DATABASE_SESSION = database_settings(DATABASE_LISTEN_URL) if DATABASE_LISTEN_URL else None
# A hot standby for the public reads of finished matches (history, stats, leaderboard, match
# summaries: core.replica). Unset, they read the default database.
DATABASE_REPLICA_URL = os.environ.get("DATABASE_REPLICA_URL", "").strip()
# The write path's few hot statements (games.store) run as server-side prepared statements,
# parsed and planned once per connection, because parsing and planning them on every move was
# a large part of the write's time (docs/scaling.md). Django's own queries stay client-side
# bound (its cursors never prepare). 0 turns preparing off, for a pooler that cannot keep
# prepared statements (pgbouncer before 1.21, or without max_prepared_statements).
DATABASE_PREPARED_STATEMENTS = env_bool("DATABASE_PREPARED_STATEMENTS", True)
# psycopg's threshold: None never prepares; with a number, games.store prepares on first use.
DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = (
    5 if DATABASE_PREPARED_STATEMENTS else None
)
if DATABASE_POOL_MAX_SIZE:
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": DATABASE_POOL_MAX_SIZE,
        "timeout": 10,
    }
if DATABASE_REPLICA_URL:  # the alias core.replica.REPLICA_ALIAS names
    DATABASES["replica"] = database_settings(
        DATABASE_REPLICA_URL,
        conn_max_age=0 if DATABASE_POOL_MAX_SIZE else 60,
        conn_health_checks=not DATABASE_POOL_MAX_SIZE,
    )
    _replica_options = DATABASES["replica"].setdefault("OPTIONS", {})
    _replica_options["prepare_threshold"] = None  # only Django's own queries read it
    if DATABASE_POOL_MAX_SIZE:
        _replica_options["pool"] = {
            "min_size": 0,
            "max_size": DATABASE_POOL_MAX_SIZE,
            "timeout": 10,
        }
    # A test run has no standby: the alias reads the test database.
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
    DATABASE_ROUTERS = ["core.replica.ReplicaRouter"]

AUTH_USER_MODEL = "accounts.User"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# The players' languages (docs/accounts.md): every text a person reads is translated with
# Django's gettext from tongits_site/locale (the .po files; `make install` compiles them). The
# language of an answer is the account's ``language``, else the request's Accept-Language, else
# English (runtime.i18n).
LANGUAGE_CODE = "en"
LANGUAGES = [
    ("en", "English"),
    ("fil", "Filipino"),
    ("es", "Español"),
    ("vi", "Tiếng Việt"),
    ("tr", "Türkçe"),
    ("ar", "العربية"),
]
LOCALE_PATHS = [Path(__file__).resolve().parent / "locale"]
# Django knows no Filipino; phones also say "tl" (Tagalog) for it.
django_locale.LANG_INFO.setdefault(
    "fil", {"bidi": False, "code": "fil", "name": "Filipino", "name_local": "Filipino"}
)
django_locale.LANG_INFO.setdefault("tl", {"fallback": ["fil"]})
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG
# STATIC_ROOT exists only after collectstatic (the admin's files for a proxy); the finders
# above serve the same files without it.
warnings.filterwarnings("ignore", message=r"No directory at: .*static")

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Django REST framework -------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.CachedTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # orjson: faster than the json module on game views (docs/scaling.md). The parser refuses bodies
    # over TONGITS_MAX_BODY_BYTES (413) and deeper than TONGITS_MAX_JSON_DEPTH (400 parse_error).
    "DEFAULT_PARSER_CLASSES": ["runtime.hardening.LimitedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["drf_orjson_renderer.renderers.ORJSONRenderer"],
    # DRF's negotiation, with a short way for the Accept headers clients send.
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "runtime.negotiation.ClientNegotiation",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "core.api_errors.exception_handler",
    # Reads per token; register and commands set their own (ops.throttling).
    "DEFAULT_THROTTLE_CLASSES": ["ops.throttling.ReadThrottle"],
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Tongits server API",
    "DESCRIPTION": (
        "Authoritative server for Tongits, three-player Filipino rummy. "
        "Authenticate with `Authorization: Token <key>`. "
        'Every error is JSON `{"code": "...", "detail": "..."}`.'
    ),
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Error responses get a code enum per operation and status (after the enum hook).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "ops.throttling.document_throttling",  # before the codes: 429 gets its enum
        "core.api_schema.document_unavailable",  # 503 database_unavailable, every operation
        "accounts.api.error_codes.document_suspension",  # 403 account_suspended, with a token
        "core.api_schema.error_codes_hook",
    ],
    # Fields named alike with other choices (games/api/event_schemas.py, games/api/serializers.py).
    "ENUM_NAME_OVERRIDES": {
        "MeldKindEnum": "games.api.event_schemas.MELD_KINDS",
        "SeatKindEnum": ["user", "open", "bot"],
        # A bot seat's level and a room's bots' level: one enum.
        "LevelEnum": "games.lobby.BOT_LEVELS",
        "StartedSeatKindEnum": ["user", "bot"],
        "RulesPresetEnum": "accounts.api.serializers.RULES_PRESETS",
        "SettlementKindEnum": ["payout", "refund"],
        "NotificationKindEnum": "notifications.models.Kind.choices",
        "DeviceKindEnum": "notifications.api.devices.DEVICE_KINDS",
        # The rematch's status and answers keep the tables' and invitations' names free.
        "RematchStatusEnum": ["open", "started", "declined", "lapsed"],
        "RematchAnswerEnum": ["accepted", "declined", "pending"],
        "TournamentStatusEnum": ["registering", "running", "finished", "cancelled"],
        "TournamentFormatEnum": ["sit_and_go", "scheduled"],
        "StatusEnum": ["waiting", "active", "finished", "abandoned", "aborted"],
        "AnswerEnum": ["accept", "decline"],
        # The rounds' end reasons keep their name beside the chat reports' reasons.
        "ReasonEnum": "games.api.event_schemas.ROUND_END_REASONS",
        "ChatChannelEnum": "chat.models.Channel.choices",
        "ChatReportReasonEnum": "chat.models.ReportReason.choices",
        "CaseKindEnum": "fairplay.models.CASE_KINDS",
        "CaseStatusEnum": "fairplay.models.CASE_STATUSES",
        "LinkKindEnum": ["sign_in_identity", "address", "payment_source"],
    },
}

# Sessions (django-rest-knox, one hashed token per log-in): a session unused this long expires
# (401 token_expired); each use slides the expiry, written at most once a minute.
TONGITS_SESSION_IDLE_DAYS = env_float("TONGITS_SESSION_IDLE_DAYS", 30.0)
KNOX_TOKEN_MODEL = "accounts.Session"
# knox's own migrations create its (here swapped out, unused) knox_authtoken table: skip them.
MIGRATION_MODULES = {"knox": None}
REST_KNOX = {
    "TOKEN_MODEL": KNOX_TOKEN_MODEL,
    "TOKEN_TTL": timedelta(days=TONGITS_SESSION_IDLE_DAYS),
    "AUTO_REFRESH": True,
    "MIN_REFRESH_INTERVAL": 60,
    "AUTH_HEADER_PREFIX": "Token",
}

# Mail (password reset): EMAIL_URL picks the backend, e.g. smtp://user:pass@host:587?tls=1,
# console: (the default: mails printed on stdout) or locmem: (tests).
EMAIL_URL = os.environ.get("EMAIL_URL") or "console:"
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL") or "tongits@localhost"


def email_settings(url: str) -> dict[str, object]:
    """Django's EMAIL_* settings from one URL: smtp:// (smtps:// or ?ssl=1 for implicit TLS,
    ?tls=1 for STARTTLS), console:, locmem:, dummy:."""
    parts = urlsplit(url)
    scheme = parts.scheme or url.rstrip(":")
    simple = {
        "console": "django.core.mail.backends.console.EmailBackend",
        "locmem": "django.core.mail.backends.locmem.EmailBackend",
        "dummy": "django.core.mail.backends.dummy.EmailBackend",
    }
    if scheme in simple:
        return {"EMAIL_BACKEND": simple[scheme]}
    if scheme not in ("smtp", "smtps"):
        raise ValueError(f"EMAIL_URL: unknown scheme {scheme!r}")
    flags = parse_qs(parts.query)
    query = {k: v[-1].lower() in {"1", "true", "yes", "on"} for k, v in flags.items()}
    return {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": parts.hostname or "localhost",
        "EMAIL_PORT": parts.port or (465 if scheme == "smtps" else 25),
        "EMAIL_HOST_USER": unquote(parts.username or ""),
        "EMAIL_HOST_PASSWORD": unquote(parts.password or ""),
        "EMAIL_USE_SSL": scheme == "smtps" or query.get("ssl", False),
        "EMAIL_USE_TLS": query.get("tls", False),
        "EMAIL_TIMEOUT": 10,
    }


globals().update(email_settings(EMAIL_URL))
# The password-reset mail links here: {uid} and {token} are filled in.
TONGITS_PASSWORD_RESET_URL = (
    os.environ.get("TONGITS_PASSWORD_RESET_URL")
    or f"http://localhost:{os.environ.get('PORT') or 8000}/#/reset?uid={{uid}}&token={{token}}"
)
PASSWORD_RESET_TIMEOUT = 3 * 3600  # seconds a reset link works (Django's setting)

# Sign-in as phone apps do (accounts/identity.py, docs/accounts.md): the client ids whose ID
# tokens are accepted (Apple: the app's bundle id or services id; Google: the OAuth client ids
# of the iOS, Android and web apps), comma-separated; none: that way in answers 409
# login_method_not_configured. The providers' published keys are fetched from these URLs.
TONGITS_APPLE_CLIENT_IDS = env_list("TONGITS_APPLE_CLIENT_IDS", "")
TONGITS_GOOGLE_CLIENT_IDS = env_list("TONGITS_GOOGLE_CLIENT_IDS", "")
TONGITS_APPLE_JWKS_URL = os.environ.get(
    "TONGITS_APPLE_JWKS_URL", "https://appleid.apple.com/auth/keys"
)
TONGITS_GOOGLE_JWKS_URL = os.environ.get(
    "TONGITS_GOOGLE_JWKS_URL", "https://www.googleapis.com/oauth2/v3/certs"
)
# The keys are kept this long; a token naming an unknown key id fetches them again, at most once
# per cool-down; a fetch waits this long at most (then 503 identity_provider_unavailable).
TONGITS_JWKS_CACHE_SECONDS = env_float("TONGITS_JWKS_CACHE_SECONDS", 3600.0)
TONGITS_JWKS_REFETCH_COOLDOWN_SECONDS = env_float("TONGITS_JWKS_REFETCH_COOLDOWN_SECONDS", 30.0)
TONGITS_JWKS_TIMEOUT_SECONDS = env_float("TONGITS_JWKS_TIMEOUT_SECONDS", 5.0)
# Clock skew allowed on an ID token's exp and iat.
TONGITS_ID_TOKEN_LEEWAY_SECONDS = env_float("TONGITS_ID_TOKEN_LEEWAY_SECONDS", 60.0)
# Words no display name may contain (compared without case, accents or separators).
TONGITS_REFUSED_NAME_WORDS = env_list(
    "TONGITS_REFUSED_NAME_WORDS", "admin,administrator,moderator,official,staff"
)

# Players' names (resolved at read time: events store user ids) are remembered this long per
# process; a deleted or renamed account's name disappears at once in the process that changed it
# and, on commit, in every process that follows games (its live listener hears the change).
TONGITS_NAME_CACHE_SECONDS = env_float("TONGITS_NAME_CACHE_SECONDS", 60.0)
# While the process hears those notices (its live listener connected: core.notices), a name is
# remembered this long instead.
TONGITS_NAME_CACHE_HEARING_SECONDS = env_float("TONGITS_NAME_CACHE_HEARING_SECONDS", 3600.0)
# --- Throttling (ops.throttling, accounts.login_throttle) ---------------------------

# The cache the throttles share: Redis when CACHE_URL names one (redis://...), which counts
# across machines; else Django's database cache in the table "tongits_cache" (a migration
# creates it) for failed log-ins' blocks, and the counts in the machine's shared memory.
CACHE_URL = os.environ.get("CACHE_URL", "")
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "throttle": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
        if CACHE_URL.startswith(("redis://", "rediss://", "unix://"))
        else {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "tongits_cache",
            # Counters are keyed by their time window; expired ones are culled, live ones kept.
            "OPTIONS": {"MAX_ENTRIES": 200_000, "CULL_FREQUENCY": 4},
        }
    ),
}
# Without Redis the counts live in memory the machine's web processes share, in this file.
TONGITS_THROTTLE_COUNTS_FILE = Path(
    os.environ.get("TONGITS_THROTTLE_COUNTS_FILE") or VAR_DIR / "throttle-counts"
)
# Rates: "<n>/<period>", period s, m, h or d, optionally with a multiple ("5/15m"); "" is off.
TONGITS_THROTTLE_RATES = {
    "reads": os.environ.get("TONGITS_RATE_READS", "1200/m"),  # per token (address without)
    "commands": os.environ.get("TONGITS_RATE_COMMANDS", "300/m"),  # per user
    "register": os.environ.get("TONGITS_RATE_REGISTER", "20/h"),  # per client address
    # per client address: each request may send a mail
    "password_reset": os.environ.get("TONGITS_RATE_PASSWORD_RESET", "10/h"),
    "chat": os.environ.get("TONGITS_RATE_CHAT", "10/m"),  # chat messages per user
    # per client address: guest and Apple/Google sign-ins (a new account counts as a register)
    "sign_in": os.environ.get("TONGITS_RATE_SIGN_IN", "30/m"),
    "reports": os.environ.get("TONGITS_RATE_REPORTS", "10/h"),  # fair-play reports per user
}
# Client addresses the throttles count but never refuse (a load generator, an internal client).
TONGITS_THROTTLE_EXEMPT = frozenset(env_list("TONGITS_THROTTLE_EXEMPT", ""))
# Failed log-ins: blocked from the Nth failure in a window, for BACKOFF s doubling per failure.
TONGITS_LOGIN_FAILURES_PER_ACCOUNT = int(os.environ.get("TONGITS_LOGIN_FAILURES_PER_ACCOUNT", "5"))
TONGITS_LOGIN_FAILURES_PER_ADDRESS = int(os.environ.get("TONGITS_LOGIN_FAILURES_PER_ADDRESS", "20"))
TONGITS_LOGIN_WINDOW_SECONDS = env_float("TONGITS_LOGIN_WINDOW_SECONDS", 900.0)
TONGITS_LOGIN_BACKOFF_SECONDS = env_float("TONGITS_LOGIN_BACKOFF_SECONDS", 30.0)
TONGITS_LOGIN_BACKOFF_MAX_SECONDS = env_float("TONGITS_LOGIN_BACKOFF_MAX_SECONDS", 900.0)
# Proxies in front that append the client's address to X-Forwarded-For (0: use REMOTE_ADDR).
TONGITS_NUM_PROXIES = int(os.environ.get("TONGITS_NUM_PROXIES", "0"))
# A named seat is an invitation; unanswered for this long, it lapses and the seat is open again.
TONGITS_INVITATION_SECONDS = env_float("TONGITS_INVITATION_SECONDS", 3600.0)
# A proposed rematch of a finished match lapses unless everyone accepts within this long.
TONGITS_REMATCH_SECONDS = env_float("TONGITS_REMATCH_SECONDS", 300.0)
# A rated table's turns: at least this long, or 0 (no limit). Casual tables may be faster.
TONGITS_RATED_MIN_TURN_SECONDS = env_float("TONGITS_RATED_MIN_TURN_SECONDS", 10.0)
# Fair play (docs/fair-play.md): two accounts signing in from one address this close in time
# are linked.
TONGITS_FAIRPLAY_ADDRESS_WINDOW_SECONDS = env_float(
    "TONGITS_FAIRPLAY_ADDRESS_WINDOW_SECONDS", 24 * 3600.0
)
# Table chat (docs/chat.md): readable, and open, this long after the match ended; the longest
# message (characters, after stripping).
TONGITS_CHAT_KEEP_SECONDS = env_float("TONGITS_CHAT_KEEP_SECONDS", 7 * 24 * 3600.0)
TONGITS_CHAT_MAX_LENGTH = int(os.environ.get("TONGITS_CHAT_MAX_LENGTH", "200"))
# Friends (social/, docs/friends.md): the most friends one account may have, and the most friend
# requests waiting for an answer it may have sent (and, apart, received).
TONGITS_MAX_FRIENDS = int(os.environ.get("TONGITS_MAX_FRIENDS", "500"))
TONGITS_MAX_FRIEND_REQUESTS = int(os.environ.get("TONGITS_MAX_FRIEND_REQUESTS", "100"))
# Tables one user may have waiting for players at once.
TONGITS_MAX_WAITING_TABLES = int(os.environ.get("TONGITS_MAX_WAITING_TABLES", "3"))
# Live streams one account may hold open at once, game streams and /me/stream together, across
# the web processes (ops.stream_slots); one more is refused, 429 too_many_streams. 0 or
# empty: no cap.
TONGITS_MAX_STREAMS_PER_USER = int(
    os.environ.get("TONGITS_MAX_STREAMS_PER_USER", "10").strip() or "0"
)
# Without Redis the open streams' leases live in memory the machine's web processes share, in
# this file (a table of its own, apart from the throttle counts).
TONGITS_STREAM_SLOTS_FILE = Path(
    os.environ.get("TONGITS_STREAM_SLOTS_FILE") or VAR_DIR / "stream-slots"
)

# Notifications (notifications/, docs/notifications.md). A "your_turn" notification is written
# for turns without a limit or of at least this many seconds (shorter ones are played in the app).
TONGITS_YOUR_TURN_MIN_SECONDS = env_float("TONGITS_YOUR_TURN_MIN_SECONDS", 60.0)
# The kinds that are also pushed to the user's devices (when no stream of theirs is open).
TONGITS_PUSH_KINDS = frozenset(
    env_list(
        "TONGITS_PUSH_KINDS",
        "your_turn,invited,match_over,new_sign_in,friend_request,party_invite,matched",
    )
)
# Web Push (VAPID, RFC 8292): the server's private key (base64url of the raw P-256 key, or PEM)
# and the contact the push services may write to. No key: Web Push targets are refused (409).
TONGITS_WEBPUSH_VAPID_PRIVATE_KEY = os.environ.get("TONGITS_WEBPUSH_VAPID_PRIVATE_KEY", "")
TONGITS_WEBPUSH_VAPID_SUBJECT = os.environ.get(
    "TONGITS_WEBPUSH_VAPID_SUBJECT", "mailto:ops@localhost"
)
# The push services' hosts a Web Push endpoint may name (".example.com": any host under it);
# empty: any public https host. Listing hosts closes the door to requests sent elsewhere.
TONGITS_WEBPUSH_ENDPOINT_HOSTS = tuple(
    h.lower() for h in env_list("TONGITS_WEBPUSH_ENDPOINT_HOSTS", "") if h
)
# FCM (HTTP v1): the path of the Firebase service account's JSON (empty: no FCM, FCM devices are
# refused with 409), the host (Google's; tests name a stand-in), the streams one worker opens at
# once on its one HTTP/2 connection (the pushes of a batch in flight), and validate_only (FCM
# checks each message and token but delivers nothing: for trying a set-up).
TONGITS_FCM_CREDENTIALS = os.environ.get("TONGITS_FCM_CREDENTIALS", "")
TONGITS_FCM_ENDPOINT = os.environ.get("TONGITS_FCM_ENDPOINT", "https://fcm.googleapis.com")
TONGITS_FCM_STREAMS = int(os.environ.get("TONGITS_FCM_STREAMS", "100"))
TONGITS_FCM_VALIDATE_ONLY = env_bool("TONGITS_FCM_VALIDATE_ONLY", False)
# APNs (token-based, HTTP/2): the team's .p8 key file (empty: no APNs, APNs devices are refused
# with 409), its key id, the team id, the app's bundle id (apns-topic), the host (production,
# sandbox, or an https URL), a CA file to trust (a stand-in's), and the streams one worker opens
# at once on its one connection.
TONGITS_APNS_KEY_FILE = os.environ.get("TONGITS_APNS_KEY_FILE", "")
TONGITS_APNS_KEY_ID = os.environ.get("TONGITS_APNS_KEY_ID", "")
TONGITS_APNS_TEAM_ID = os.environ.get("TONGITS_APNS_TEAM_ID", "")
TONGITS_APNS_TOPIC = os.environ.get("TONGITS_APNS_TOPIC", "")
TONGITS_APNS_HOST = os.environ.get("TONGITS_APNS_HOST", "production")
TONGITS_APNS_CA_FILE = os.environ.get("TONGITS_APNS_CA_FILE", "")
TONGITS_APNS_STREAMS = int(os.environ.get("TONGITS_APNS_STREAMS", "100"))
# How many due pushes one task delivers (one claim, one write of outcomes, the sends together).
TONGITS_PUSH_BATCH = int(os.environ.get("TONGITS_PUSH_BATCH", "100"))
# A push is tried this many times (backoff between) before it is given up.
TONGITS_PUSH_MAX_ATTEMPTS = int(os.environ.get("TONGITS_PUSH_MAX_ATTEMPTS", "5"))
# Webhook endpoints the settings own, as JSON: [{"url": ..., "secret": "whsec_...", "kinds":
# ["match.finished", ...]}]; more can be added in the admin.
TONGITS_WEBHOOKS = json.loads(os.environ.get("TONGITS_WEBHOOKS", "") or "[]")
# The seconds before each webhook try (the first is 0), e.g. "0,5,300"; empty: the Standard
# Webhooks schedule (0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: about a day).
TONGITS_WEBHOOK_RETRY_DELAYS = tuple(float(s) for s in env_list("TONGITS_WEBHOOK_RETRY_DELAYS", ""))
# How long one webhook or push request may take before it counts as failed.
TONGITS_DELIVERY_TIMEOUT_SECONDS = env_float("TONGITS_DELIVERY_TIMEOUT_SECONDS", 10.0)
# A delivery claimed by a worker stays its own this much longer than one request may take; a
# worker killed with it leaves it to be queued again after that.
TONGITS_DELIVERY_LEASE_MARGIN_SECONDS = env_float("TONGITS_DELIVERY_LEASE_MARGIN_SECONDS", 30.0)

# Input limits (runtime.hardening): our largest request is a few hundred bytes.
TONGITS_MAX_BODY_BYTES = int(os.environ.get("TONGITS_MAX_BODY_BYTES", "65536"))
TONGITS_MAX_JSON_DEPTH = int(os.environ.get("TONGITS_MAX_JSON_DEPTH", "16"))
# A move that Django would play unchanged is answered without its handler (runtime.shortcuts);
# off, every request goes through Django (the same answers, more CPU a move).
TONGITS_SHORTCUTS = env_bool("TONGITS_SHORTCUTS", True)
DATA_UPLOAD_MAX_MEMORY_SIZE = TONGITS_MAX_BODY_BYTES

# A token's user is remembered this long per process: a revoked token stops working at once in
# the process that revoked it and within this time everywhere else (0: look up every request).
TONGITS_TOKEN_CACHE_SECONDS = env_float("TONGITS_TOKEN_CACHE_SECONDS", 1.0)
# While the process hears revocations (its live listener connected: core.notices), a look-up is
# remembered this long instead: an ended session reaches it on commit.
TONGITS_TOKEN_CACHE_HEARING_SECONDS = env_float("TONGITS_TOKEN_CACHE_HEARING_SECONDS", 600.0)

# --- Celery ------------------------------------------------------------------------------------

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Empty means no result backend: game tasks are fire-and-forget, their effects are events.
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND") or None
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = TIME_ZONE
# Game tasks are acks_late: a worker takes one task at a time per process, so a task waiting in
# a busy worker's buffer does not hold up a table another worker could serve.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Celery's Django fixup closes the database connections before and after every task, and in a
# prefork child it closes Django's whole pool: each task opened a new pool and a new PostgreSQL
# backend. With this it does so every 500 tasks; tongits_site.celery hands connections back to
# the pool (and drops broken ones) around each task instead, as a web request does.
CELERY_DB_REUSE_MAX = 500

# --- Game timing (seconds; tests set the delays to 0) -----------------------------------------

TONGITS_BOT_DELAY_SECONDS = env_float("TONGITS_BOT_DELAY_SECONDS", 0.8)
# Bot moves on a queue of their own (empty: Celery's default queue, served by every worker):
# `make run` and docker/compose.yaml serve it with a worker of its own at a lower CPU priority,
# so on a busy node the bots wait for the cores, never people's requests (docs/scaling.md).
TONGITS_BOT_QUEUE = os.environ.get("TONGITS_BOT_QUEUE", "").strip()
# A bot's decision stops searching after this much wall-clock time (its CPU budget is smaller:
# this bounds only how long a starved bot worker keeps a table waiting), then plays its best so
# far.
TONGITS_BOT_THINK_SECONDS = max(0.0, env_float("TONGITS_BOT_THINK_SECONDS", 1.0))
# A bot move waiting in the queue is not queued again (by the scheduler's lease or the sweeper)
# for this long: a starved bots' queue gains no copies; a move lost while the broker kept its
# data is queued again after it (games.scheduling).
TONGITS_BOT_QUEUED_SECONDS = max(1.0, env_float("TONGITS_BOT_QUEUED_SECONDS", 120.0))
TONGITS_NEXT_ROUND_DELAY_SECONDS = max(0.0, env_float("TONGITS_NEXT_ROUND_DELAY_SECONDS", 3.0))
# On: the next round is dealt inside the write that ends a round (no task, no pause), for a
# stack without a worker; the worker-less API tests run so.
TONGITS_DEAL_INLINE = env_bool("TONGITS_DEAL_INLINE", False)
# 0 (the default): the first deal is made in the start's own write. More: the table waits that
# long in "dealing" after game_started, a window for the seats' client seeds of round 1
# (docs/verifying.md, section 9).
TONGITS_SEED_WINDOW_SECONDS = max(0.0, env_float("TONGITS_SEED_WINDOW_SECONDS", 0.0))
TONGITS_SWEEP_INTERVAL_SECONDS = env_float("TONGITS_SWEEP_INTERVAL_SECONDS", 10.0)
# A finished match's events are packed into one archive row (games.archive) this long after it
# was settled; until then its rows are left to the readers that follow them as appended (the
# notifier, open streams).
TONGITS_COMPACT_AFTER_SECONDS = env_float("TONGITS_COMPACT_AFTER_SECONDS", 3600.0)
# A table counts as left behind once its work is this much later than due (not an env setting).
TONGITS_SWEEP_GRACE_SECONDS = 5.0
# The scheduler (games.scheduling) wakes on every append's NOTIFY and at least this often.
TONGITS_SCHEDULER_POLL_SECONDS = env_float("TONGITS_SCHEDULER_POLL_SECONDS", 0.5)
# Heads (state snapshots at a version) each process keeps, sparing a move's read when this
# process saw the game last; 0 turns the cache off. Writes stay conditional on the version.
TONGITS_HEAD_CACHE_SIZE = int(os.environ.get("TONGITS_HEAD_CACHE_SIZE", "4096"))
# A claimed table is claimed again after this long if its task wrote nothing (a lost task).
TONGITS_SCHEDULER_LEASE_SECONDS = env_float("TONGITS_SCHEDULER_LEASE_SECONDS", 15.0)
# The sweeper aborts a started table without turn limits (turn_seconds 0) idle this long.
TONGITS_ABORT_IDLE_SECONDS = env_float("TONGITS_ABORT_IDLE_SECONDS", 7 * 24 * 3600.0)
# /healthz answers 503 once the sweeper's last run is this many sweep intervals old.
TONGITS_HEALTH_LATE_INTERVALS = 3
# The Ed25519 key that seals finished matches (games/seal.py): 64 hex digits (the 32-byte
# private seed). Empty: a development key generated on first use in TONGITS_SEAL_KEY_FILE.
TONGITS_SEAL_KEY = os.environ.get("TONGITS_SEAL_KEY", "").strip()
TONGITS_SEAL_KEY_FILE = Path(
    os.environ.get("TONGITS_SEAL_KEY_FILE") or VAR_DIR / "seal-ed25519.key"
)

# --- Chips (chips/, docs/chips.md) ------------------------------------------------------------

# A new account's wallet starts with this many chips from the house; 0: no grant.
TONGITS_SIGNUP_GRANT = int(os.environ.get("TONGITS_SIGNUP_GRANT", "1000"))
# POST /me/wallet/daily: this many chips once per UTC day per account; 0: no bonus.
TONGITS_DAILY_BONUS = int(os.environ.get("TONGITS_DAILY_BONUS", "200"))
# The largest buy-in a table may ask for.
TONGITS_MAX_BUY_IN = int(os.environ.get("TONGITS_MAX_BUY_IN", "1000000"))


def rooms_setting(text: str) -> list[dict[str, Any]]:
    """Quick play's and the matchmaker's rooms from "buy_in:stake[:bot level[:fee]],...", e.g.
    "100:5:easy,1000:50:normal:5,10000:500:hard" (the level of the bots that fill the
    matchmaker's tables, normal when left out or empty; the service fee, in percent of each
    winner's winnings taken for the house at the settlement, 0 when left out)."""
    rooms = []
    for item in text.split(","):
        if not item.strip():
            continue
        buy_in, _, rest = item.strip().partition(":")
        stake, _, rest = rest.partition(":")
        level, _, fee = rest.partition(":")
        fee_percent = int(fee or "0")
        if not 0 <= fee_percent <= 100:
            raise ValueError(f"TONGITS_ROOMS: a fee is a percent from 0 to 100: {item!r}")
        rooms.append(
            {
                "buy_in": int(buy_in),
                "stake": int(stake or "1"),
                "bot_level": level or "normal",
                "fee_percent": fee_percent,
            }
        )
    return rooms


# A room's stake multiplies every payout; its buy-in is 20 stakes, which the loser of a match
# outruns in a few percent of matches (docs/chips.md "Rooms").
TONGITS_ROOMS = rooms_setting(
    os.environ.get("TONGITS_ROOMS", "100:5:easy,1000:50:normal,10000:500:hard")
)

# The matchmaker (matchmaking/, docs/matchmaking.md). A ticket waits this long for people
# before bots of its room's level fill the seats left (its "bots_after"; null: people only).
TONGITS_MATCH_BOTS_AFTER_SECONDS = env_float("TONGITS_MATCH_BOTS_AFTER_SECONDS", 20.0)
# The rating window (points of the ordinal, mu - 3 sigma) two tickets may be apart: this wide
# at first, doubling every DOUBLING seconds a ticket waits, unbounded after UNBOUNDED seconds.
TONGITS_MATCH_WINDOW = env_float("TONGITS_MATCH_WINDOW", 5.0)
TONGITS_MATCH_WINDOW_DOUBLING_SECONDS = env_float("TONGITS_MATCH_WINDOW_DOUBLING_SECONDS", 10.0)
TONGITS_MATCH_WINDOW_UNBOUNDED_SECONDS = env_float("TONGITS_MATCH_WINDOW_UNBOUNDED_SECONDS", 30.0)
# A party's invitations lapse (and its ticket with them) unless every friend joins this soon.
TONGITS_PARTY_INVITE_SECONDS = env_float("TONGITS_PARTY_INVITE_SECONDS", 120.0)
# The matcher runs at least this often (widening windows and bots fall due with time alone).
TONGITS_MATCH_INTERVAL_SECONDS = env_float("TONGITS_MATCH_INTERVAL_SECONDS", 1.0)

# Tournaments (tournaments/, docs/tournaments.md). Their loop asks what is due at least this
# often; registered people hear of a scheduled start this long before it; the sweeper moves on
# a running tournament untouched this long; a pause between two prizes (fault drills only).
TONGITS_TOURNAMENT_POLL_SECONDS = env_float("TONGITS_TOURNAMENT_POLL_SECONDS", 1.0)
TONGITS_TOURNAMENT_REMIND_SECONDS = env_float("TONGITS_TOURNAMENT_REMIND_SECONDS", 300.0)
TONGITS_TOURNAMENT_STALLED_SECONDS = env_float("TONGITS_TOURNAMENT_STALLED_SECONDS", 60.0)
TONGITS_TOURNAMENT_PRIZE_PAUSE_SECONDS = env_float("TONGITS_TOURNAMENT_PRIZE_PAUSE_SECONDS", 0.0)
# Weekly leaderboards: weeks of this many days from this local time (a Monday 00:00) in this
# zone; the chips the first places of each room's week are paid when it is archived.
TONGITS_SEASON_DAYS = int(os.environ.get("TONGITS_SEASON_DAYS", "7"))
TONGITS_SEASON_START = os.environ.get("TONGITS_SEASON_START", "2024-01-01T00:00")
TONGITS_SEASON_TIMEZONE = os.environ.get("TONGITS_SEASON_TIMEZONE", "Asia/Manila")
TONGITS_SEASON_REWARDS = [
    int(x) for x in os.environ.get("TONGITS_SEASON_REWARDS", "1000,500,250").split(",") if x
]
# --- The store (store/, docs/store.md) ---------------------------------------------------------

# The catalogue's seed, "store:product_id:chips,...": products missing from the database are
# added at each migrate; the admin edits them (chips, active) from then on.
TONGITS_STORE_PRODUCTS = os.environ.get(
    "TONGITS_STORE_PRODUCTS", "apple:chips_1000:1000,google:chips_1000:1000"
)
# App Store: the root certificates (DER or PEM files; Apple Root CA - G3), the app's bundle id
# and Apple id (required in Production), the environment the server accepts, and the library's
# OCSP checks of the chain (0 only for a chain of one's own: tests, StoreKit testing).
TONGITS_APPLE_ROOT_CERTIFICATES = env_list("TONGITS_APPLE_ROOT_CERTIFICATES", "")
TONGITS_APPLE_BUNDLE_ID = os.environ.get("TONGITS_APPLE_BUNDLE_ID", "")
TONGITS_APPLE_APP_ID = (
    int(os.environ["TONGITS_APPLE_APP_ID"]) if os.environ.get("TONGITS_APPLE_APP_ID") else None
)
TONGITS_APPLE_ENVIRONMENT = os.environ.get("TONGITS_APPLE_ENVIRONMENT", "Production")
TONGITS_APPLE_ONLINE_CHECKS = env_bool("TONGITS_APPLE_ONLINE_CHECKS", default=True)
# Google Play: the app's package name, the service account's JSON key file (granted the Play
# Console's "View financial data" and "Manage orders"), the Play Developer API's base URL.
TONGITS_GOOGLE_PLAY_PACKAGE = os.environ.get("TONGITS_GOOGLE_PLAY_PACKAGE", "")
TONGITS_GOOGLE_PLAY_CREDENTIALS = os.environ.get("TONGITS_GOOGLE_PLAY_CREDENTIALS", "")
TONGITS_GOOGLE_PLAY_API_URL = os.environ.get(
    "TONGITS_GOOGLE_PLAY_API_URL", "https://androidpublisher.googleapis.com"
)
TONGITS_GOOGLE_PLAY_TIMEOUT_SECONDS = env_float("TONGITS_GOOGLE_PLAY_TIMEOUT_SECONDS", 10.0)
# The daily poll reads the voided purchases of this many days back (Google keeps 30).
TONGITS_GOOGLE_VOIDED_DAYS = int(os.environ.get("TONGITS_GOOGLE_VOIDED_DAYS", "30"))
# Real-time developer notifications: the push subscription's OIDC audience and service account.
TONGITS_GOOGLE_PUBSUB_AUDIENCE = os.environ.get("TONGITS_GOOGLE_PUBSUB_AUDIENCE", "")
TONGITS_GOOGLE_PUBSUB_SERVICE_ACCOUNT = os.environ.get("TONGITS_GOOGLE_PUBSUB_SERVICE_ACCOUNT", "")

# --- Fair play's detection (fairplay/detection, docs/fair-play.md "Signals") ----------------

# A pair's collusion score (twice the summed log-likelihood ratios of its signals against the
# population's rates) at or above this raises a collusion flag; a feeder's chip-dumping score
# toward one beneficiary at or above this, with at least DUMPING_MIN_CHIPS gained from them,
# raises a chip_dumping flag; never before MIN_GAMES matches together. The defaults are the
# simulation's (python -m fairplay.detection.simulate).
TONGITS_FAIRPLAY_COLLUSION_THRESHOLD = env_float("TONGITS_FAIRPLAY_COLLUSION_THRESHOLD", 60.0)
TONGITS_FAIRPLAY_CHIP_DUMPING_THRESHOLD = env_float("TONGITS_FAIRPLAY_CHIP_DUMPING_THRESHOLD", 25.0)
TONGITS_FAIRPLAY_DUMPING_MIN_CHIPS = int(
    os.environ.get("TONGITS_FAIRPLAY_DUMPING_MIN_CHIPS", "100")
)
TONGITS_FAIRPLAY_MIN_GAMES = int(os.environ.get("TONGITS_FAIRPLAY_MIN_GAMES", "3"))

CELERY_BEAT_SCHEDULE = {
    "season-close": {"task": "tournaments.tasks.close_seasons", "schedule": 300.0},
    "tournaments-sweep": {
        "task": "tournaments.tasks.sweep",
        "schedule": TONGITS_SWEEP_INTERVAL_SECONDS,
        "options": {"expires": TONGITS_SWEEP_INTERVAL_SECONDS},
    },
    "sweep": {
        "task": "games.tasks.sweep",
        "schedule": TONGITS_SWEEP_INTERVAL_SECONDS,
        # A sweep that waited out a whole period is superseded by the next one.
        "options": {"expires": TONGITS_SWEEP_INTERVAL_SECONDS},
    },
    "purge-sessions": {"task": "accounts.tasks.purge_sessions", "schedule": 24 * 3600.0},
    "voided-purchases": {"task": "store.tasks.poll_voided_purchases", "schedule": 24 * 3600.0},
    # Finished matches' events packed into one archive row each (games.archive).
    "compact-events": {"task": "games.tasks.compact_events", "schedule": 600.0},
    # Settled matches whose scoring message was lost (fairplay.detection.tasks).
    "fairplay-sweep": {"task": "fairplay.detection.tasks.sweep", "schedule": 300.0},
}

# --- Logging -----------------------------------------------------------------------------------

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain"},
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # httpx logs every request at INFO: a line per push to FCM or APNs. Its warnings stay;
    # each push's answer is in the admin (PushAttempt).
    "loggers": {"httpx": {"level": "WARNING"}},
}

# /metrics (metrics.views): answered to this machine, and elsewhere only with
# "Authorization: Bearer <this token>" (empty: only to this machine).
TONGITS_METRICS_TOKEN = os.environ.get("TONGITS_METRICS_TOKEN", "").strip()
