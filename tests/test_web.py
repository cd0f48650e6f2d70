"""The browser table's page and static files, as Django serves them (no collectstatic)."""

from __future__ import annotations

import re


def test_the_page_at_root_loads_the_client_modules(client) -> None:
    response = client.get("/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    scripts = re.findall(r'<script type="module" src="([^"]+)"', html)
    styles = re.findall(r'<link rel="stylesheet" href="([^"]+)"', html)
    assert scripts == ["/static/web/app.js"] and styles == ["/static/web/style.css"]
    for url in scripts + styles + ["/static/web/table.js", "/static/web/api.js"]:
        static = client.get(url)
        assert static.status_code == 200, url
        body = b"".join(static.streaming_content) if static.streaming else static.content
        assert body.strip(), url
    assert client.get("/static/web/app.js")["Content-Type"].startswith("text/javascript")


def test_the_page_does_not_shadow_the_api_or_health(client) -> None:
    response = client.get("/api/v1/no-such-thing")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert client.post("/").status_code == 405  # the page only answers GET and HEAD
    assert client.get("/no-such-page").status_code == 404
