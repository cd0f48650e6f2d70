"""Guest play, the profile, avatars at the table and the page's languages, in a real Chromium
against the whole stack (conftest.py).

1. A guest (the log-in page's "Play as guest": a device key made once and kept in this
   browser) sets a display name, an avatar, a country and Filipino on the profile page; the
   page speaks Filipino at once, and after a reload it is the same account with the same
   profile; logged out and back in as a guest, still the same account. The page's heading is
   the Filipino catalog's translation of it (this last check fails until the translators have
   filled tongits_site/locale/fil/LC_MESSAGES/djangojs.po).
2. A guest keeps the account by choosing a username and password on the profile; in another
   browser (a new context) they log in with them and find the same account, its profile and
   its ways in, and remove the device's.
3. A display name the server refuses is shown beside the field, and nothing changes.
4. The language switch: signed out, Arabic turns the page right to left (the top bar mirrors)
   and stays after a reload; signed in, the table mirrors while each card and the hand still
   read left to right; English then goes to the account (PATCH /me).
5. Avatars at the table: in the waiting room, at the table (the opponent's heading) and on
   the chat's lines, each person shows with their avatar (its alt text their display name) and
   display name, the username smaller beside it.

All fail on any JavaScript error, console error (besides the refusals provoked on purpose) or
5xx answer. With TONGITS_SCREENSHOTS=<dir>, the table in Filipino and in Arabic is saved as
screenshot-table-fil.png and screenshot-table-ar.png (docs/ holds them).
"""

from __future__ import annotations

import json
import os
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from babel.messages.pofile import read_po

from ops.messages import po_path
from tests.browser.support import (
    PASSWORD,
    Watch,
    drawn,
    play_as_guest,
    register,
    switch_language,
)

MATCH_MS = 120_000
SHOTS = os.environ.get("TONGITS_SCREENSHOTS")

pytestmark = pytest.mark.slow


def shot(page: Any, name: str) -> None:
    """With TONGITS_SCREENSHOTS=<dir>, the page as screenshot-<name>.png (as test_table.py)."""
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"screenshot-{name}.png"), full_page=True)


def translated(language: str, text: str) -> str:
    """The translators' ``text`` in the browser table's catalog of ``language`` ("" while
    it has none)."""
    with po_path("djangojs", language).open("rb") as handle:
        message = read_po(handle, locale=language).get(text)
    return message.string if message is not None and not message.fuzzy else ""


def me(page: Any) -> dict:
    """GET /api/v1/me with the page's own token."""
    return page.evaluate(
        """async () => {
          const token = localStorage.getItem('tongits.token');
          const headers = { Authorization: `Token ${token}` };
          const answer = await fetch('/api/v1/me', { headers });
          return answer.json();
        }"""
    )


def wait_for_account(page: Any, **expected: Any) -> dict:
    """GET /api/v1/me until it shows ``expected`` (another web process may have remembered the
    account as it was for up to a second, accounts/token_cache.py); the answer."""
    page.wait_for_function(
        """async (expected) => {
          const token = localStorage.getItem('tongits.token');
          const headers = { Authorization: `Token ${token}` };
          const answer = await (await fetch('/api/v1/me', { headers })).json();
          return Object.entries(expected).every(([key, value]) => answer[key] === value);
        }""",
        arg=expected,
        polling=200,
        timeout=5_000,
    )
    return me(page)


def open_profile(page: Any) -> None:
    page.get_by_test_id("profile-link").click()
    page.get_by_test_id("profile-form").wait_for()
    drawn(page)


def save_profile(page: Any, **fields: str) -> None:
    """Fill the profile form (display_name, avatar, country, language) and save it."""
    if "display_name" in fields:
        page.get_by_test_id("display-name").fill(fields["display_name"])
    if "avatar" in fields:
        page.locator(f'[data-testid="avatar-choice"][data-avatar="{fields["avatar"]}"]').check()
    if "country" in fields:
        page.get_by_test_id("country").select_option(fields["country"])
    if "language" in fields:
        page.get_by_test_id("profile-language").select_option(fields["language"])
    page.get_by_test_id("save-profile").click()


def to_my_turn(page: Any) -> None:
    """Quick play against two bots from the lobby, until it is this player's turn."""
    page.get_by_test_id("quick-play").click()
    page.locator('[data-testid="turn-indicator"].my-turn').wait_for(timeout=MATCH_MS)
    page.get_by_test_id("hand-card").first.wait_for()


def test_a_guest_sets_a_profile_in_filipino_and_is_the_same_account_after_a_reload(
    watch: Watch,
) -> None:
    page = watch.open("guest")
    username = play_as_guest(page)
    key = page.evaluate("localStorage.getItem('tongits.device_key')")
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", key), key  # 32 random bytes, base64url
    assert username.startswith("guest-"), username
    assert me(page)["guest"] is True

    open_profile(page)
    save_profile(page, display_name="Maria Clara", avatar="parol", country="PH", language="fil")
    page.wait_for_function("document.documentElement.lang === 'fil'")
    assert page.evaluate("document.documentElement.dir") == "ltr"
    page.get_by_test_id("profile-form").wait_for()
    drawn(page)
    wait_for_account(page, display_name="Maria Clara", avatar="parol", country="PH", language="fil")
    # The top bar shows the avatar (its alt text the display name) and the display name.
    top = page.get_by_test_id("profile-link")
    assert (
        top.get_by_role("img", name="Maria Clara")
        .get_attribute("src")
        .endswith("/web/avatars/parol.svg")
    )
    assert "Maria Clara" in top.inner_text()

    watch.settle(page)  # read the bodies the page holds before the reload drops them
    page.reload()
    page.get_by_test_id("profile-form").wait_for()
    drawn(page)
    assert page.evaluate("document.documentElement.lang") == "fil"
    assert page.get_by_test_id("profile-display-name").inner_text() == "Maria Clara"
    assert page.locator('[data-avatar="parol"][data-testid="avatar-choice"]').is_checked()
    assert page.get_by_test_id("country").input_value() == "PH"
    assert me(page)["username"] == username

    # Logged out, this browser's guest is still the same account, in its own language.
    page.get_by_test_id("log-out").click()
    page.get_by_test_id("play-as-guest").click()
    page.get_by_test_id("quick-play").wait_for()
    drawn(page)
    assert page.evaluate("localStorage.getItem('tongits.username')") == username
    assert page.evaluate("document.documentElement.lang") == "fil"

    to_my_turn(page)
    shot(page, "table-fil")
    page.goto("/#/profile")
    page.get_by_test_id("profile-form").wait_for()
    drawn(page)
    watch.check_clean(allow=("status of 400",))

    heading = page.get_by_role("heading", level=1).inner_text()
    filipino = translated("fil", "Your profile")
    assert filipino and filipino != "Your profile", (
        "djangojs.po has no Filipino for 'Your profile' yet: the translators fill it"
    )
    assert heading == filipino, heading


def test_a_guest_keeps_the_account_with_a_username_and_password(watch: Watch) -> None:
    page = watch.open("guest")
    play_as_guest(page)
    open_profile(page)
    save_profile(page, display_name="Keeper", avatar="carabao")
    page.get_by_test_id("profile-display-name").get_by_text("Keeper").wait_for()
    keep = page.get_by_test_id("keep-account")
    assert "choose a username and password" in keep.inner_text()
    chosen = f"kept-{uuid.uuid4().hex[:6]}"
    page.get_by_test_id("keep-username").fill(chosen)
    page.get_by_test_id("keep-password").fill(PASSWORD)
    page.get_by_test_id("keep-submit").click()
    page.locator('[data-testid="login"][data-method="password"]').wait_for()
    assert keep.count() == 0 and page.get_by_test_id("guest-note").count() == 0
    assert chosen in page.locator('[data-testid="login"][data-method="password"]').inner_text()
    assert page.evaluate("localStorage.getItem('tongits.username')") == chosen
    wait_for_account(page, username=chosen, guest=False)

    # Another browser: the username and password open the same account.
    other = watch.open("elsewhere")
    other.goto("/")
    other.get_by_test_id("login-username").fill(chosen)
    other.get_by_test_id("login-password").fill(PASSWORD)
    other.get_by_test_id("login-submit").click()
    other.get_by_test_id("quick-play").wait_for()
    assert other.get_by_test_id("profile-link").get_by_role("img", name="Keeper").is_visible()
    open_profile(other)
    assert other.get_by_test_id("profile-display-name").inner_text() == "Keeper"
    methods = [row.get_attribute("data-method") for row in other.get_by_test_id("login").all()]
    assert sorted(methods) == ["device", "password"], methods

    # The first browser's key is no longer needed: removed, the password is the only way in.
    other.locator('[data-testid="remove-login"][data-method="device"]').click()
    other.locator('[data-testid="login"][data-method="device"]').wait_for(state="detached")
    assert other.get_by_test_id("remove-login").count() == 0  # the last way in stays
    watch.check_clean()


def test_a_refused_display_name_is_shown_beside_the_field(watch: Watch) -> None:
    page = watch.open("guest")
    play_as_guest(page)
    open_profile(page)
    before = me(page)["display_name"]
    # A right-to-left override would reorder what others read: the server refuses it.
    save_profile(page, display_name="evil\u202ename")
    error = page.get_by_test_id("display-name-error")
    error.wait_for()
    assert error.inner_text(), "the refusal says why"
    field = page.get_by_test_id("display-name")
    assert field.get_attribute("aria-invalid") == "true"
    assert "display-name-error" in field.get_attribute("aria-describedby")
    assert me(page)["display_name"] == before
    watch.check_clean(allow=("status of 400",))


def test_the_language_switch_turns_the_page_right_to_left_for_arabic(watch: Watch) -> None:
    page = watch.open("reader")
    page.goto("/")
    page.get_by_test_id("play-as-guest").wait_for()
    assert page.evaluate("document.documentElement.dir") == "ltr"
    switch_language(page, "ar")
    assert page.evaluate("[document.documentElement.lang, document.documentElement.dir]") == [
        "ar",
        "rtl",
    ]
    # The top bar mirrors: the brand at the right end, the switch to its left.
    brand = page.locator(".brand").bounding_box()
    switch = page.get_by_test_id("language-switch").bounding_box()
    assert brand["x"] > switch["x"], (brand, switch)
    assert page.evaluate("localStorage.getItem('tongits.language')") == "ar"
    watch.settle(page)  # read the bodies the page holds before the reload drops them
    page.reload()
    page.get_by_test_id("play-as-guest").wait_for()
    drawn(page)
    assert page.evaluate("document.documentElement.dir") == "rtl"

    # Signed in, the page keeps the browser's choice until the account makes its own.
    play_as_guest(page)
    drawn(page)
    assert page.evaluate("document.documentElement.dir") == "rtl"
    assert me(page)["language"] == ""
    to_my_turn(page)
    # The table mirrors, but a card and a hand read left to right: "10♥", never "♥10".
    cards = page.get_by_test_id("hand").evaluate(
        """hand => [...hand.querySelectorAll('[data-testid=hand-card]')].map((card) => {
          const box = card.getBoundingClientRect();
          return { direction: getComputedStyle(card).direction, row: Math.round(box.top),
                   x: box.left };
        })"""
    )
    assert {card["direction"] for card in cards} == {"ltr"}, cards
    # In the hand's order, row by row, each row from left to right.
    places = [(card["row"], card["x"]) for card in cards]
    assert places == sorted(places), places
    title = page.locator(".table-title").bounding_box()
    assert title["x"] > page.get_by_test_id("turn-indicator").bounding_box()["x"]
    shot(page, "table-ar")
    switch_language(page, "en")
    assert page.evaluate("document.documentElement.dir") == "ltr"
    wait_for_account(page, language="en")
    watch.check_clean()


def test_people_show_their_avatars_in_the_waiting_room_at_the_table_and_in_the_chat(
    watch: Watch,
) -> None:
    ana = watch.open("ana")
    ben = watch.open("ben")
    play_as_guest(ana)
    open_profile(ana)
    save_profile(ana, display_name="Ana Reyes", avatar="tarsier")
    ana.get_by_test_id("profile-display-name").get_by_text("Ana Reyes").wait_for()
    ana_name = ana.evaluate("localStorage.getItem('tongits.username')")
    ben_name = register(ben, "ben")
    open_profile(ben)
    save_profile(ben, display_name="Benjie", avatar="jeepney")
    ben.get_by_test_id("profile-display-name").get_by_text("Benjie").wait_for()

    ana.goto("/#/lobby")
    ana.get_by_label("Seat 2: who").select_option("user")
    ana.get_by_label("Seat 2: friend's username").fill(ben_name)
    ana.get_by_label("Seat 3: who").select_option("bot:easy")
    ana.get_by_test_id("create-table").click()
    seats = ana.get_by_test_id("waiting-seats")
    seats.wait_for()
    game_id = ana.evaluate("location.hash").split("/")[-1]

    def shows(scope: Any, name: str, username: str, avatar: str) -> None:
        """The person in ``scope``: the avatar (alt text the display name), the display name
        and, smaller, the username."""
        person = scope.get_by_test_id("person").filter(has_text=name).first
        person.wait_for()
        image = person.get_by_role("img", name=name)
        assert image.get_attribute("src").endswith(f"/web/avatars/{avatar}.svg")
        assert person.locator(".person-username").inner_text() == username

    shows(seats, "Benjie", ben_name, "jeepney")
    shows(seats, "Ana Reyes", ana_name, "tarsier")

    ben.goto(f"/#/table/{game_id}")
    ben.get_by_test_id("accept-invitation").click()
    ana.get_by_test_id("start-table").click(timeout=5_000)
    for page in (ana, ben):
        page.get_by_test_id("hand-card").first.wait_for()
    shows(ana.locator('[data-testid="opponent"][data-seat="1"]'), "Benjie", ben_name, "jeepney")
    shows(ben.locator('[data-testid="opponent"][data-seat="0"]'), "Ana Reyes", ana_name, "tarsier")

    ana.get_by_test_id("chat-text").fill("Mabuhay!")
    ana.get_by_test_id("chat-send").click()
    line = ben.locator(f'[data-testid="chat-message"][data-username="{ana_name}"]')
    # Live from the stream, or at the latest from the chat's next read (every 5 s, chat.js).
    line.get_by_text("Mabuhay!").wait_for(timeout=12_000)
    assert (
        line.get_by_role("img", name="Ana Reyes")
        .get_attribute("src")
        .endswith("/web/avatars/tarsier.svg")
    )
    assert "Ana Reyes" in line.inner_text() and ana_name in line.inner_text()
    watch.check_clean()


def test_the_catalog_of_a_language_is_served_as_json_and_cached(watch: Watch) -> None:
    """GET /i18n/<lang>.json: Django's JSON catalog of the djangojs domain, one of the six
    languages only, with an ETag and a max-age."""
    page = watch.open("catalog")
    page.goto("/")
    answer = page.request.get("/i18n/ar.json")
    assert answer.status == 200 and answer.headers["content-language"] == "ar"
    body = json.loads(answer.text())
    assert set(body) >= {"catalog", "plural"}
    assert "max-age" in answer.headers["cache-control"] and answer.headers.get("etag")
    again = page.request.get("/i18n/ar.json", headers={"If-None-Match": answer.headers["etag"]})
    assert again.status == 304
    assert page.request.get("/i18n/de.json").status == 404
