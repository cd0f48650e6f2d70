// The friends page (#/friends): add a friend by username, the requests received (accept or
// decline) and sent (withdraw), the friends with their presence and what to do with them
// (a table with them invited, or a ticket that queues together), and the people blocked.
// Presence and requests change live (/me/stream's `presence` frames and `friend_request`
// notifications): the lists are read again when they come.

import { api, ApiError, followMe } from "./api.js";
import { clear, h, keepFocus, say } from "./dom.js";
import { language, t } from "./i18n.js";
import { PRESETS, askForTable, presetName, roomName } from "./matchmaking.js";
import { person, shownName } from "./people.js";

const RELOAD_DELAY_MS = 200; // frames come in bursts (one per friend): read the lists once

/** "5 minutes ago", "yesterday", in the page's language. */
function ago(when) {
  const seconds = (Date.parse(when) - Date.now()) / 1000;
  const format = new Intl.RelativeTimeFormat(language(), { numeric: "auto" });
  const units = [["day", 86400], ["hour", 3600], ["minute", 60]];
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit);
  }
  return format.format(0, "minute");
}

/** A friend's presence in words (the dot beside it only repeats it). */
export function presenceText(presence) {
  if (!presence) return t("Does not share when they are online");
  switch (presence.status) {
    case "playing": return t("Playing");
    case "online": return t("Online");
    default: return presence.last_seen ?
      t("Offline, last seen {when}", { when: ago(presence.last_seen) }) : t("Offline");
  }
}

function presenceBadge(presence) {
  const status = presence ? presence.status : "hidden";
  return h("span", { class: "presence", "data-testid": "presence", "data-presence": status },
    h("span", { class: `presence-dot ${status}`, "aria-hidden": "true" }),
    presenceText(presence));
}

export async function friendsScreen(root, route, ctx) {
  const [rooms, first, blocked] = await Promise.all([api.rooms(), api.friends(), api.blocks()]);
  const state = { lists: first, blocks: blocked.results || [], confirm: null };
  let stopped = false;
  let timer = null;

  const name = h("input", { id: "add-friend-username", name: "username", required: true,
    autocomplete: "off", "data-testid": "add-friend-username" });
  const addForm = h("form", { class: "panel", "aria-labelledby": "add-friend-title" },
    h("h2", { id: "add-friend-title" }, t("Add a friend")),
    h("label", { for: "add-friend-username" }, t("Their username")), name,
    h("button", { type: "submit", "data-testid": "add-friend-submit" },
      t("Send a friend request")));
  addForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const username = name.value.trim();
    if (!username) return;
    try {
      const entry = await api.addFriend(username);
      name.value = "";
      say(entry.state === "friends" ?
        t("{name} and you are friends now.", { name: shownName(entry) }) :
        t("Friend request sent to {name}.", { name: shownName(entry) }));
      await reload();
    } catch (err) {
      ctx.handleError(err);
    }
  });

  // Where a table with a friend is played: a room of GET /rooms and the rules.
  const room = h("select", { id: "friends-play-room", "data-testid": "friends-play-room" },
    rooms.map((r, i) => h("option", { value: r.key, disabled: !r.affordable,
      selected: r.affordable && !rooms.slice(0, i).some((o) => o.affordable) },
    r.affordable ? roomName(r) : t("{room} (not enough chips)", { room: roomName(r) }))));
  const rules = h("select", { id: "friends-play-rules" },
    Object.keys(PRESETS).map((value) => h("option", { value }, presetName(value))));
  const chosenRoom = () => rooms.find((r) => r.key === room.value) || rooms[0];

  const requests = h("section", { class: "panel", "aria-labelledby": "requests-title",
    "data-testid": "friend-requests" });
  const friendsBox = h("section", { class: "panel friends", "aria-labelledby": "friends-list-title",
    "data-testid": "friends" });
  const friendList = h("div", {});
  friendsBox.append(h("h2", { id: "friends-list-title" }, t("Your friends")),
    h("div", { class: "play-with" },
      h("div", {}, h("label", { for: "friends-play-room" }, t("Room")), room),
      h("div", {}, h("label", { for: "friends-play-rules" }, t("Rules")), rules)),
    friendList);
  const blockBox = h("section", { class: "panel", "aria-labelledby": "blocked-title",
    "data-testid": "blocked" });
  root.append(h("h1", {}, t("Friends")), h("div", { class: "columns" },
    h("div", { class: "stack" }, addForm, requests), friendsBox, blockBox));

  const act = (call) => async () => {
    try {
      await call();
    } catch (err) {
      ctx.handleError(err);
    }
    await reload().catch(ctx.handleError);
  };

  const actions = {
    accept: (p) => act(async () => {
      await api.addFriend(p.username);
      say(t("{name} and you are friends now.", { name: shownName(p) }));
    }),
    decline: (p) => act(async () => {
      await api.removeFriend(p.username);
      say(t("You declined {name}'s friend request.", { name: shownName(p) }));
    }),
    withdraw: (p) => act(async () => {
      await api.removeFriend(p.username);
      say(t("You withdrew your friend request to {name}.", { name: shownName(p) }));
    }),
    askRemove: (p) => () => {
      state.confirm = p.username;
      draw();
    },
    keep: () => {
      state.confirm = null;
      draw();
    },
    remove: (p) => act(async () => {
      state.confirm = null;
      await api.removeFriend(p.username);
      say(t("{name} is no longer your friend.", { name: shownName(p) }));
    }),
    unblock: (p) => act(async () => {
      await api.unblock(p.username);
      say(t("You unblocked {name}.", { name: shownName(p) }));
    }),
    // A table of ours with the friend's seat an invitation, the third seat open.
    invite: (p) => async () => {
      const chosen = chosenRoom();
      try {
        const table = await api.createTable(
          chosen ? { preset: rules.value, stake: chosen.stake } : rules.value,
          [{ kind: "user" }, { kind: "user", username: p.username }, { kind: "open" }],
          chosen ? chosen.buy_in : 0);
        ctx.go(`#/table/${table.id}`, { text: t("{name} is invited to your table.",
          { name: shownName(p) }) });
      } catch (err) {
        ctx.handleError(err);
      }
    },
    queue: (p) => () => askForTable(ctx, { room: room.value, rules: rules.value,
      with: [p.username] }),
  };

  // The person's name, for the buttons of their row (aria-describedby).
  const named = (p, id) => h("span", { id }, person(p));

  function drawRequests() {
    const { received = [], sent = [] } = state.lists;
    clear(requests).append(h("h2", { id: "requests-title" }, t("Friend requests")));
    if (!received.length && !sent.length) requests.append(h("p", {}, t("No request waiting.")));
    if (received.length) {
      requests.append(h("h3", { id: "received-title" }, t("Asking to be your friend")),
        h("ul", { class: "plain people", "aria-labelledby": "received-title" },
          received.map((p, i) => h("li", { "data-testid": "friend-request",
            "data-username": p.username }, named(p, `received-${i}`),
          h("span", { class: "row-actions" },
            h("button", { type: "button", "data-testid": "accept-friend",
              "data-username": p.username, "aria-describedby": `received-${i}`,
              onclick: actions.accept(p) }, t("Accept")),
            h("button", { type: "button", class: "secondary", "data-testid": "decline-friend",
              "data-username": p.username, "aria-describedby": `received-${i}`,
              onclick: actions.decline(p) }, t("Decline")))))));
    }
    if (sent.length) {
      requests.append(h("h3", { id: "sent-title" }, t("Your requests, not yet answered")),
        h("ul", { class: "plain people", "aria-labelledby": "sent-title" },
          sent.map((p, i) => h("li", { "data-testid": "sent-request",
            "data-username": p.username }, named(p, `sent-${i}`),
          h("span", { class: "row-actions" },
            h("button", { type: "button", class: "secondary", "data-testid": "withdraw-friend",
              "data-username": p.username, "aria-describedby": `sent-${i}`,
              onclick: actions.withdraw(p) }, t("Withdraw")))))));
    }
  }

  function friendRow(p, i) {
    const id = `friend-${i}`;
    const button = (testid, text, onclick, extra = {}) => h("button", { type: "button",
      "data-testid": testid, "data-username": p.username, "aria-describedby": id, onclick,
      ...extra }, text);
    const presence = p.presence;
    const watching = presence && presence.status === "playing" && presence.game_id;
    return h("li", { "data-testid": "friend", "data-username": p.username,
      "data-presence": presence ? presence.status : "hidden" },
    h("div", { class: "friend-who" }, named(p, id), presenceBadge(presence)),
    state.confirm === p.username ? h("div", { class: "row-actions", role: "group",
      "aria-label": t("Remove {name} from your friends?", { name: shownName(p) }) },
    h("p", {}, t("Remove {name} from your friends?", { name: shownName(p) })),
    button("remove-friend-confirm", t("Yes, remove"), actions.remove(p)),
    button("remove-friend-keep", t("Keep"), actions.keep, { class: "secondary" })) :
      h("div", { class: "row-actions" },
        button("invite-friend", t("Invite to my table"), actions.invite(p)),
        button("queue-with-friend", t("Queue together"), actions.queue(p)),
        watching ? h("a", { href: `#/table/${presence.game_id}`, class: "button secondary",
          "aria-describedby": id }, t("Watch their table")) : null,
        button("remove-friend", t("Remove"), actions.askRemove(p), { class: "secondary" })));
  }

  function drawFriends() {
    const friends = state.lists.friends || [];
    clear(friendList);
    if (!friends.length) {
      friendList.append(h("p", {}, t("No friends yet: add one by username, or from a seat " +
        "or a chat message at a table.")));
      return;
    }
    friendList.append(h("p", { class: "help" }, t("Invite to my table: a table in this room " +
      "with their seat an invitation. Queue together: the matchmaker finds you a third " +
      "player once they join.")),
    h("ul", { class: "plain people", "aria-labelledby": "friends-list-title",
      "data-testid": "friend-list" }, friends.map(friendRow)));
  }

  function drawBlocks() {
    clear(blockBox).append(h("h2", { id: "blocked-title" }, t("Blocked")),
      h("p", { class: "help" }, t("You and the people you block do not see each other's " +
        "chat, invitations or tables. They are not told.")));
    if (!state.blocks.length) {
      blockBox.append(h("p", {}, t("You block nobody.")));
      return;
    }
    blockBox.append(h("ul", { class: "plain people", "aria-labelledby": "blocked-title" },
      state.blocks.map((p, i) => h("li", { "data-testid": "blocked-person",
        "data-username": p.username }, named(p, `blocked-${i}`),
      h("span", { class: "row-actions" },
        h("button", { type: "button", class: "secondary", "data-testid": "unblock",
          "data-username": p.username, "aria-describedby": `blocked-${i}`,
          onclick: actions.unblock(p) }, t("Unblock")))))));
  }

  function draw() {
    if (stopped) return;
    keepFocus(root, () => {
      drawRequests();
      drawFriends();
      drawBlocks();
    });
    friendsBox.dataset.count = String((state.lists.friends || []).length);
  }

  async function reload() {
    const [lists, blocks] = await Promise.all([api.friends(), api.blocks()]);
    if (stopped) return;
    state.lists = lists;
    state.blocks = blocks.results || [];
    draw();
  }

  function reloadSoon() {
    clearTimeout(timer);
    timer = setTimeout(() => reload().catch((err) => {
      if (err instanceof ApiError && err.status === 401) ctx.handleError(err);
    }), RELOAD_DELAY_MS);
  }

  draw();
  const notices = followMe({
    onOpen: reloadSoon,
    onEvent: (type, data) => {
      if (type === "presence") reloadSoon();
      else if (type === "notification" && data && data.kind === "friend_request") reloadSoon();
    },
  });
  return () => {
    stopped = true;
    clearTimeout(timer);
    notices.close();
  };
}
