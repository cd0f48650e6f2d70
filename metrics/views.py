"""``GET /metrics``: the Prometheus exposition of this node (``metrics.exposition``).

Outside ``/api/`` (not in the OpenAPI schema). Answered to a client on this machine (a loopback
address: the local Prometheus, ``curl`` on the node) and, from anywhere else, only with
``Authorization: Bearer <TONGITS_METRICS_TOKEN>``: 403 ``{"code": "metrics_refused"}`` otherwise
(also when no token is set). The client's address is the one the throttles use
(``ops.throttling.client_address``: ``TONGITS_NUM_PROXIES`` trusted proxies' X-Forwarded-For),
so a request through the node's own proxy counts as the caller's, not the proxy's.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST

from metrics import access, exposition
from ops.throttling import client_address


@never_cache
@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    """The exposition, to a local client or one that gives the token; 403 to anyone else."""
    if not access.allowed(client_address(request), request.headers.get("Authorization", "")):
        return JsonResponse({"code": "metrics_refused", "detail": str(access.REFUSED)}, status=403)
    return HttpResponse(exposition.render(), content_type=CONTENT_TYPE_LATEST)
