"""What the browser tests record and check: every response and SSE message each page received,
JavaScript errors, 5xx answers, and the hidden-card leak scan over all of it."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any

from tests.api.games_support import card_strings, secrets, states_by_version

GAME_URL = re.compile(r"/api/v1/games/([0-9a-f-]{36})(?:/|$|\?)")
PASSWORD = "a-long-browser-passphrase"
# API answers whose 404 means "there is none" (GET /me/matchmaking: no open ticket).
QUIET_NOT_FOUND = ("/api/v1/me/matchmaking",)


@dataclass
class Received:
    """One thing a page got from the server: a JSON body, or one SSE message's data."""

    label: str
    url: str
    body: Any
    sse_event: str | None = None


@dataclass
class Watch:
    """Opens pages (one browser context each, like separate devices) and records their traffic."""

    browser: Any
    base_url: str
    received: list[Received] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    server_errors: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    pending: list[tuple[str, Any]] = field(default_factory=list)
    in_flight: dict[Any, set[Any]] = field(default_factory=dict)  # page -> fetches not done
    contexts: list[Any] = field(default_factory=list)
    streams: dict[str, str] = field(default_factory=dict)  # CDP request id -> URL

    def open(self, label: str, width: int = 1000, height: int = 900) -> Any:
        context = self.browser.new_context(
            base_url=self.base_url, viewport={"width": width, "height": height}
        )
        self.contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: self.errors.append(f"{label}: pageerror {exc}"))
        page.on("console", lambda msg: self._on_console(label, msg))
        page.on("response", lambda response: self._on_response(label, response))
        in_flight = self.in_flight[page] = set()
        page.on("request", lambda request: self._on_request(in_flight, request))
        page.on("requestfinished", lambda request: in_flight.discard(request))
        page.on("requestfailed", lambda request: self._on_failed(in_flight, request))
        # SSE messages as the browser parsed them (Chromium's DevTools protocol): a streamed
        # body is never complete while the page holds it, so Response.body() cannot see them.
        cdp = context.new_cdp_session(page)
        cdp.on(
            "Network.responseReceived",
            lambda p: self.streams.__setitem__(p["requestId"], p["response"]["url"]),
        )
        cdp.on(
            "Network.eventSourceMessageReceived",
            lambda p: self.received.append(
                Received(
                    label,
                    self.streams.get(p["requestId"], "?"),
                    json.loads(p["data"]),
                    sse_event=p["eventName"],
                )
            ),
        )
        cdp.send("Network.enable")
        return page

    def _on_console(self, label: str, msg: Any) -> None:
        if msg.type != "error":
            return
        url = (msg.location or {}).get("url", "")
        if "status of 404" in msg.text and url.endswith(QUIET_NOT_FOUND):
            return  # Chromium logs every 404 it fetched; these answer "none", not a failure
        self.errors.append(f"{label}: console {msg.text}")

    def _on_response(self, label: str, response: Any) -> None:
        if response.status >= 500:
            self.server_errors.append(f"{label}: {response.status} {response.url}")
        kind = response.headers.get("content-type", "")
        if "json" in kind:
            self.pending.append((label, response))

    @staticmethod
    def _on_request(in_flight: set[Any], request: Any) -> None:
        # The client's API calls (a stream is an "eventsource" and never finishes).
        if request.resource_type in ("fetch", "xhr"):
            in_flight.add(request)

    def _on_failed(self, in_flight: set[Any], request: Any) -> None:
        """A request the page gave up (a navigation aborts what is in flight): its answer's
        body never reached the page, so there is none to read."""
        in_flight.discard(request)
        self.pending = [(who, r) for who, r in self.pending if r.request != request]

    def settle(self, page: Any, timeout_ms: int = 10_000) -> None:
        """Wait until none of the page's API calls is in flight, then read every body: before a
        navigation (a reload), which drops the bodies of the document it leaves."""
        waited = 0
        while self.in_flight[page]:
            assert waited < timeout_ms, f"still in flight: {self.in_flight[page]}"
            page.wait_for_timeout(20)  # Playwright delivers the page's events meanwhile
            waited += 20
        self.drain()

    def drain(self) -> None:
        """Read the JSON bodies of the responses seen so far (while the page still holds them)."""
        pending, self.pending = self.pending, []
        for label, response in pending:
            try:
                body = response.json()
            except Exception as exc:  # noqa: BLE001 (recorded, and the test fails on it)
                self.unread.append(f"{label}: {response.url}: {exc}")
                continue
            self.received.append(Received(label, response.url, body))

    def check_clean(self, allow: tuple[str, ...] = ()) -> None:
        """No JavaScript error, no 5xx, every JSON body read. ``allow``: console errors the
        test provoked on purpose (e.g. Chromium's note of a 400 answer), by substring."""
        self.drain()
        errors = [e for e in self.errors if not any(part in e for part in allow)]
        assert not errors, errors
        assert not self.server_errors, self.server_errors
        assert not self.unread, self.unread

    def close(self) -> None:
        for context in self.contexts:
            context.close()


def register(page: Any, prefix: str) -> str:
    """A new account, registered through the log-in page as a newcomer would; its username
    (``prefix`` and a random suffix, so that tests sharing a stack never collide)."""
    username = f"{prefix}-{uuid.uuid4().hex[:6]}"
    page.goto("/")
    page.get_by_test_id("register-username").fill(username)
    page.get_by_test_id("register-password").fill(PASSWORD)
    page.get_by_test_id("register-submit").click()
    page.get_by_test_id("quick-play").wait_for()
    return username


def play_as_guest(page: Any) -> str:
    """Guest play from the log-in page (this browser context's own device key; the page is
    opened first unless it shows already): the account's username once the lobby shows."""
    button = page.get_by_test_id("play-as-guest")
    if not button.is_visible():
        page.goto("/")
    button.click()
    page.get_by_test_id("quick-play").wait_for()
    return page.evaluate("localStorage.getItem('tongits.username')")


def switch_language(page: Any, code: str) -> None:
    """The top bar's language switch: wait until the page speaks ``code`` and is drawn again."""
    page.get_by_test_id("language-switch").select_option(code)
    page.wait_for_function(
        "code => document.documentElement.lang === code && "
        "document.querySelector('[data-testid=language-switch]')?.value === code",
        arg=code,
    )
    drawn(page)


def drawn(page: Any) -> None:
    """Wait until the client has drawn the screen (#app is no longer aria-busy)."""
    page.locator("#app:not([aria-busy])").wait_for(state="attached")


def page_token(page: Any) -> str:
    return page.evaluate("localStorage.getItem('tongits.token')")


def full_event_log(base_url: str, token: str, game_id: str) -> list[dict]:
    """The whole feed of a finished match (everything revealed), every page of it."""
    items: list[dict] = []
    while True:
        request = urllib.request.Request(
            f"{base_url}/api/v1/games/{game_id}/events?after={len(items)}",
            headers={"Authorization": f"Token {token}", "Accept": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            body = json.load(response)
        items += body["events"]
        if not body.get("more"):
            return items


def scan_for_leaks(watch: Watch, game_id: str, events: list[dict]) -> tuple[int, int]:
    """Check that nothing any page received showed a card its seat could not see then.

    ``events`` is the finished match's revealed feed. Returns (items scanned, controls): a
    control applies the scan to a received hand as if another seat had got it, and must
    catch it, so a clean scan means something.
    """
    states = states_by_version([item["data"] for item in events])
    assert [item["seq"] for item in events] == list(range(1, len(events) + 1))
    seats: dict[str, int] = {}
    for got in watch.received:
        body = got.body if isinstance(got.body, dict) else {}
        seat = body.get("seat", (body.get("game") or {}).get("seat"))
        if GAME_URL.search(got.url) and isinstance(seat, int):
            seats.setdefault(got.label, seat)
    scanned = controls = 0
    for got in watch.received:
        match = GAME_URL.search(got.url)
        if not match or match.group(1) != game_id:
            # Lobby, tables, accounts: no card belongs there at all.
            assert not list(card_strings(got.body)), (got.label, got.url, got.body)
            scanned += 1
            continue
        seat = seats[got.label]

        def check(value: Any, version: int | None, now: int | None = None, got=got, seat=seat):
            """``version``: the step the body shows; ``now``: the game's version when it was
            answered (a replay shows an earlier step)."""
            if version is None or states[now or version].phase == "match_over":
                return  # the match is over: everything is revealed by design
            leaked = set(card_strings(value)) & secrets(states[version], seat)
            assert not leaked, (got.label, got.url, got.sse_event, version, leaked)

        body = got.body
        if got.sse_event is not None:
            version = body.get("version") if got.sse_event == "view" else body.get("seq")
            check(body, version)
            scanned += 1
        else:
            for item in body.get("events", []) if isinstance(body, dict) else []:
                check(item, item["seq"])
                scanned += 1
            rest = {k: v for k, v in body.items() if k != "events"}
            now = rest.get("version") or (rest.get("game") or {}).get("version")
            check(rest, rest.get("at") or now, now)
            scanned += 1
        hand = ((body.get("game") or body).get("view") or {}).get("hand")
        version = body.get("version") or (body.get("game") or {}).get("version")
        if hand and version and states[version].phase not in ("match_over", "round_over"):
            assert set(hand) <= secrets(states[version], (seat + 1) % 3)
            controls += 1
    return scanned, controls


def api(base_url: str, token: str | None, method: str, path: str, body: Any = None) -> Any:
    """One request to the stack's API (as a third person's app would make it): the JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Accept": "application/json"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = f"Token {token}"
    request = urllib.request.Request(
        f"{base_url}/api/v1{path}", data=data, method=method, headers=headers
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read()
    return json.loads(text) if text else None


def api_status(base_url: str, token: str, method: str, path: str) -> int:
    """The HTTP status of one API request (an error's too)."""
    try:
        api(base_url, token, method, path)
    except urllib.error.HTTPError as exc:
        return exc.code
    return 200


def api_user(base_url: str, prefix: str) -> tuple[str, str]:
    """A person registered through the API only: (username, token)."""
    username = f"{prefix}-{uuid.uuid4().hex[:6]}"
    body = api(
        base_url,
        None,
        "POST",
        "/auth/register",
        {"username": username, "password": PASSWORD, "email": ""},
    )
    return username, body["token"]
