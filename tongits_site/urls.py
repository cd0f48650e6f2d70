"""URL configuration.

/api/v1/       the API (accounts; the games API joins ``api_v1`` below)
/api/schema/   OpenAPI 3 schema;  /api/docs/  Swagger UI over it
/admin/        Django admin
/healthz       health check (200 {"status": "ok"} when the database answers), outside /api/
/              the browser table (web/): one page, a client of /api/v1/
/i18n/<lang>.json  the texts of its JavaScript in one language (the djangojs catalog)
"""

from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from core import api_errors
from metrics import views as metrics_views
from ops import health
from web import views as web_views

# Django tries the patterns in order: the games' come first, as a move and a game's view are
# most of the requests (the two lists share no path).
api_v1 = [
    path("", include("games.api.urls")),
    path("", include("accounts.api.urls")),
    path("", include("chips.api.urls")),
    path("", include("notifications.api.urls")),
    path("", include("chat.api.urls")),
    path("", include("matchmaking.api.urls")),
    path("", include("tournaments.api.urls")),
    path("", include("social.api.urls")),
    path("", include("store.api.urls")),
    path("", include("fairplay.api.urls")),
]

urlpatterns = [
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    # Keep last among the /api/ routes: any other /api/ URL is a JSON 404, even with DEBUG on.
    re_path(r"^api/", api_errors.api_not_found),
    path("admin/", admin.site.urls),
    path("healthz", health.healthz, name="healthz"),
    path("metrics", metrics_views.metrics, name="metrics"),
    path("i18n/<str:language>.json", web_views.catalog, name="web-catalog"),
    path("", web_views.index, name="web-index"),
]

handler400 = api_errors.bad_request
handler403 = api_errors.permission_denied
handler404 = api_errors.not_found
handler500 = api_errors.server_error
