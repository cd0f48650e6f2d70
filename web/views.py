"""The one page of the browser client and the catalog of its texts; everything else it does
goes through /api/v1/."""

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import translation
from django.utils.translation.trans_real import DjangoTranslation
from django.views.decorators.cache import cache_control
from django.views.decorators.http import conditional_page, require_safe
from django.views.i18n import JSONCatalog

# An hour: a new translation reaches a browser within it; the ETag spares the body meanwhile.
CATALOG_MAX_AGE = 3600


class ProjectCatalog(JSONCatalog):
    """The djangojs texts of the project's own catalogs (LOCALE_PATHS) only: the admin's texts
    of the same domain would otherwise answer for words the translators have not done yet."""

    domain = "djangojs"

    def get(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        self.translation = DjangoTranslation(
            translation.get_language(),
            domain=self.domain,
            localedirs=[str(path) for path in settings.LOCALE_PATHS],
        )
        return self.render_to_response(self.get_context_data(**kwargs))


_catalog = ProjectCatalog.as_view()


@require_safe
def index(request: HttpRequest) -> HttpResponse:
    """The single-page client: screens are routed in the browser (``#/lobby``, ``#/table/<id>``).
    The page starts in the request's language (Accept-Language); the client then chooses."""
    language = translation.get_language()
    return render(
        request,
        "web/index.html",
        {"language": language, "direction": "rtl" if translation.get_language_bidi() else "ltr"},
    )


@require_safe
@conditional_page
@cache_control(public=True, max_age=CATALOG_MAX_AGE)
def catalog(request: HttpRequest, language: str) -> HttpResponse:
    """The browser table's texts in ``language`` (one of LANGUAGES) as Django's JSON catalog:
    ``{"catalog": {english: translation}, "formats": ..., "plural": <gettext expression>}``."""
    if language not in dict(settings.LANGUAGES):
        raise Http404("no such language")
    with translation.override(language):
        response = _catalog(request)
    response.headers["Content-Language"] = language
    return response
