"""Schemathesis over the OpenAPI schema: generated requests, valid and invalid, to every operation.

Bounded (``EXAMPLES`` per operation and mode, derandomised) so the suite stays quick; the checks
are that nothing answers 5xx, every answer's status and body are the ones the schema documents,
every error has the ``{"code", "detail"}`` shape, and a request the schema says is invalid is
refused (``negative_data_rejection``: a number where a string is expected, ``rated: 0``, an
empty query value, a card code with spaces...). Every example is signed in with a live session:
the same one until an example ends it (a log-out, a new password), then a new one, so the
operations that end sessions leave the others authenticated.
"""

from __future__ import annotations

import uuid

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from accounts.models import Session
from accounts.services import session_create
from games import lobby
from tests.api.games_support import fast_password_hashing  # noqa: F401 (a fixture)
from tests.api.test_schema import NEW_ACCOUNT_OPERATIONS, SIGN_IN_OPERATIONS

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

EXAMPLES = 12
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
NEGATIVE_CHECKS = [*CHECKS, negative_data_rejection]


@pytest.fixture(scope="module")
def schema():
    document = SchemaGenerator().get_schema(request=None, public=True)
    loaded = schemathesis.openapi.from_dict(document)
    loaded.app = get_wsgi_application()
    return loaded


@pytest.fixture
def in_process_db():
    """Keep the test's connection (and transaction) open across in-process WSGI requests, as
    Django's test client does: otherwise request_finished closes it."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def setup(user_factory, in_process_db):
    """Ids worth aiming at: a started game the caller plays, a waiting table, a missing id."""
    me, bob, cy = user_factory(), user_factory(), user_factory()
    started = lobby.table_create(
        user=me,
        seats=[{"kind": "user"}, {"kind": "user", "username": bob.username}, {"kind": "bot"}],
    )
    lobby.table_respond(game_id=started.pk, user=bob, accept=True)
    lobby.table_start(game_id=started.pk, user=me)
    waiting = lobby.table_create(user=cy)
    _, token = session_create(user=me, device="fuzz")
    ids = [str(started.pk), str(waiting.pk), str(uuid.uuid4())]
    return {"Authorization": f"Token {token}"}, ids, me


class LiveKey:
    """A session key for the examples: the same session while it lives, a new one once an
    example ended it (an insert and a signal per example were a third of the fuzzing's time)."""

    def __init__(self, user) -> None:
        self.user = user
        self.session: Session | None = None
        self.key = ""

    def __call__(self) -> str:
        if self.session is None or not Session.objects.filter(pk=self.session.pk).exists():
            self.session, self.key = session_create(user=self.user, device="fuzz")
        return self.key


#: Server-Sent Event streams never end while their game runs: in-process WSGI would buffer them
#: forever. tests/live drives them (and their errors) against a real ASGI server instead.
STREAMS = ("/stream",)


def operations(schema):
    """Every operation but the endless streams; the log-outs and the account's deletion last,
    since they end the session the others use."""
    ops = [result.ok() for result in schema.get_all_operations()]
    ops = [op for op in ops if not op.path.endswith(STREAMS)]
    last = ("/logout", "/logout-all")
    return sorted(ops, key=lambda op: (op.path.endswith(last), op.method.upper() == "DELETE"))


def fuzz(operation, mode: GenerationMode, headers: dict, ids: list[str], key: LiveKey):
    """A bounded Hypothesis test of one operation in one generation mode."""
    positive = mode == GenerationMode.POSITIVE
    checks = CHECKS if positive else NEGATIVE_CHECKS

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        case=operation.as_strategy(generation_mode=mode, headers=headers),
        game_id=st.sampled_from(ids),
    )
    def run(case, game_id):
        if positive and "game_id" in (case.path_parameters or {}):
            case.path_parameters["game_id"] = game_id  # aim at real tables and games too
        if "Authorization" in (case.headers or {}):  # a live session: a log-out may end it
            case.headers["Authorization"] = f"Token {key()}"
        response = case.call()
        case.validate_response(response, checks=checks)
        if response.status_code >= 400:
            body = response.json()
            assert isinstance(body.get("code"), str) and isinstance(body.get("detail"), str)

    return run


def test_fuzz_every_operation(schema, setup):
    headers, ids, user = setup
    key = LiveKey(user)
    covered = {(op.path, op.method.lower()) for op in operations(schema)}
    assert {(path, method) for path, method, _ in NEW_ACCOUNT_OPERATIONS} <= covered
    assert {(path, method) for path, method, _ in SIGN_IN_OPERATIONS} <= covered
    tried = 0
    failures = []  # every operation is fuzzed, and every one that fails is named at the end
    for operation in operations(schema):
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            try:
                fuzz(operation, mode, headers, ids, key)()
            except Unsatisfiable:  # nothing to make invalid (an operation without inputs)
                assert mode == GenerationMode.NEGATIVE
                continue
            except (Exception, BaseExceptionGroup) as exc:  # schemathesis: a failure group
                failures.append(
                    f"{operation.method.upper()} {operation.path} ({mode.value}): {exc}"
                )
            tried += 1
    assert not failures, "\n\n".join(failures)
    assert tried >= 20


def coverage_failures(
    schema, operation, mode: GenerationMode, ids: list[str], key: LiveKey
) -> list[str]:
    """Schemathesis' coverage phase for one operation: its deterministic cases (each boundary,
    each type mutation of each field and parameter, each missing one), every one sent and
    checked; a failure per distinct problem."""
    positive = mode == GenerationMode.POSITIVE
    checks = CHECKS if positive else NEGATIVE_CHECKS
    config = schema.config.generation_for(operation=operation, phase="coverage")
    cases = schema.iter_coverage_cases(operation, generation_modes=[mode], generation_config=config)
    found: dict[str, str] = {}
    for case in cases:
        # Aim at the started game, so a body's mutations reach its validation (a game id that
        # is not a UUID is the mutation itself: it stays).
        if _is_uuid((case.path_parameters or {}).get("game_id")):
            case.path_parameters["game_id"] = ids[0]
        case.headers = {
            **(case.headers or {}),
            "Authorization": f"Token {key()}",
        }
        response = case.call()
        try:
            case.validate_response(response, checks=checks)
            if response.status_code >= 400:
                body = response.json()
                assert isinstance(body.get("code"), str) and isinstance(body.get("detail"), str)
        except (Exception, BaseExceptionGroup) as exc:  # schemathesis: a failure group
            text = str(exc)
            found.setdefault(text.split("\n", 3)[-1][:300], text)
    where = f"{operation.method.upper()} {operation.path} {mode.value}"
    return [f"{where}: {text}" for text in found.values()]


def _is_uuid(value: object) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return value is not None


def test_coverage_cases_of_every_operation(schema, setup):
    """Every operation's coverage cases, valid and invalid, all of them: a number where a string
    is expected, a boolean as 0, an empty query value, a card code with spaces, a command type
    that is a list... are each refused with a documented 4xx, never accepted or a 500."""
    _, ids, user = setup
    key = LiveKey(user)
    failures = []
    for operation in operations(schema):
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            failures += coverage_failures(schema, operation, mode, ids, key)
    assert not failures, "\n\n".join(failures)
