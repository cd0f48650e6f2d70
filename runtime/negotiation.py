"""Content negotiation with a short way for the ``Accept`` headers clients send."""

from __future__ import annotations

from typing import Any

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer


class ClientNegotiation(DefaultContentNegotiation):
    """DRF's negotiation, answered at once when ``Accept`` is absent, ``*/*`` or exactly the
    first renderer's media type and no ``?format=`` is given: what the apps, the browser table
    and curl send. DRF's own way builds the request's whole header map and parses every media
    type to reach the same answer, a share of every game request's CPU worth saving
    (docs/scaling.md, "The web process's choices"). Every other header takes that way, so a 406
    and media type parameters behave as DRF documents them."""

    def select_renderer(
        self, request: Any, renderers: list[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        if renderers and not format_suffix:
            first = renderers[0]
            accept = request.META.get("HTTP_ACCEPT", "*/*")
            override = self.settings.URL_FORMAT_OVERRIDE
            if (accept == "*/*" or accept == first.media_type) and not (
                override and override in request.query_params
            ):
                return first, first.media_type
        return super().select_renderer(request, renderers, format_suffix)
