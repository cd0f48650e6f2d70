"""Staff audit in the admin (read-only) and the OpenAPI documentation of the players API."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.test import Client

from accounts import projections
from accounts.models import PlayerMatch, User
from tests.accounts.support import play_with_bots

pytestmark = pytest.mark.django_db


def test_admin_shows_games_events_players_and_projections_read_only(user_factory):
    ann = user_factory()
    game_id = play_with_bots(
        ann,
        [{"kind": "user"}, {"kind": "bot", "level": "easy"}, {"kind": "bot", "level": "normal"}],
        {"preset": "standard", "wins_to_match": 1},
        seed=2,
    )
    projections.project_match(game_id)
    staff = User.objects.create_superuser("staff", password="x" * 20)
    client = Client()
    client.force_login(staff)
    row = PlayerMatch.objects.get(player=ann)
    pages = [
        f"/admin/games/game/{game_id}/change/",
        f"/admin/games/event/?game__id__exact={game_id}",
        f"/admin/accounts/user/{ann.pk}/change/",
        f"/admin/accounts/playermatch/?player__id__exact={ann.pk}",
        f"/admin/accounts/playermatch/{row.pk}/change/",
        "/admin/accounts/playerstats/",
        f"/admin/accounts/matchrecord/{game_id}/change/",
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
    game_page = client.get(f"/admin/games/game/{game_id}/change/").content.decode()
    assert f"game__id__exact={game_id}" in game_page  # the events, linked
    assert f"/admin/accounts/matchrecord/{game_id}/change/" in game_page
    assert "1 matches" in client.get(f"/admin/accounts/user/{ann.pk}/change/").content.decode()
    # Read-only: no saving a projection row.
    response = client.post(f"/admin/accounts/playermatch/{row.pk}/change/", {"chips": 99})
    assert response.status_code == 403
    assert PlayerMatch.objects.get(pk=row.pk).chips == row.chips


def test_schema_documents_the_players_api(tmp_path):
    import yaml

    path = tmp_path / "openapi.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    paths = yaml.safe_load(path.read_text())["paths"]
    matches = paths["/api/v1/players/{username}/matches"]["get"]
    assert {p["name"] for p in matches["parameters"]} >= {
        "username",
        "result",
        "since",
        "until",
        "opponent",
        "rules",
        "cursor",
        "page_size",
    }
    assert {"200", "400", "404"} <= set(matches["responses"])
    assert {"200", "404"} <= set(paths["/api/v1/players/{username}/stats"]["get"]["responses"])
    board = paths["/api/v1/leaderboard"]["get"]
    assert {"min_games", "limit", "offset"} <= {p["name"] for p in board["parameters"]}
    assert {"200", "404"} <= set(paths["/api/v1/matches/{game_id}"]["get"]["responses"])


def test_bench_history_uses_the_index_and_leaves_nothing_behind(capsys):
    """The benchmark itself (``manage.py bench_history``) on a small history: the page query
    uses its index and the rows are rolled back (its time is reported, not judged here)."""
    call_command("bench_history", "--matches", "300", "--repeats", "3", "--no-target")
    out = capsys.readouterr().out
    assert "Index Scan using accounts_pm_history" in out and "OK: first page" in out
    assert (
        not PlayerMatch.objects.exists()
        and not User.objects.filter(username__startswith="bench-").exists()
    )
