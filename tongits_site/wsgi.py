"""WSGI entry point (gunicorn tongits_site.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tongits_site.settings")

application = get_wsgi_application()

from runtime import heap  # noqa: E402 (after Django is set up)

heap.settle()
