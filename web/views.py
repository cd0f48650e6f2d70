"""The one page of the browser client; everything else it does goes through /api/v1/."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe


@require_safe
def index(request: HttpRequest) -> HttpResponse:
    """The single-page client: screens are routed in the browser (``#/lobby``, ``#/table/<id>``)."""
    return render(request, "web/index.html")
