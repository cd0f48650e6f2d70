"""The error contract of core.api_errors: every error is {"code", "detail"}."""

import pytest
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from django.test import RequestFactory
from rest_framework import exceptions

from core.api_errors import ApiError, Conflict, exception_handler, not_found, server_error


def handle(exc):
    response = exception_handler(exc, {})
    assert response is not None
    return response.status_code, response.data


def test_api_error_with_a_code():
    assert handle(ApiError("That table is full.", code="table_full")) == (
        400,
        {"code": "table_full", "detail": "That table is full."},
    )


def test_api_error_with_status_and_extra_keys():
    status, body = handle(Conflict("Moved on.", code="version_conflict", extra={"version": 7}))
    assert status == 409
    assert body == {"code": "version_conflict", "detail": "Moved on.", "version": 7}
    assert handle(ApiError("No.", code="not_seated", status_code=403))[0] == 403


def test_api_error_subclass_defaults():
    class TableFull(ApiError):
        default_code = "table_full"
        default_detail = "That table is full."

    assert handle(TableFull()) == (400, {"code": "table_full", "detail": "That table is full."})


def test_drf_exception_with_a_custom_code():
    exc = exceptions.PermissionDenied("Not your seat.", code="not_your_seat")
    assert handle(exc) == (403, {"code": "not_your_seat", "detail": "Not your seat."})


@pytest.mark.parametrize(
    ("exc", "status", "code"),
    [
        (Http404("gone"), 404, "not_found"),
        (DjangoPermissionDenied(), 403, "permission_denied"),
        (exceptions.Throttled(wait=3), 429, "throttled"),
        (RequestDataTooBig(), 413, "payload_too_large"),
    ],
)
def test_django_and_drf_exceptions(exc, status, code):
    got_status, body = handle(exc)
    assert (got_status, body["code"]) == (status, code)
    assert set(body) == ({"code", "detail", "retry_after"} if status == 429 else {"code", "detail"})


def test_django_validation_error_becomes_invalid_with_fields():
    status, body = handle(DjangoValidationError({"seat": ["Seat taken."]}))
    assert status == 400
    assert body == {
        "code": "invalid",
        "detail": "seat: Seat taken.",
        "fields": {"seat": ["Seat taken."]},
    }


def test_nested_validation_messages_are_flattened():
    status, body = handle(exceptions.ValidationError({"seats": [{"kind": ["Bad kind."]}]}))
    assert body["detail"] == "seats[0].kind: Bad kind."


def test_unknown_exceptions_are_left_to_django():
    assert exception_handler(RuntimeError("boom"), {}) is None


def test_django_handlers_answer_json_under_api():
    request = RequestFactory().get("/api/v1/anything")
    response = server_error(request)
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert not_found(request, Http404()).status_code == 404


def test_throttled_sets_retry_after():
    response = exception_handler(exceptions.Throttled(wait=2.2), {})
    assert response["Retry-After"] == "3"
    assert response.data["retry_after"] == 3
