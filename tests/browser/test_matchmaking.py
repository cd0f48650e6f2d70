"""The matchmaker, friends and blocks in a real Chromium, against the whole stack (conftest.py),
whose matcher runs in its scheduler, so that tickets are matched for real. The stack waits for
people only (TONGITS_MATCH_BOTS_AFTER_SECONDS of 10 minutes): three tickets of one room meet
each other, never bots.

1. Three new guests, in three browser contexts, press "Play now" in the same room: each sees
   the waiting screen (the room, the estimated wait, the time waited counting up, Cancel), and
   all three land at the same table once the third has pressed it.
2. A ticket is found again after a reload and from the lobby (GET /me/matchmaking); Cancel
   ends it and returns to the lobby, which says so.
3. A friend declines an invitation to queue together from the prompt: the owner's waiting
   screen says why and returns to the lobby.
4. Two guests become friends on the friends page (the request and its acceptance arrive
   live), one queues together with the other, who joins from the prompt on another screen,
   and a third person's ticket completes the table: all three are seated at it.
5. "Invite to my table" from the friends page opens a table with the friend invited; at the
   started table a player adds another as a friend from a chat line's menu, and blocks the
   friend from their seat's menu: the friend leaves the friends page for its blocked list,
   and Unblock clears it.

All fail on any JavaScript error, console error or 5xx answer.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.support import (
    Watch,
    api,
    api_status,
    api_user,
    page_token,
    play_as_guest,
)

ROOM = "100:5"
SEATED_MS = 30_000  # the matcher runs every second; a party searches once its friend joins

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def stack_env() -> dict[str, str]:
    return {"TONGITS_MATCH_BOTS_AFTER_SECONDS": "600"}


def status_text(page: Any) -> str:
    return page.locator("#status").inner_text()


def play_now(page: Any, room: str = ROOM) -> str:
    """The lobby's "Play now" in ``room``: the waiting screen's ticket id once it searches."""
    page.get_by_test_id("quick-play").wait_for()
    page.locator(f'[data-testid="play-room"][data-room="{room}"]').click()
    queue = page.locator('[data-testid="queue"][data-status="searching"]')
    queue.wait_for()
    return queue.get_attribute("data-ticket")


def seated_game(page: Any) -> str:
    """Wait until the page shows a table (the matcher seated its ticket): the game's id."""
    page.wait_for_function("location.hash.startsWith('#/table/')", timeout=SEATED_MS)
    game = page.evaluate("location.hash").split("/")[2]
    page.locator(f'[data-testid="table"][data-game="{game}"]').wait_for()
    return game


def open_friends(page: Any) -> None:
    page.get_by_test_id("friends-link").click()
    page.get_by_test_id("add-friend-username").wait_for()


def befriend(base_url: str, token_a: str, name_a: str, token_b: str, name_b: str) -> None:
    """A friendship made through the API: a request, and its acceptance."""
    api(base_url, token_a, "POST", "/me/friends", {"username": name_b})
    api(base_url, token_b, "POST", "/me/friends", {"username": name_a})


def resign_all(base_url: str, game: str, tokens: list[str]) -> None:
    """End a match the test is done with (the server plays every seat out), so that it does
    not play on by time-outs while the next test runs."""
    for token in tokens:
        assert api_status(base_url, token, "POST", f"/games/{game}/resign") in (200, 409)


def test_three_guests_pressing_play_now_in_one_room_sit_at_one_table(watch: Watch) -> None:
    pages = [watch.open(name) for name in ("ana", "ben", "cora")]
    names = [play_as_guest(page) for page in pages]

    first = pages[0]
    play_now(first)
    room = first.get_by_test_id("queue-room").inner_text()
    assert "Buy-in 100 chips, stake 5" in room, room
    assert "Looking for 2 more players" in first.get_by_test_id("queue-status").inner_text()
    assert first.get_by_test_id("queue-estimate").inner_text().startswith("Estimated wait: ")
    waited = first.get_by_test_id("queue-elapsed").inner_text()
    assert waited.startswith("Time waited: 0:0"), waited
    first.wait_for_function(  # the clock counts up on its own
        "then => document.querySelector('[data-testid=queue-elapsed]').textContent !== then",
        arg=waited,
    )
    assert first.get_by_test_id("cancel-ticket").is_visible()

    play_now(pages[1])
    pages[2].locator(f'[data-testid="play-room"][data-room="{ROOM}"]').click()
    games = [seated_game(page) for page in pages]
    assert len(set(games)) == 1, games
    for page in pages:
        page.get_by_test_id("hand-card").first.wait_for()
    token = page_token(first)
    table = api(watch.base_url, token, "GET", f"/tables/{games[0]}")
    assert table["status"] == "active" and table["buy_in"] == 100, table
    assert {seat.get("username") for seat in table["seats"]} == set(names), table["seats"]
    assert api_status(watch.base_url, token, "GET", "/me/matchmaking") == 404

    resign_all(watch.base_url, games[0], [page_token(page) for page in pages])
    watch.check_clean()


def test_an_open_ticket_is_found_after_a_reload_and_cancel_returns_to_the_lobby(
    watch: Watch,
) -> None:
    page = watch.open("dan")
    play_as_guest(page)
    ticket = play_now(page)
    searching = f'[data-testid="queue"][data-ticket="{ticket}"][data-status="searching"]'

    # The bodies of this document's answers, the reload's (onOpen) included, before the reload
    # drops them.
    watch.settle(page)
    page.reload()
    page.locator(searching).wait_for()
    page.get_by_role("link", name="Tongits").click()  # the lobby, which lists the open ticket
    page.get_by_test_id("open-ticket").wait_for()
    assert page.get_by_test_id("open-ticket").get_attribute("data-ticket") == ticket
    page.get_by_test_id("open-ticket-link").click()
    page.locator(searching).wait_for()

    page.get_by_test_id("cancel-ticket").click()
    page.get_by_test_id("quick-play").wait_for()
    assert "You left the queue." in status_text(page)
    assert page.get_by_test_id("open-ticket").count() == 0
    token = page_token(page)
    assert api_status(watch.base_url, token, "GET", "/me/matchmaking") == 404
    ended = api(watch.base_url, token, "GET", f"/matchmaking/tickets/{ticket}")
    assert (ended["status"], ended["reason"]) == ("cancelled", "cancelled"), ended
    watch.check_clean()


def test_a_friend_declining_a_party_tells_its_owner_why(watch: Watch) -> None:
    ana, ben = watch.open("ana"), watch.open("ben")
    ana_name, ben_name = play_as_guest(ana), play_as_guest(ben)
    befriend(watch.base_url, page_token(ana), ana_name, page_token(ben), ben_name)

    open_friends(ana)
    ana.get_by_test_id("friends-play-room").select_option(ROOM)
    ana.locator(f'[data-testid="queue-with-friend"][data-username="{ben_name}"]').click()
    ana.locator('[data-testid="queue"][data-status="forming"]').wait_for()
    members = {
        row.get_attribute("data-username"): row.get_attribute("data-status")
        for row in ana.get_by_test_id("queue-member").all()
    }
    assert members == {ana_name: "joined", ben_name: "invited"}, members
    assert "Waiting for your friends to join" in ana.get_by_test_id("queue-status").inner_text()

    prompt = ben.get_by_test_id("party-invite")  # on Ben's lobby, from his stream
    prompt.wait_for()
    assert ana_name in prompt.inner_text() and "Buy-in 100 chips" in prompt.inner_text()
    prompt.get_by_test_id("decline-party-prompt").click()
    prompt.wait_for(state="detached")

    ana.get_by_test_id("quick-play").wait_for()  # back in the lobby, told why
    assert "A friend declined the invitation, so the party's search stopped." in status_text(ana)
    assert ana.get_by_test_id("open-ticket").count() == 0
    watch.check_clean()


def test_friends_made_on_the_friends_page_queue_together_and_a_third_completes_the_table(
    watch: Watch,
) -> None:
    ana, ben = watch.open("ana"), watch.open("ben", width=390, height=844)
    ana_name, ben_name = play_as_guest(ana), play_as_guest(ben)
    cora_name, cora = api_user(watch.base_url, "cora")

    open_friends(ben)
    open_friends(ana)
    ana.get_by_test_id("add-friend-username").fill(ben_name)
    ana.get_by_test_id("add-friend-submit").click()
    ana.locator(f'[data-testid="sent-request"][data-username="{ben_name}"]').wait_for()
    assert f"Friend request sent to {ben_name}." in status_text(ana)
    request = ben.locator(f'[data-testid="friend-request"][data-username="{ana_name}"]')
    request.wait_for()  # live: the friend_request notification redraws Ben's page
    request.get_by_test_id("accept-friend").click()
    ben.locator(f'[data-testid="friend"][data-username="{ana_name}"]').wait_for()
    friend = ana.locator(f'[data-testid="friend"][data-username="{ben_name}"]')
    friend.wait_for()  # live: the friendship's presence frame
    ana.locator(
        f'[data-testid="friend"][data-username="{ben_name}"][data-presence="online"]'
    ).wait_for()
    assert "Online" in friend.get_by_test_id("presence").inner_text()
    assert ana.get_by_test_id("sent-request").count() == 0

    ben.get_by_role("link", name="Tongits").click()  # Ben goes on to the lobby
    ben.get_by_test_id("quick-play").wait_for()
    ana.get_by_test_id("friends-play-room").select_option(ROOM)
    friend.get_by_test_id("queue-with-friend").click()
    ana.locator('[data-testid="queue"][data-status="forming"]').wait_for()

    prompt = ben.get_by_test_id("party-invite")
    prompt.wait_for()
    prompt.get_by_test_id("join-party-prompt").click()
    ben.locator('[data-testid="queue"][data-status="searching"]').wait_for()
    ana.locator('[data-testid="queue"][data-status="searching"]').wait_for()
    ana.locator(
        f'[data-testid="queue-member"][data-username="{ben_name}"][data-status="joined"]'
    ).wait_for()
    assert "Looking for 1 more player" in ana.get_by_test_id("queue-status").inner_text()

    third = api(watch.base_url, cora, "POST", "/matchmaking/tickets", {"room": ROOM})
    games = {seated_game(ana), seated_game(ben)}
    assert len(games) == 1, games
    (game,) = games
    mine = api(watch.base_url, cora, "GET", f"/matchmaking/tickets/{third['id']}")
    assert mine["status"] == "matched" and mine["game_id"] == game, mine
    table = api(watch.base_url, cora, "GET", f"/tables/{game}")
    assert {s.get("username") for s in table["seats"]} == {ana_name, ben_name, cora_name}

    resign_all(watch.base_url, game, [page_token(ana), page_token(ben), cora])
    watch.check_clean()


def test_invite_to_my_table_then_add_from_a_chat_line_and_block_from_a_seat(
    watch: Watch,
) -> None:
    ana, ben = watch.open("ana"), watch.open("ben")
    ana_name, ben_name = play_as_guest(ana), play_as_guest(ben)
    cora_name, cora = api_user(watch.base_url, "cora")
    base, ana_token, ben_token = watch.base_url, page_token(ana), page_token(ben)
    befriend(base, ana_token, ana_name, ben_token, ben_name)

    open_friends(ana)
    ana.get_by_test_id("friends-play-room").select_option(ROOM)
    ana.locator(f'[data-testid="invite-friend"][data-username="{ben_name}"]').click()
    ana.get_by_test_id("waiting-seats").wait_for()
    game = ana.evaluate("location.hash").split("/")[2]
    table = api(base, ana_token, "GET", f"/tables/{game}")
    seats = [(s["kind"], s.get("username"), s.get("invitation")) for s in table["seats"]]
    assert seats == [
        ("user", ana_name, None),
        ("user", ben_name, "pending"),
        ("open", None, None),
    ], seats
    assert table["buy_in"] == 100, table
    api(base, ben_token, "POST", f"/tables/{game}/invitation", {"answer": "accept"})
    api(base, cora, "POST", f"/tables/{game}/join")
    api(base, ana_token, "POST", f"/tables/{game}/start")
    ana.get_by_test_id("hand-card").first.wait_for()

    # A chat line's menu: Ana asks Cora to be friends.
    api(base, cora, "POST", f"/games/{game}/chat", {"text": "Hello both"})
    line = ana.locator(f'[data-testid="chat-message"][data-username="{cora_name}"]')
    line.wait_for()
    line.get_by_test_id("person-menu").click()
    assert line.get_by_test_id("person-menu").get_attribute("aria-expanded") == "true"
    line.get_by_test_id("person-add-friend").click()
    ana.wait_for_function(
        "name => document.getElementById('status').textContent.includes("
        "`Friend request sent to ${name}.`)",
        arg=cora_name,
    )
    received = api(base, cora, "GET", "/me/friends")["received"]
    assert [p["username"] for p in received] == [ana_name], received

    # Ben's seat's menu, by keyboard: Block asks first, then blocks.
    seat = ana.locator(f'[data-testid="person-menu"][data-username="{ben_name}"]')
    seat.focus()
    ana.keyboard.press("Enter")
    ana.locator(f'[data-testid="person-block"][data-username="{ben_name}"]').click()
    confirm = ana.locator(f'[data-testid="person-block-confirm"][data-username="{ben_name}"]')
    confirm.wait_for()
    assert ana.evaluate("document.activeElement.dataset.testid") == "person-block-confirm"
    assert api(base, ana_token, "GET", "/me/blocks")["results"] == []  # not before the yes
    confirm.click()
    ana.wait_for_function(
        "name => document.getElementById('status').textContent.includes(`You blocked ${name}`)",
        arg=ben_name,
    )
    assert [p["username"] for p in api(base, ben_token, "GET", "/me/friends")["friends"]] == []

    open_friends(ana)
    blocked = ana.locator(f'[data-testid="blocked-person"][data-username="{ben_name}"]')
    blocked.wait_for()
    assert ana.locator(f'[data-testid="friend"][data-username="{ben_name}"]').count() == 0
    blocked.get_by_test_id("unblock").click()
    blocked.wait_for(state="detached")
    assert f"You unblocked {ben_name}." in status_text(ana)
    assert api(base, ana_token, "GET", "/me/blocks")["results"] == []

    resign_all(base, game, [ana_token, ben_token, cora])
    watch.check_clean()
