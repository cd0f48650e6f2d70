"""Content negotiation: the short way gives DRF's own answer, and every other header still
goes DRF's way (406 included)."""

from __future__ import annotations

import pytest
from django.test import RequestFactory
from drf_orjson_renderer.renderers import ORJSONRenderer
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer
from rest_framework.request import Request

from runtime.negotiation import ClientNegotiation

ACCEPTS = [
    None,
    "*/*",
    "application/json",
    "application/json; indent=4",
    "text/html, application/json;q=0.9",
    "application/*",
    "text/html",
    "",
]


def _request(accept: str | None, query: str = "") -> Request:
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    return Request(RequestFactory().get(f"/api/v1/me{query}", **headers))


def _answer(negotiation, request: Request, renderers) -> tuple[type, str] | str:
    try:
        renderer, media_type = negotiation.select_renderer(request, renderers)
    except Exception as exc:  # NotAcceptable, Http404: compared by kind
        return type(exc).__name__
    return type(renderer), media_type


@pytest.mark.parametrize("accept", ACCEPTS)
@pytest.mark.parametrize("query", ["", "?format=json", "?format=api"])
@pytest.mark.parametrize(
    "renderer_classes", [[ORJSONRenderer], [BrowsableAPIRenderer, ORJSONRenderer]]
)
def test_same_answer_as_drf(accept, query, renderer_classes) -> None:
    renderers = [cls() for cls in renderer_classes]
    ours = _answer(ClientNegotiation(), _request(accept, query), renderers)
    drf = _answer(DefaultContentNegotiation(), _request(accept, query), renderers)
    assert ours == drf


def test_the_short_way_skips_parsing(monkeypatch) -> None:
    """For what clients send, the Accept header is not parsed at all."""

    def refuse(*args, **kwargs):
        raise AssertionError("parsed")

    monkeypatch.setattr(DefaultContentNegotiation, "get_accept_list", refuse)
    for accept in (None, "*/*", "application/json"):
        renderer, media_type = ClientNegotiation().select_renderer(
            _request(accept), [ORJSONRenderer()]
        )
        assert (type(renderer), media_type) == (ORJSONRenderer, "application/json")


@pytest.mark.django_db
def test_the_api_uses_it(auth_client) -> None:
    """The settings name it, and an API view answers JSON through it."""
    from rest_framework.views import APIView

    assert APIView.content_negotiation_class is ClientNegotiation
    for accept in (None, "*/*", "application/json"):
        headers = {} if accept is None else {"HTTP_ACCEPT": accept}
        answer = auth_client.get("/api/v1/me", **headers)
        assert answer.status_code == 200
        assert answer["Content-Type"] == "application/json"
