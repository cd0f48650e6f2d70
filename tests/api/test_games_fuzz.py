"""Schemathesis over the OpenAPI schema: generated requests, valid and invalid, to every operation.

Bounded (a few examples per operation and mode) so the suite stays quick; the checks are that
nothing answers 5xx, every answer's status and body are the ones the schema documents, and every
error has the ``{"code", "detail"}`` shape.
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
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from games import lobby
from tests.api.games_support import fast_password_hashing  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_password_hashing")]

EXAMPLES = 8
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


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
    token, _ = Token.objects.get_or_create(user=me)
    ids = [str(started.pk), str(waiting.pk), str(uuid.uuid4())]
    return {"Authorization": f"Token {token.key}"}, ids


#: Server-Sent Event streams never end while their game runs: in-process WSGI would buffer them
#: forever. tests/live drives them (and their errors) against a real ASGI server instead.
STREAMS = ("/stream",)


def operations(schema):
    """Every operation but the endless streams; log-out last, since it revokes the token the
    others use."""
    ops = [result.ok() for result in schema.get_all_operations()]
    ops = [op for op in ops if not op.path.endswith(STREAMS)]
    return sorted(ops, key=lambda op: op.path.endswith("/logout"))


def fuzz(operation, mode: GenerationMode, headers: dict, ids: list[str]):
    """A bounded Hypothesis test of one operation in one generation mode."""
    positive = mode == GenerationMode.POSITIVE

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
        response = case.call()
        case.validate_response(response, checks=CHECKS)
        if response.status_code >= 400:
            body = response.json()
            assert isinstance(body.get("code"), str) and isinstance(body.get("detail"), str)

    return run


def test_fuzz_every_operation(schema, setup):
    headers, ids = setup
    tried = 0
    for operation in operations(schema):
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            try:
                fuzz(operation, mode, headers, ids)()
            except Unsatisfiable:  # nothing to make invalid (an operation without inputs)
                assert mode == GenerationMode.NEGATIVE
                continue
            tried += 1
    assert tried >= 20
