"""A user's push targets: register one for a session, list them, remove one (no HTTP here).

A device belongs to the session that registered it, so signing out ends its pushes (the row is
deleted with the session, ``on_delete=CASCADE``). A token (a Web Push endpoint, an FCM or APNs
token) names one app install on one device, at most once (unique ``(kind, token)``):

* registered again by the same user (another log-in on the same browser, new keys after a
  re-subscription), the row moves to the new session and takes the new keys, keeping its id;
* registered by another user, the device changed hands: the old row is deleted and a new one,
  with a new id, is made for the new user, so that no push still queued for the previous owner
  (``PushDelivery.device_id``) can reach the new one (``notifications.push`` skips deliveries
  whose device is gone).
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from core.errors import Conflict, NotFound
from notifications import push
from notifications.models import Device

#: The most devices one user keeps: registering one more removes their oldest (browsers that
#: re-subscribe leave old endpoints behind, and nothing else would bound the rows).
MAX_DEVICES_PER_USER = 20


class WebPushNotConfigured(Conflict):
    code = "webpush_not_configured"
    detail = gettext_lazy("This server sends no Web Push (no VAPID key is configured).")


class PushNotConfigured(Conflict):
    code = "push_not_configured"
    detail = gettext_lazy("This server sends no pushes of this kind.")


def _not_configured(kind: str) -> Conflict:
    """The 409 for a kind this server does not send to: its text and ``configured`` name the
    kinds it does send to (only those: a client told to register another kind would register
    one that never hears anything)."""
    kinds = push.configured_kinds()
    error = WebPushNotConfigured if kind == Device.Kind.WEBPUSH else PushNotConfigured
    if kinds:
        detail = _("This server sends no %(kind)s pushes. It sends: %(kinds)s.") % {
            "kind": kind,
            "kinds": ", ".join(kinds),
        }
    else:
        detail = _("This server sends no pushes at all.")
    return error(detail, extra={"configured": kinds})


class DeviceNotFound(NotFound):
    detail = gettext_lazy("No such device.")


def device_register(
    user: Any,
    session: Any,
    kind: str,
    token: str,
    p256dh: str = "",
    auth: str = "",
) -> tuple[Device, bool]:
    """Register (or move) a push target for ``session``; returns the device and whether it is a
    new row (False: the same user's device moved to this session and took these keys).

    The input's shape is the API's to check; this refuses a kind the server cannot send to
    (``WebPushNotConfigured``, ``PushNotConfigured``), before anything is stored, rather than
    accept a target that would never hear anything.
    """
    if kind not in push.configured_kinds():
        raise _not_configured(kind)
    if kind != Device.Kind.WEBPUSH:
        p256dh = auth = ""
    with transaction.atomic():
        for tries_left in (2, 1, 0):
            device = Device.objects.select_for_update().filter(kind=kind, token=token).first()
            if device is not None and device.user_id == user.pk:
                device.session = session
                device.p256dh = p256dh
                device.auth = auth
                device.save(update_fields=["session", "p256dh", "auth"])
                return device, False
            if device is not None:
                device.delete()  # it changed hands: a new id, so the old owner's pushes stop
            try:
                with transaction.atomic():
                    device = Device.objects.create(
                        user=user, session=session, kind=kind, token=token, p256dh=p256dh, auth=auth
                    )
            except IntegrityError:
                if not tries_left:  # not a race for the token (the session just ended?)
                    raise
                continue  # a concurrent registration of the token won: take it from there
            _trim(user)
            return device, True
    raise AssertionError("unreachable")


def _trim(user: Any) -> None:
    """Keep the user's newest ``MAX_DEVICES_PER_USER`` devices."""
    stale = list(
        Device.objects.filter(user=user)
        .order_by("-created_at", "-id")
        .values_list("id", flat=True)[MAX_DEVICES_PER_USER:]
    )
    if stale:
        Device.objects.filter(pk__in=stale).delete()


def devices_of(user: Any) -> list[Device]:
    """The user's devices, oldest first."""
    return list(Device.objects.filter(user=user).order_by("created_at", "id"))


def device_remove(user: Any, device_id: uuid.UUID | str) -> None:
    """Remove one of the user's devices; ``DeviceNotFound`` for any other id (another user's
    too: whether it exists is not theirs to learn)."""
    deleted, _ = Device.objects.filter(user=user, pk=device_id).delete()
    if not deleted:
        raise DeviceNotFound()


def device_entry(
    device: Device, *, current_session: Any = None, kinds: list[str] | None = None
) -> dict[str, Any]:
    """One device as the API shows it: never its token, endpoint path or keys. ``deliverable``:
    its kind is one this server sends to now (``kinds``, default ``push.configured_kinds()``);
    a device of a kind unconfigured since it was registered is kept but never tried."""
    kinds = push.configured_kinds() if kinds is None else kinds
    return {
        "id": device.pk,
        "kind": device.kind,
        "created_at": device.created_at,
        "session": device.session_id,
        "current": current_session is not None and device.session_id == current_session.pk,
        "endpoint_host": push.target_of(device) if device.kind == Device.Kind.WEBPUSH else None,
        "deliverable": device.kind in kinds,
    }
