"""The browser table's accessibility, checked in a real Chromium against the whole stack.

1. axe-core (package.json's pinned version, injected from node_modules) finds no serious or
   critical violation on any screen a player meets: log-in, lobby, waiting room, the live table
   (cards in hand, a card selected, the resign question), the match result with its
   settlement, the replay, the audit and the wallet; each at a desktop's 1280x800 and a
   phone's 390x844.
2. On that phone every visible interactive element (links, buttons, form fields, the cards of
   the hand) is at least 40x40 CSS px.

3. Both again on the screens of phone-style sign-in and languages: the log-in page, the
   profile page (with a refused display name beside its field) and the live table, each in
   English and in Arabic (right to left), at both sizes.
4. Both again on the friends page (a friend, a request each way, a person blocked) and the
   matchmaker's waiting screen (a party forming, a ticket searching), in English and Arabic.

Both fail, never skip, when Chromium or axe-core is missing. Each walks every screen first and
then fails once, listing everything found.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.browser.a11y import (
    MIN_TAP,
    Violation,
    axe_violations,
    blocking_report,
    require_axe,
    small_tap_targets,
)
from tests.browser.support import (
    Watch,
    api,
    api_user,
    drawn,
    full_event_log,
    page_token,
    play_as_guest,
    register,
    switch_language,
)

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
MATCH_MS = 240_000
SHOTS = os.environ.get("TONGITS_SCREENSHOTS")
# Planted after the walk: text too faint to read and a button too small to hit, which each
# check must report, so that a clean walk means the checks ran and could see.
PLANT = """() => {
  const box = document.createElement("div");
  box.id = "planted";
  box.innerHTML = '<p style="color:#aaa;background:#fff">faint</p>' +
    '<button type="button" style="min-width:0;min-height:0;padding:0;font-size:10px">x</button>';
  document.getElementById("app").append(box);
}"""

pytestmark = pytest.mark.slow


def shot(page: Any, name: str) -> None:
    """With TONGITS_SCREENSHOTS=<dir>, the screen as checked, to look at by eye."""
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        slug = "".join(c if c.isalnum() else "-" for c in name.lower())
        page.screenshot(path=str(Path(SHOTS) / f"a11y-{slug}.png"), full_page=True)


def settled(page: Any) -> None:
    """Wait until the client drew the screen's answers (no "Loading…" left)."""
    page.wait_for_function("!document.getElementById('app').textContent.includes('Loading…')")


def tour(page: Any, base_url: str, check: Callable[[str], None]) -> None:
    """Walk a new player through every screen, calling ``check(screen)`` on each once drawn.

    The quick-play match is in the room of 100 chips, so that the result shows a settlement;
    the player resigns after looking at the live table, and the server plays the seat out.
    """
    page.goto("/")
    page.get_by_test_id("register-username").wait_for()
    check("log-in")

    register(page, "a11y")
    settled(page)
    check("lobby")

    page.get_by_label("Seat 2: who").select_option("open")
    page.get_by_label("Seat 3: who").select_option("bot:easy")
    page.get_by_test_id("create-table").click()
    page.get_by_test_id("waiting-seats").wait_for()
    check("waiting room")
    page.get_by_role("button", name="Leave").click()
    page.get_by_test_id("quick-play").wait_for()
    settled(page)

    page.get_by_label("Room").first.select_option("100:5")
    page.get_by_test_id("quick-play").click()
    # Our turn: the bots have played, so nothing redraws the table while it is checked.
    page.locator('[data-testid="turn-indicator"].my-turn').wait_for(timeout=MATCH_MS)
    page.locator('[data-testid="legal-command"]:not([disabled])').first.wait_for()
    assert page.get_by_test_id("hand-card").count() >= 12
    check("table")

    page.get_by_test_id("hand-card").first.click()
    page.get_by_test_id("clear-selection").wait_for()
    page.get_by_test_id("resign").click()
    page.get_by_test_id("resign-confirm").wait_for()
    check("table, a card selected, resign asked")

    page.get_by_test_id("resign-confirm").click()
    page.get_by_test_id("match-result").wait_for(timeout=MATCH_MS)
    page.locator('[data-testid="settlement"][data-settled="true"]').wait_for(timeout=30_000)
    check("match result")

    # The replay where the last meld was made: every hand and some melds on the board.
    game_id = page.get_by_test_id("table").get_attribute("data-game")
    events = full_event_log(base_url, page_token(page), game_id)
    melded = [e["seq"] for e in events if e["type"] == "melded"]
    step = melded[-1] if melded else len(events) // 2
    page.get_by_test_id("open-replay").click()
    page.wait_for_function("document.querySelector('[data-testid=replay-view]')?.dataset.at")
    page.goto(f"/#/replay/{game_id}?at={step - 1}")
    page.wait_for_function(
        "s => document.querySelector('[data-testid=replay-view]')?.dataset.at === String(s)",
        arg=step - 1,
    )
    page.get_by_role("button", name="Next step").click()
    page.wait_for_function(
        "s => document.querySelector('[data-testid=replay-view]').dataset.at === String(s)",
        arg=step,
    )
    check("replay")

    page.get_by_role("link", name="Audit").first.click()
    page.get_by_test_id("audit-verdict").wait_for()
    check("audit")

    page.get_by_test_id("balance").click()
    page.get_by_test_id("wallet-entry").first.wait_for()
    check("wallet")


def test_axe_finds_nothing_serious_on_any_screen_at_desktop_and_phone(watch: Watch) -> None:
    require_axe()  # before the walk: a missing install fails at once
    page = watch.open("axe", **DESKTOP)
    found: list[Violation] = []
    screens: list[str] = []

    def check(screen: str) -> None:
        for name, size in (("desktop", DESKTOP), ("phone", PHONE)):
            page.set_viewport_size(size)
            label = f"{screen} @ {name} {size['width']}px"
            found.extend(axe_violations(page, label))
            shot(page, label)
        page.set_viewport_size(DESKTOP)
        screens.append(screen)

    tour(page, watch.base_url, check)
    assert len(screens) == 9, screens
    for violation in found:
        print(violation.describe())
    print(f"axe: {len(screens)} screens x 2 sizes, {len(found)} violations of any impact")
    report = blocking_report(found)
    assert not report, f"axe-core: serious or critical violations\n{report}"

    page.evaluate(PLANT)
    planted = [v for v in axe_violations(page, "control") if v.blocking]
    assert "color-contrast" in {v.rule for v in planted}, blocking_report(planted)
    targets = [node["target"] for v in planted for node in v.nodes]
    assert all(target.startswith("#planted") for target in targets), blocking_report(planted)
    watch.check_clean()


def test_every_tap_target_on_a_phone_is_at_least_40_px(watch: Watch) -> None:
    page = watch.open("phone", **PHONE)
    small: list[str] = []
    counted: list[int] = []
    interactive = "a[href], button, input, select, summary, [tabindex]:not([tabindex='-1'])"

    def check(screen: str) -> None:
        counted.append(page.locator(interactive).count())
        small.extend(small_tap_targets(page, screen))

    tour(page, watch.base_url, check)
    assert len(counted) == 9 and min(counted) > 0, counted  # every screen had targets to measure
    print(f"tap targets: {sum(counted)} measured on {len(counted)} screens, {len(small)} small")
    listed = "\n".join(small)
    assert not small, f"tap targets under {MIN_TAP}x{MIN_TAP} px on a 390 px phone:\n{listed}"

    page.evaluate(PLANT)
    planted = small_tap_targets(page, "control")
    assert len(planted) == 1 and '"x"' in planted[0], planted
    watch.check_clean()


class Walk:
    """axe-core at both sizes and the phone's tap targets on each screen ``check``ed, in the
    page's language (its direction checked too), asserted once at the end by ``verify``."""

    def __init__(self, page: Any) -> None:
        require_axe()
        self.page = page
        self.found: list[Violation] = []
        self.small: list[str] = []
        self.screens: list[str] = []

    def __call__(self, screen: str) -> None:
        page = self.page
        drawn(page)
        language = page.evaluate("document.documentElement.lang")
        direction = page.evaluate("document.documentElement.dir")
        assert direction == ("rtl" if language == "ar" else "ltr"), (screen, language, direction)
        for name, size in (("desktop", DESKTOP), ("phone", PHONE)):
            page.set_viewport_size(size)
            label = f"{screen} in {language} @ {name} {size['width']}px"
            self.found.extend(axe_violations(page, label))
            shot(page, label)
            if name == "phone":
                self.small.extend(small_tap_targets(page, label))
        page.set_viewport_size(DESKTOP)
        self.screens.append(f"{screen} in {language}")

    def verify(self, count: int) -> None:
        assert len(self.screens) == count, self.screens
        for violation in self.found:
            print(violation.describe())
        print(f"axe: {count} screens x 2 sizes, {len(self.found)} violations of any impact")
        report = blocking_report(self.found)
        assert not report, f"axe-core: serious or critical violations\n{report}"
        listed = "\n".join(self.small)
        assert not self.small, (
            f"tap targets under {MIN_TAP}x{MIN_TAP} px on a 390 px phone:\n{listed}"
        )


def test_log_in_profile_and_table_pass_in_english_and_arabic_at_desktop_and_phone(
    watch: Watch,
) -> None:
    """axe-core at both sizes and the phone's tap targets on the log-in page, the profile page
    and the table, each in English and in Arabic (the page right to left)."""
    page = watch.open("languages", **DESKTOP)
    check = Walk(page)

    page.goto("/")
    page.get_by_test_id("play-as-guest").wait_for()
    check("log-in")
    switch_language(page, "ar")
    check("log-in")

    play_as_guest(page)
    page.get_by_test_id("profile-link").click()
    page.get_by_test_id("profile-form").wait_for()
    page.get_by_test_id("display-name").fill("bad\u202ename")  # refused: shown by the field
    page.get_by_test_id("save-profile").click()
    page.get_by_test_id("display-name-error").wait_for()
    check("profile, a display name refused")
    switch_language(page, "en")
    page.get_by_test_id("profile-form").wait_for()
    check("profile")

    page.get_by_role("link", name="Tongits").click()
    page.get_by_test_id("quick-play").click()
    page.locator('[data-testid="turn-indicator"].my-turn').wait_for(timeout=MATCH_MS)
    page.locator('[data-testid="legal-command"]:not([disabled])').first.wait_for()
    check("table")
    switch_language(page, "ar")
    page.locator('[data-testid="turn-indicator"].my-turn').wait_for(timeout=MATCH_MS)
    page.locator('[data-testid="legal-command"]:not([disabled])').first.wait_for()
    check("table")

    check.verify(6)
    watch.check_clean(allow=("status of 400",))


def test_friends_page_and_waiting_screen_pass_in_english_and_arabic_at_desktop_and_phone(
    watch: Watch,
) -> None:
    """axe-core at both sizes and the phone's tap targets on the friends page (a friend, a
    request each way, a person blocked) and the matchmaker's waiting screen (a party waiting
    for its friend, then a ticket searching alone), in English and in Arabic."""
    page = watch.open("friends", **DESKTOP)
    check = Walk(page)
    base = watch.base_url
    me = play_as_guest(page)
    token = page_token(page)
    friend, friend_token = api_user(base, "friend")
    asking, asking_token = api_user(base, "asking")
    asked, _ = api_user(base, "asked")
    blocked, _ = api_user(base, "blocked")
    api(base, token, "POST", "/me/friends", {"username": friend})
    api(base, friend_token, "POST", "/me/friends", {"username": me})
    api(base, asking_token, "POST", "/me/friends", {"username": me})
    api(base, token, "POST", "/me/friends", {"username": asked})
    api(base, token, "POST", "/me/blocks", {"username": blocked})

    page.get_by_test_id("friends-link").click()
    for who in ("friend", "friend-request", "sent-request", "blocked-person"):
        page.get_by_test_id(who).wait_for()
    check("friends")
    switch_language(page, "ar")
    page.get_by_test_id("friend").wait_for()
    check("friends")

    page.get_by_test_id("friends-play-room").select_option("100:5")
    page.locator(f'[data-testid="queue-with-friend"][data-username="{friend}"]').click()
    page.locator('[data-testid="queue"][data-status="forming"]').wait_for()
    page.get_by_test_id("queue-member").nth(1).wait_for()
    check("waiting screen, a party forming")
    switch_language(page, "en")
    page.locator('[data-testid="queue"][data-status="forming"]').wait_for()
    check("waiting screen, a party forming")

    page.get_by_test_id("cancel-ticket").click()
    page.get_by_test_id("match-bots").uncheck()  # people only: nobody else queues here
    page.locator('[data-testid="play-room"][data-room="100:5"]').click()
    page.get_by_test_id("queue-estimate").wait_for()
    check("waiting screen, searching")
    switch_language(page, "ar")
    page.get_by_test_id("queue-estimate").wait_for()
    check("waiting screen, searching")
    page.get_by_test_id("cancel-ticket").click()
    page.get_by_test_id("quick-play").wait_for()

    check.verify(6)
    watch.check_clean()
