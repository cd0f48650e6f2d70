"""ASGI entry point: what gunicorn's uvicorn workers (and uvicorn) serve.

Django's ASGI handler runs the sync DRF views in threads as before; the live streams
(``games.live``) wait in the event loop.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tongits_site.settings")

application = get_asgi_application()

# A long-lived server process: the live pool's threads keep their database connections.
from games.live import db as live_db  # noqa: E402 (after Django is set up)

live_db.keep_connections = True
