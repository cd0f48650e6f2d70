"""The Celery application, configured from Django settings (keys prefixed ``CELERY_``)."""

import os
from typing import Any

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tongits_site.settings")

app = Celery("tongits_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The SQLAlchemy transport (the embedded default of `make run`) polls its table once a second by
# default: too slow for bot turns that follow each other. Its transport options go straight to
# SQLAlchemy's create_engine, which rejects `polling_interval`, so set the class default instead.
SQLA_POLLING_INTERVAL_SECONDS = 0.1


@app.on_after_configure.connect
def _poll_sqla_broker_faster(sender: Celery, **kwargs: Any) -> None:
    if str(sender.conf.broker_url or "").startswith(("sqla+", "sqlalchemy+")):
        from kombu.transport.sqlalchemy import Transport

        Transport.polling_interval = SQLA_POLLING_INTERVAL_SECONDS
