"""The browser table's social features in a real Chromium, against the whole stack (conftest.py),
each with two browser contexts (two players on two devices) and, where a third person is
needed, an account driven through the API only.

1. Rematch: a match of three people ends (each resigns: the server plays the seats out, one
   round, wins_to_match 1); Ana proposes a rematch from the result; Ben sees the proposal
   arrive without a reload and accepts, and Ana sees his answer arrive; once Cora (the API)
   accepts, both browsers are at the new table, which is the rematch of the old one.
2. Chat: Ana writes at the table and Ben reads it live; Ben mutes Ana, whose next message
   reaches Ana's page but never Ben's (a later message of Cora's does, so the stream did
   deliver), nor does it come back when he reloads; Ben reports Cora's message and is told so.
3. Watching: Ana starts a public table of her and two bots from the lobby's form; Ben finds it
   in his Watch list with its spectator count, opens it and sees it read-only (every seat's
   card count, the melds and the discard pile; no hand, no moves, no resign), and the count
   of spectators goes up to one in the list.

Every new screen or panel (the result's rematch, the proposal to answer, the chat with a
report being made, the lobby with the Watch list and the spectators' choice, the spectator's
table) is checked with axe-core at 1280 and 390 px (no serious or critical violation) and for
tap targets of at least 40 px at 390 px. All fail on any JavaScript error, console error or
5xx answer.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.browser.a11y import axe_violations, blocking_report, require_axe, small_tap_targets
from tests.browser.support import Watch, api, api_user, page_token, register

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
MATCH_MS = 120_000
SHOTS = os.environ.get("TONGITS_SCREENSHOTS")

pytestmark = pytest.mark.slow


def table_of_three(base_url: str, ana: str, ben: str, cora: str, rules: dict) -> str:
    """Ana's table with Ben and Cora in the open seats, started: its id."""
    table = api(
        base_url,
        ana,
        "POST",
        "/tables",
        {
            "rules": rules,
            "rated": False,
            "seats": [{"kind": "user"}, {"kind": "open"}, {"kind": "open"}],
        },
    )
    api(base_url, ben, "POST", f"/tables/{table['id']}/join", {})
    api(base_url, cora, "POST", f"/tables/{table['id']}/join", {})
    api(base_url, ana, "POST", f"/tables/{table['id']}/start")
    return table["id"]


class Checks:
    """axe-core at both sizes and the phone's tap targets, gathered over a test's screens and
    asserted once at the end."""

    def __init__(self) -> None:
        require_axe()
        self.violations: list = []
        self.small: list[str] = []
        self.screens: list[str] = []

    def __call__(self, page: Any, screen: str, ready: str | None = None) -> None:
        before = page.viewport_size
        for name, size in (("desktop", DESKTOP), ("phone", PHONE)):
            page.set_viewport_size(size)
            if ready:
                page.locator(ready).first.wait_for()
            label = f"{screen} @ {name} {size['width']}px"
            self.violations.extend(axe_violations(page, label))
            if SHOTS:  # the screen as checked, to look at by eye
                Path(SHOTS).mkdir(parents=True, exist_ok=True)
                slug = "".join(c if c.isalnum() else "-" for c in label.lower())
                page.screenshot(path=str(Path(SHOTS) / f"social-{slug}.png"), full_page=True)
            if name == "phone":
                self.small.extend(small_tap_targets(page, f"{screen} @ phone"))
        page.set_viewport_size(before)
        self.screens.append(screen)

    def verify(self, count: int) -> None:
        assert len(self.screens) == count, self.screens
        for violation in self.violations:
            print(violation.describe())
        report = blocking_report(self.violations)
        assert not report, f"axe-core: serious or critical violations\n{report}"
        listed = "\n".join(self.small)
        assert not self.small, f"tap targets under 40x40 px on a 390 px phone:\n{listed}"


def resign(page: Any) -> None:
    page.get_by_test_id("resign").click()
    page.get_by_test_id("resign-confirm").click()


def test_a_rematch_is_proposed_seen_live_accepted_and_both_go_to_the_new_table(
    watch: Watch,
) -> None:
    check = Checks()
    ana, ben = watch.open("ana", **DESKTOP), watch.open("ben", **DESKTOP)
    ana_name = register(ana, "ana")
    ben_name = register(ben, "ben")
    cora_name, cora = api_user(watch.base_url, "cora")
    base, ana_token, ben_token = watch.base_url, page_token(ana), page_token(ben)
    old = table_of_three(
        base, ana_token, ben_token, cora, {"preset": "standard", "wins_to_match": 1}
    )

    for page in (ana, ben):
        page.goto(f"/#/table/{old}")
        page.get_by_test_id("turn-indicator").wait_for()
        resign(page)
    api(base, cora, "POST", f"/games/{old}/resign")  # the server plays all three seats out
    for page in (ana, ben):
        page.get_by_test_id("match-result").wait_for(timeout=MATCH_MS)
        page.get_by_test_id("propose-rematch").wait_for()
        page.evaluate("window.__sameDocument = true")
    check(ana, "result with the rematch button")

    ana.get_by_test_id("propose-rematch").click()
    ana.locator('[data-testid="rematch-answer"][data-answer="pending"]').first.wait_for()
    # Ben's page learns of it from /me/stream: no reload, no click.
    accept = ben.get_by_test_id("accept-rematch")
    accept.wait_for(timeout=5_000)
    status = ben.get_by_test_id("rematch-status").inner_text()
    assert f"{ana_name} proposed a rematch" in status, status
    answers = {
        row.get_attribute("data-username"): row.get_attribute("data-answer")
        for row in ben.get_by_test_id("rematch-answer").all()
    }
    assert answers == {ana_name: "accepted", ben_name: "pending", cora_name: "pending"}, answers
    check(ben, "rematch proposal to answer", ready='[data-testid="accept-rematch"]')

    accept.click()
    # Ana sees Ben's answer arrive while Cora has not answered yet.
    ana.locator(
        f'[data-testid="rematch-answer"][data-username="{ben_name}"][data-answer="accepted"]'
    ).wait_for(timeout=5_000)
    ben.get_by_text("Waiting for the others' answers").wait_for()
    assert ben.get_by_test_id("accept-rematch").count() == 0
    assert ana.evaluate("location.hash") == f"#/table/{old}"

    api(base, cora, "POST", f"/games/{old}/rematch/answer", {"answer": "accept"})
    new_ids = []
    for page in (ana, ben):
        page.wait_for_function(
            "old => location.hash.startsWith('#/table/') && !location.hash.endsWith(old)",
            arg=old,
            timeout=10_000,
        )
        new_id = page.evaluate("location.hash").split("/")[-1]
        page.locator(f'[data-testid="table"][data-game="{new_id}"]').wait_for()
        page.get_by_test_id("hand-card").first.wait_for()
        assert page.evaluate("window.__sameDocument === true"), "the page was reloaded"
        new_ids.append(new_id)
    assert new_ids[0] == new_ids[1] != old
    table = api(base, ana_token, "GET", f"/tables/{new_ids[0]}")
    assert table["rematch_of"] == old and table["status"] == "active", table
    rematch = api(base, ben_token, "GET", f"/games/{old}/rematch")
    assert rematch["status"] == "started" and rematch["next_game_id"] == new_ids[0]

    check.verify(2)
    watch.check_clean()


def messages(page: Any) -> list[tuple[str, str]]:
    rows = page.get_by_test_id("chat-message").all()
    return [(row.get_attribute("data-username"), row.inner_text()) for row in rows]


def test_chat_is_live_a_muted_player_disappears_and_a_report_is_confirmed(watch: Watch) -> None:
    check = Checks()
    ana, ben = watch.open("ana", **DESKTOP), watch.open("ben", **PHONE)
    ana_name = register(ana, "ana")
    register(ben, "ben")
    cora_name, cora = api_user(watch.base_url, "cora")
    base = watch.base_url
    game = table_of_three(
        base, page_token(ana), page_token(ben), cora, {"preset": "standard", "turn_seconds": 0}
    )  # nobody is timed out
    for page in (ana, ben):
        page.goto(f"/#/table/{game}")
        page.get_by_test_id("chat-text").wait_for()
        page.evaluate("window.__sameDocument = true")
    text = ana.get_by_test_id("chat-text")
    assert text.get_attribute("maxlength") == "200"
    text.fill("Good luck, everyone")
    assert "19 of 200" in ana.locator("#chat-count").inner_text()
    ana.get_by_test_id("chat-send").click()
    line = f'[data-testid="chat-message"][data-username="{ana_name}"]'
    ben.locator(line).get_by_text("Good luck, everyone").wait_for(timeout=2_000)  # live
    ana.locator(line).get_by_text("Good luck, everyone").wait_for()
    ana.wait_for_function("document.getElementById('chat-text').value === ''")  # sent: cleared
    assert ana.locator(line).get_by_test_id("chat-mute").count() == 0  # not one's own

    api(base, cora, "POST", f"/games/{game}/chat", {"text": "Thanks, you too"})
    cora_line = f'[data-testid="chat-message"][data-username="{cora_name}"]'
    ben.locator(cora_line).wait_for(timeout=2_000)
    check(ben, "table chat with messages", ready='[data-testid="chat-mute"]')

    # Ben mutes Ana: her message goes from his page at once.
    ben.locator(line).get_by_test_id("chat-mute").click()
    ben.locator(line).wait_for(state="detached")
    assert f"{ana_name} is muted" in ben.locator("#status").inner_text()
    text.fill("Can you still read me?")
    ana.get_by_test_id("chat-send").click()
    ana.locator(line).get_by_text("Can you still read me?").wait_for()
    # Cora's later message reaches Ben: the stream delivered everything before it, but not
    # Ana's (ids grow in commit order, docs/chat.md).
    api(base, cora, "POST", f"/games/{game}/chat", {"text": "Your move, Ben"})
    ben.locator(cora_line).get_by_text("Your move, Ben").wait_for(timeout=2_000)
    ana.locator(cora_line).get_by_text("Your move, Ben").wait_for(timeout=2_000)
    assert ben.locator(line).count() == 0, messages(ben)
    assert not any("still read me" in said for _, said in messages(ben)), messages(ben)

    # Report: a reason, then a confirmation in the message and in the status line.
    cora_rows = ben.locator(cora_line)
    cora_rows.first.get_by_test_id("chat-report").click()
    cora_rows.first.locator('[data-testid="chat-report-reason"][data-reason="abuse"]').wait_for()
    check(ben, "table chat, a report's reasons asked", ready='[data-testid="chat-report-reason"]')
    cora_rows.first.locator('[data-testid="chat-report-reason"][data-reason="abuse"]').click()
    cora_rows.first.get_by_test_id("chat-reported").wait_for()
    assert "Reported" in ben.locator("#status").inner_text()
    assert ben.evaluate("window.__sameDocument === true")

    # From the server too: after a reload, Ana's messages are not listed for Ben.
    watch.settle(ben)
    ben.reload()
    ben.locator(cora_line).first.wait_for()
    assert ben.locator(cora_line).count() == 2
    assert ben.locator(line).count() == 0, messages(ben)

    # Ben unmutes Ana (his mutes are listed after the reload): her messages come back, the one
    # she wrote while muted too.
    unmute = ben.locator(f'[data-testid="chat-unmute"][data-username="{ana_name}"]')
    unmute.wait_for()
    check(ben, "table chat, a muted player listed", ready='[data-testid="chat-unmute"]')
    unmute.click()
    ben.locator(line).get_by_text("Can you still read me?").wait_for(timeout=5_000)
    assert ben.locator(line).count() == 2
    assert f"{ana_name} is unmuted" in ben.locator("#status").inner_text()
    unmute.wait_for(state="detached")

    check.verify(3)
    watch.check_clean()


def test_a_public_table_is_listed_with_its_spectators_and_watched_read_only(
    watch: Watch,
) -> None:
    check = Checks()
    ana, ben = watch.open("ana", **DESKTOP), watch.open("ben", **DESKTOP)
    ana_name = register(ana, "ana")
    register(ben, "ben")
    # Ana's table of her and two bots, public: it starts at once.
    ana.get_by_label("Seat 2: who").select_option("bot:easy")
    ana.get_by_label("Seat 3: who").select_option("bot:easy")
    ana.get_by_label("Who may watch").select_option("public")
    ana.get_by_label("Spectators' delay, in events (0 to 50)").fill("2")
    check(ana, "lobby with the spectators' choice")
    ana.get_by_test_id("create-table").click()
    ana.get_by_test_id("hand-card").first.wait_for()
    game = ana.get_by_test_id("table").get_attribute("data-game")
    table = api(watch.base_url, page_token(ana), "GET", f"/tables/{game}")
    assert table["visibility"] == "public" and table["spectator_delay"] == 2, table

    watch.settle(ben)
    ben.reload()
    entry = ben.locator(f'[data-testid="watch-entry"][data-table="{game}"]')
    entry.wait_for()
    assert ana_name in entry.inner_text()
    assert entry.get_by_test_id("spectator-count").inner_text() == (
        f"{entry.get_attribute('data-spectators')} watching"
    )
    check(ben, "lobby with the Watch list", ready='[data-testid="watch-entry"]')

    entry.get_by_test_id("watch-table").click()
    screen = ben.locator(f'[data-testid="table"][data-game="{game}"][data-spectator="true"]')
    screen.wait_for()
    banner = ben.get_by_test_id("spectator-banner")
    assert "You are watching" in banner.inner_text()
    assert ben.get_by_test_id("opponent").count() == 3  # every seat, as a count of cards
    counts = ben.get_by_test_id("opponent-count").all_inner_texts()
    assert all(c.endswith("cards") and c.split()[0].isdigit() for c in counts), counts
    ben.get_by_test_id("discard-pile").wait_for()
    assert ben.get_by_role("heading", name="Melds").count() == 1
    assert ben.get_by_test_id("hand-card").count() == 0
    assert ben.get_by_test_id("legal-command").count() == 0
    assert ben.get_by_test_id("resign").count() == 0
    ben.get_by_text("This table has no chat for spectators").wait_for()  # once the chat is read
    check(ben, "a watched table")

    # The count goes up: Ben's watch is one spectator stream (counted every few seconds).
    deadline = time.monotonic() + 20
    count = 0
    while time.monotonic() < deadline and count < 1:
        listed = api(watch.base_url, page_token(ben), "GET", "/tables?watch=1")
        count = next((t["spectators"] for t in listed if t["id"] == game), 0)
        time.sleep(0.5)
    assert count >= 1, "the spectator was not counted"
    lobby = ben.context.new_page()  # a second tab of Ben's device: the lobby, still watching
    try:
        lobby.goto("/#/lobby")
        again = lobby.locator(f'[data-testid="watch-entry"][data-table="{game}"]')
        again.wait_for()
        assert again.get_by_test_id("spectator-count").inner_text() == f"{count} watching"
    finally:
        lobby.close()

    check.verify(3)
    watch.check_clean()
