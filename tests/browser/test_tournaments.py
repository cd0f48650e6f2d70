"""Tournaments and the weekly board in a real Chromium, against the whole stack (conftest.py),
whose scheduler runs the tournaments' loop: axe-core finds no serious or critical violation on
the tournaments list, a tournament open for registration, its bracket with a live table to
watch, its result with the prizes, and the weekly board, at a desktop's and a phone's size.

A guest registers from the list; two people registered through the API fill the sit-and-go of
three, which starts within a second or two; all three resign, the server plays their seats out,
and the page (which follows the tournament) shows the prizes. Fails on any JavaScript error,
console error or 5xx answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.browser.a11y import Violation, axe_violations, blocking_report, require_axe
from tests.browser.support import Watch, api, api_user, drawn, page_token, play_as_guest

pytestmark = pytest.mark.slow
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
STARTED_MS = 30_000
FINISHED_MS = 120_000


def make_staff(stack: Any, username: str) -> None:
    """Staff, as an operator makes them: ``make manage`` on the stack's database."""
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    env["TONGITS_VAR_DIR"] = str(stack.var_dir)
    code = f"from accounts.models import User; User.objects.filter(username={username!r})" + (
        ".update(is_staff=True)"
    )
    subprocess.run(
        [sys.executable, "-m", "ops.manage", "shell", "-c", code], env=env, check=True, timeout=60
    )


def test_the_tournament_pages_are_clean_for_axe(watch: Watch, stack: Any) -> None:
    require_axe()
    base = watch.base_url
    boss, staff = api_user(base, "boss")
    make_staff(stack, boss)
    rules = {"preset": "standard", "turn_seconds": 30}
    body = {"name": "Cup of three", "rules": rules, "wins_to_match": 1, "entrants": 3}
    cup = api(base, staff, "POST", "/tournaments", {**body, "buy_in": 10, "prizes": [70, 30]})
    later = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    api(base, staff, "POST", "/tournaments", {**body, "name": "Evening", "starts_at": later})

    page = watch.open("tournaments", **DESKTOP)
    found: list[Violation] = []

    def check(screen: str) -> None:
        drawn(page)
        for name, size in (("desktop", DESKTOP), ("phone", PHONE)):
            page.set_viewport_size(size)
            found.extend(axe_violations(page, f"{screen} @ {name}"))
        page.set_viewport_size(DESKTOP)

    play_as_guest(page)
    page.get_by_test_id("tournaments-link").click()
    row = page.locator(f'[data-testid="tournament"][data-id="{cup["id"]}"]')
    row.wait_for()
    check("tournaments")

    row.get_by_test_id("tournament-register").click()
    row.get_by_test_id("tournament-unregister").wait_for()
    page.goto(f"/#/tournament/{cup['id']}")
    page.get_by_test_id("tournament-unregister").wait_for()
    check("tournament open for registration")

    others = [api_user(base, "entrant")[1] for _ in range(2)]
    for token in others:
        api(base, token, "POST", f"/tournaments/{cup['id']}/registration", {})
    live = page.locator('[data-testid="bracket-table"][data-status="active"]')
    live.wait_for(timeout=STARTED_MS)
    check("bracket with a live table")

    game_id = live.get_attribute("data-game")
    for token in [page_token(page), *others]:
        api(base, token, "POST", f"/games/{game_id}/resign")
    page.get_by_test_id("tournament-prizes").wait_for(timeout=FINISHED_MS)
    check("tournament result")
    assert page.get_by_test_id("tournament-prizes").locator("li").count() == 2

    page.goto("/#/weekly")
    page.get_by_test_id("weekly-week").wait_for()
    check("weekly board")

    for violation in found:
        print(violation.describe())
    report = blocking_report(found)
    assert not report, f"axe-core: serious or critical violations\n{report}"
    watch.check_clean()
