"""The devices API: a session's push targets, and the key browsers need to make one.

Thin views: the serializers check a request's shape, ``notifications.devices`` does the work,
the answers never show a target's token, endpoint path or keys (only the push service's host).

    GET    /api/v1/me/devices        my devices
    POST   /api/v1/me/devices        register one for this session (a PushSubscription's JSON,
                                     or an FCM/APNs token): 201 new, 200 moved to this session
    DELETE /api/v1/me/devices/{id}   remove one (204; 404 for anyone else's)
    GET    /api/v1/push/config       the kinds this server sends to, and Web Push's
                                     applicationServerKey (null: no Web Push here)

The domain codes of these operations are registered for the schema below (``api_schema``).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
import uuid
from typing import Any
from urllib.parse import urlsplit

from cryptography.hazmat.primitives.asymmetric import ec
from django.conf import settings
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core import api_schema
from core.api_errors import error_responses
from core.api_fields import StrictCharField
from notifications import devices, push
from notifications.models import Device

TAGS = ["notifications"]
#: The device kinds, for the schema's enum name (``ENUM_NAME_OVERRIDES["DeviceKindEnum"]``).
DEVICE_KINDS = Device.Kind.choices

_CONFIGURED_SCHEMA = {
    "type": "array",
    "items": {"type": "string", "enum": list(Device.Kind.values)},
    "description": 'codes "push_not_configured" and "webpush_not_configured": the device kinds '
    "this server sends to (GET /push/config lists them too); empty: none.",
}
api_schema.register(
    {"me_devices_register": {409: ("push_not_configured", "webpush_not_configured")}},
    fields={
        "push_not_configured": ("configured", _CONFIGURED_SCHEMA, ["webpush", "apns"]),
        "webpush_not_configured": ("configured", _CONFIGURED_SCHEMA, ["fcm", "apns"]),
    },
    details={
        "push_not_configured": "This server sends no fcm pushes. It sends: webpush, apns.",
        "webpush_not_configured": "This server sends no webpush pushes. It sends: fcm, apns.",
    },
)

#: The longest Web Push endpoint accepted (the push services' are 150 to 400 characters).
MAX_ENDPOINT = 2000
_TOKEN = re.compile(r"[A-Za-z0-9_:.\-]{16,4096}")
_APNS_TOKEN = re.compile(r"[0-9A-Fa-f]{64,200}")
_B64URL = re.compile(r"[A-Za-z0-9_-]+={0,2}")
#: Host names a push service never has: the endpoint is a URL this server will POST to, so it
#: must not name the server's own network.
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa")


def _b64url_bytes(text: str) -> bytes | None:
    if not _B64URL.fullmatch(text):
        return None
    try:
        return base64.urlsafe_b64decode(text.rstrip("=") + "=" * (-len(text.rstrip("=")) % 4))
    except (binascii.Error, ValueError):
        return None


class PushKeysSerializer(serializers.Serializer):
    p256dh = StrictCharField(
        max_length=200,
        help_text="The subscription's P-256 public key: base64url of the uncompressed point.",
    )
    auth = StrictCharField(
        max_length=100, help_text="The subscription's 16-byte auth secret, base64url."
    )

    def validate_p256dh(self, value: str) -> str:
        raw = _b64url_bytes(value)
        try:
            if raw is None or len(raw) != 65:
                raise ValueError
            ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), raw)
        except ValueError:
            raise serializers.ValidationError(
                _("Not a P-256 public key (base64url of 65 bytes).")
            ) from None
        return value

    def validate_auth(self, value: str) -> str:
        raw = _b64url_bytes(value)
        if raw is None or len(raw) != 16:
            raise serializers.ValidationError(_("Not an auth secret (base64url of 16 bytes)."))
        return value


class DeviceInputSerializer(serializers.Serializer):
    """A Web Push subscription as ``PushSubscription.toJSON()`` gives it (with ``kind``
    "webpush"), or an FCM or APNs token. Other keys (``expirationTime``) are ignored."""

    kind = serializers.ChoiceField(choices=DEVICE_KINDS)
    endpoint = StrictCharField(
        required=False,
        max_length=MAX_ENDPOINT,
        help_text='kind "webpush": the subscription\'s endpoint, an https URL of a push service.',
    )
    keys = PushKeysSerializer(required=False, help_text='kind "webpush": its keys.')
    token = StrictCharField(
        required=False, max_length=4096, help_text='kind "fcm" or "apns": the device token.'
    )

    def validate_endpoint(self, value: str) -> str:
        parts = urlsplit(value)
        host = (parts.hostname or "").lower()
        allowed = settings.TONGITS_WEBPUSH_ENDPOINT_HOSTS
        if allowed:  # the operator's list: only these hosts, http too (a stand-in of its own)
            listed = any(host == h or (h.startswith(".") and host.endswith(h)) for h in allowed)
            if not listed or parts.scheme not in ("https", "http"):
                raise serializers.ValidationError(_("Not a push service this server accepts."))
            return value
        try:
            literal = bool(host) and ipaddress.ip_address(host) is not None
        except ValueError:
            literal = False
        try:
            parts.port  # noqa: B018  (raises on a bad port)
        except ValueError:
            host = ""
        if (
            parts.scheme != "https"
            or not host
            or literal
            or "." not in host
            or host == "localhost"
            or host.endswith(_LOCAL_SUFFIXES)
            or parts.username is not None
            or parts.password is not None
        ):
            raise serializers.ValidationError(_("Not the https URL of a push service."))
        return value

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        kind = data["kind"]
        problems: dict[str, list[str]] = {}
        if kind == Device.Kind.WEBPUSH:
            for name in ("endpoint", "keys"):
                if name not in data:
                    problems[name] = [_('Required for kind "webpush".')]
            if "token" in data:
                problems["token"] = [_('Not for kind "webpush": give endpoint and keys.')]
        else:
            token = data.get("token")
            if token is None:
                problems["token"] = [_('Required for kind "%(kind)s".') % {"kind": kind}]
            elif not (_APNS_TOKEN if kind == Device.Kind.APNS else _TOKEN).fullmatch(token):
                problems["token"] = [_("Not a %(kind)s token.") % {"kind": kind}]
            for name in ("endpoint", "keys"):
                if name in data:
                    problems[name] = [
                        _('Only for kind "webpush", not "%(kind)s".') % {"kind": kind}
                    ]
        if problems:
            raise serializers.ValidationError(problems)
        if kind == Device.Kind.WEBPUSH:
            return {"kind": kind, "token": data["endpoint"], **data["keys"]}
        return {"kind": kind, "token": data["token"]}


class DeviceSerializer(serializers.Serializer):
    id = serializers.UUIDField(help_text="DELETE /me/devices/{id} removes it.")
    kind = serializers.ChoiceField(choices=DEVICE_KINDS)
    created_at = serializers.DateTimeField()
    session = serializers.UUIDField(
        help_text="The session it belongs to (see /me/sessions): it goes when the session ends."
    )
    current = serializers.BooleanField(help_text="It belongs to this request's session.")
    endpoint_host = serializers.CharField(
        allow_null=True, help_text='kind "webpush": the push service\'s host; else null.'
    )
    deliverable = serializers.BooleanField(
        help_text="This server sends to its kind now. false: its kind was configured when it "
        "was registered and is no longer; it is kept, but nothing is sent to it."
    )


class WebPushConfigSerializer(serializers.Serializer):
    application_server_key = serializers.CharField(
        help_text="The server's VAPID public key (base64url of the uncompressed P-256 point): "
        "pushManager.subscribe's applicationServerKey."
    )


class PushConfigSerializer(serializers.Serializer):
    kinds = serializers.ListField(
        child=serializers.ChoiceField(choices=DEVICE_KINDS),
        help_text="The device kinds this server sends to: POST /me/devices refuses any other "
        "(409). Empty: no pushes at all.",
    )
    webpush = WebPushConfigSerializer(
        allow_null=True, help_text="null: this server sends no Web Push."
    )


_WEBPUSH_EXAMPLE = OpenApiExample(
    "webpush",
    value={
        "kind": "webpush",
        "endpoint": "https://fcm.googleapis.com/fcm/send/dpH5lCsTSSM:APA91bHqjZ",
        "keys": {
            "p256dh": "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I"
            "99e8QcYP7DkM",
            "auth": "tBHItJI5svbpez7KI4CCXg",
        },
    },
    request_only=True,
)
_TOKEN_EXAMPLE = OpenApiExample(
    "fcm", value={"kind": "fcm", "token": "cTa1Ez9pR0uV3x:APA91bF_example"}, request_only=True
)


class DevicesApi(APIView):
    @extend_schema(
        operation_id="me_devices",
        summary="My push targets (devices), oldest first",
        tags=TAGS,
        responses={200: DeviceSerializer(many=True), **error_responses(401)},
    )
    def get(self, request: Request) -> Response:
        kinds = push.configured_kinds()
        entries = [
            devices.device_entry(device, current_session=request.auth, kinds=kinds)
            for device in devices.devices_of(request.user)
        ]
        return Response(DeviceSerializer(entries, many=True).data)

    @extend_schema(
        operation_id="me_devices_register",
        summary="Register a push target for this session",
        description="Only a kind this server sends to is accepted (GET /push/config lists "
        "them): a device of any other kind is refused with 409, nothing stored, the answer's "
        "`configured` naming the kinds it sends to (code `webpush_not_configured` for Web Push "
        "without a VAPID key, `push_not_configured` for FCM or APNs without their credentials). "
        'The body of a Web Push subscription is PushSubscription.toJSON() with "kind": '
        '"webpush" (GET /push/config gives the applicationServerKey); an FCM registration token '
        'comes as {"kind": "fcm", "token"} (16 to 4,096 of A-Z a-z 0-9 _ : . -), an '
        'APNs device token as {"kind": "apns", "token"} (64 to 200 hex digits). The same target '
        "registered again moves to this session (200, same id); registered by another user, it "
        "changes hands (201, a new id). It is removed when this session ends, and when its push "
        "service answers that it is gone.",
        tags=TAGS,
        request=DeviceInputSerializer,
        examples=[_WEBPUSH_EXAMPLE, _TOKEN_EXAMPLE],
        responses={
            201: DeviceSerializer,
            200: DeviceSerializer,
            **error_responses(400, 401, 409, 415),
        },
    )
    def post(self, request: Request) -> Response:
        data = DeviceInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        device, created = devices.device_register(request.user, request.auth, **data.validated_data)
        body = DeviceSerializer(devices.device_entry(device, current_session=request.auth)).data
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class DeviceApi(APIView):
    @extend_schema(
        operation_id="me_devices_remove",
        summary="Remove one of my push targets",
        tags=TAGS,
        responses={204: None, **error_responses(401, 404)},
    )
    def delete(self, request: Request, device_id: uuid.UUID) -> Response:
        devices.device_remove(request.user, device_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class PushConfigApi(APIView):
    @extend_schema(
        operation_id="push_config",
        summary="What a client needs to register a push target",
        tags=TAGS,
        responses={200: PushConfigSerializer, **error_responses(401)},
    )
    def get(self, request: Request) -> Response:
        key = push.vapid_public_key()
        body = {
            "kinds": push.configured_kinds(),
            "webpush": {"application_server_key": key} if key else None,
        }
        return Response(PushConfigSerializer(body).data)
