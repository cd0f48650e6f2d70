"""Cursor pages, newest first, as the API's lists give them (a wallet's statement, the inbox).

A cursor stays right while new rows arrive and costs the same deep in a list as on its first
page (no OFFSET, no COUNT); a cursor that is not one of the list is the client's mistake: 400.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.utils.translation import gettext as _
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request


class NewestFirst(CursorPagination):
    """Newest first by id, 20 a page, ``page_size`` up to 100."""

    ordering = ("-id",)
    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 100


def cursor_page(
    rows: Any, request: Request, view: Any, item: Callable[[Any], Any]
) -> dict[str, Any]:
    """``{"next", "previous", "results"}`` of the page the request asks for (``cursor``,
    ``page_size``), each row shown by ``item``."""
    paginator = NewestFirst()
    try:
        page: Iterable[Any] = paginator.paginate_queryset(rows, request, view=view) or []
    except NotFound:  # DRF's answer to a cursor it cannot decode
        raise ValidationError({"cursor": [_("Not a cursor of this list.")]}) from None
    return {
        "next": paginator.get_next_link(),
        "previous": paginator.get_previous_link(),
        "results": [item(row) for row in page],
    }
