"""``GET /metrics``: the Prometheus exposition of this node (``metrics.exposition``).

Outside ``/api/`` (not in the OpenAPI schema). Answered to a client on this machine (a loopback
address: the local Prometheus, ``curl`` on the node) and, from anywhere else, only with
``Authorization: Bearer <TONGITS_METRICS_TOKEN>``: 403 ``{"code": "metrics_refused"}`` otherwise
(also when no token is set). The client's address is the one the throttles use
(``ops.throttling.client_address``: ``TONGITS_NUM_PROXIES`` trusted proxies' X-Forwarded-For),
so a request through the node's own proxy counts as the caller's, not the proxy's.
"""

from __future__ import annotations

import hmac
import ipaddress

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST

from core import error_texts
from metrics import exposition
from ops.throttling import client_address

#: The 403's text, in the request's language like every error code's.
REFUSED = gettext_lazy("Metrics are served to this machine, or with the metrics token.")
error_texts.register("metrics_refused", REFUSED)


def _local(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


def _token_given(request: HttpRequest) -> bool:
    expected = str(getattr(settings, "TONGITS_METRICS_TOKEN", "") or "")
    if not expected:
        return False
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip(), expected)


@never_cache
@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    """The exposition, to a local client or one that gives the token; 403 to anyone else."""
    if not (_local(client_address(request)) or _token_given(request)):
        return JsonResponse({"code": "metrics_refused", "detail": str(REFUSED)}, status=403)
    return HttpResponse(exposition.render(), content_type=CONTENT_TYPE_LATEST)
