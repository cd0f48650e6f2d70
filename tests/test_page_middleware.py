"""Django's browser middleware runs for pages, not for the token-authenticated API
(``runtime/page_middleware.py``)."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import User

pytestmark = pytest.mark.django_db


def test_an_api_request_gets_no_session_csrf_cookie_or_frame_header(auth_client_factory):
    client = auth_client_factory()
    response = client.get("/api/v1/me")
    assert response.status_code == 200
    assert "X-Frame-Options" not in response.headers
    assert not response.cookies  # no session, no CSRF cookie
    assert response.wsgi_request.path_info == "/api/v1/me"
    assert not hasattr(response.wsgi_request, "session")


def test_an_admin_session_does_not_authenticate_the_api():
    """Only a token authenticates under /api/v1/: a logged-in admin browser is anonymous there,
    so a cross-site request riding its cookie gets nothing."""
    staff = User.objects.create_superuser("staff-mw", password="x" * 20)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(staff)
    assert browser.get("/admin/").status_code == 200
    response = browser.get("/api/v1/me")
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"
    response = browser.post(
        "/api/v1/tables", {"rules": "standard"}, content_type="application/json"
    )
    assert response.status_code == 401


def test_pages_keep_sessions_csrf_and_the_frame_header():
    User.objects.create_superuser("staff-page", password="x" * 20)
    browser = Client(enforce_csrf_checks=True)
    page = browser.get("/admin/login/")
    assert page.status_code == 200
    assert page.headers["X-Frame-Options"] == "DENY"
    assert "csrftoken" in page.cookies
    login = {"username": "staff-page", "password": "x" * 20}
    assert browser.post("/admin/login/?next=/admin/", login).status_code == 403  # no token
    token = page.cookies["csrftoken"].value
    response = browser.post("/admin/login/?next=/admin/", {**login, "csrfmiddlewaretoken": token})
    assert response.status_code == 302 and response.headers["Location"] == "/admin/"
    assert browser.get("/admin/").status_code == 200  # the session holds the log-in
    assert "X-Frame-Options" in browser.get("/").headers  # the browser table is a page too
