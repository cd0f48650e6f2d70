"""The Celery application, configured from Django settings (keys prefixed ``CELERY_``)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tongits_site.settings")

app = Celery("tongits_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
