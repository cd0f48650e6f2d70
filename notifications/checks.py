"""System checks (``manage.py check``, and every ``migrate``, which ``make run`` and compose run
first): a VAPID key, an FCM service account, an APNs key or setting, or a webhook list the
notifications cannot use stops the start with its reason, instead of failing at the first push
or delivery."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from notifications import apns, fcm, push, webhooks


@checks.register()
def notification_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    errors: list[checks.CheckMessage] = []
    try:
        push.vapid_private_key()
    except ImproperlyConfigured as exc:
        errors.append(checks.Error(str(exc), id="notifications.E001"))
    try:
        config = push.fcm_config()
        if config is not None:
            fcm.read_service_account(config.credentials_file)
    except fcm.ConfigError as exc:
        errors.append(checks.Error(str(exc), id="notifications.E003"))
    try:
        config = push.apns_config()
        if config is not None:
            apns.check(config)
    except apns.ConfigError as exc:
        errors.append(checks.Error(str(exc), id="notifications.E004"))
    try:
        webhooks.parse_config(settings.TONGITS_WEBHOOKS)
    except ImproperlyConfigured as exc:
        errors.append(checks.Error(str(exc), id="notifications.E002"))
    return errors
