"""Who is answered the metrics: a client on this machine (a loopback address), and anyone else
only with ``Authorization: Bearer <TONGITS_METRICS_TOKEN>`` (never when no token is set). One
rule for ``/metrics`` on the web processes and for the endpoints of the processes without a web
server (``metrics.exporter``)."""

from __future__ import annotations

import hmac
import ipaddress

from django.conf import settings
from django.utils.translation import gettext_lazy

from core import error_texts

#: The 403's text (code ``metrics_refused``), in the request's language like every error code's.
REFUSED = gettext_lazy("Metrics are served to this machine, or with the metrics token.")
error_texts.register("metrics_refused", REFUSED)


def local(address: str) -> bool:
    """Whether ``address`` is a loopback address (an IPv6 zone is ignored)."""
    try:
        return ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


def token_given(authorization: str) -> bool:
    """Whether an ``Authorization`` header's value carries the metrics token."""
    expected = str(getattr(settings, "TONGITS_METRICS_TOKEN", "") or "")
    if not expected:
        return False
    scheme, _, given = authorization.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip(), expected)


def allowed(address: str, authorization: str) -> bool:
    """Whether a client at ``address`` with this ``Authorization`` header is answered."""
    return local(address) or token_given(authorization)
