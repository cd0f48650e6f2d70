"""``GET /healthz``: liveness and readiness for load balancers and the compose health check.

It lives outside ``/api/`` (no authentication, not in the OpenAPI schema) and answers 200 only
when the database answers too, so a web container that lost its database is taken out of
rotation instead of serving errors.
"""

from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """200 ``{"status": "ok"}`` when ``SELECT 1`` succeeds, else 503 (status "unavailable")."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        return JsonResponse({"status": "unavailable", "database": "unreachable"}, status=503)
    return JsonResponse({"status": "ok"})
