// The matchmaker (README "The browser table"): the lobby's "Play now" in each room of GET /rooms
// asks for a table (a ticket), and the waiting screen (#/queue/<ticket id>, or #/queue for the
// open one) follows it from /me/stream's ticket frames until the matcher seats it at a table
// or it is called off, and says why.

import { api, ApiError, followMe, session } from "./api.js";
import { fill, h, keepFocus } from "./dom.js";
import { formatNumber, t, tn } from "./i18n.js";
import { person, shownName } from "./people.js";
import { chips } from "./wallet.js";

const FORMING_POLL_MS = 3000; // a friend's answer to a party is not streamed: read it again
const SEARCHING_POLL_MS = 15000; // a safety net only: the ticket frames tell at once

/** The rules presets a table or a ticket may name, each with its name in the page's language. */
export const PRESETS = {
  // Translators: the name of a preset of rules, in the lobby's "Rules" choice.
  standard: () => t("standard"),
  // Translators: the name of a preset of rules (a house's own rules).
  house: () => t("house"),
  h19: () => "h19",
};

export function presetName(preset) {
  return PRESETS[preset] ? PRESETS[preset]() : String(preset);
}

/** A room (a ticket's "1000:50", or a GET /rooms entry) in words. */
export function roomName(room) {
  const [buyIn, stake] = typeof room === "string" ? room.split(":").map(Number) :
    [room.buy_in, room.stake];
  return t("Buy-in {chips}, stake {stake}", { chips: chips(buyIn), stake: formatNumber(stake) });
}

/** Seconds, rounded for reading: "42 seconds", "3 minutes". */
export function duration(seconds) {
  const s = Math.max(0, Math.round(Number(seconds) || 0));
  if (s < 90) return tn("{n} second", "{n} seconds", s);
  return tn("{n} minute", "{n} minutes", Math.round(s / 60));
}

/** Seconds as a clock: "0:42", "12:05", in the page's digits. */
function clock(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  return `${formatNumber(Math.floor(s / 60))}:${formatNumber(s % 60, { minimumIntegerDigits: 2 })}`;
}

/** Why a ticket was called off, as a sentence for the person reading it. */
export function cancelledText(ticket, me) {
  const party = (ticket.members || []).length > 1;
  const owner = (ticket.members || []).find((m) => m.owner);
  switch (ticket.reason) {
    case "cancelled":
      return owner && owner.username === me ? t("You left the queue.") :
        t("{name} called off the party's search.", { name: shownName(owner) || "?" });
    case "member_left":
      return t("Someone left the party, so its search stopped.");
    case "member_declined":
      return t("A friend declined the invitation, so the party's search stopped.");
    case "party_lapsed":
      return t("Not every friend joined in time, so the party's search stopped.");
    case "insufficient_chips":
      return party ?
        t("The search stopped: a wallet in your party no longer covers the room's buy-in.") :
        t("The search stopped: your wallet no longer covers the room's buy-in.");
    case "already_seated":
      return party ? t("The search stopped: someone in your party sat down at another table.") :
        t("The search stopped: you sat down at another table.");
    default:
      return t("The search stopped.");
  }
}

/** A member's answer to the party, or their part in it. */
function memberStatus(member) {
  switch (member.status) {
    case "joined": return member.owner ? t("Asked for the table") : t("Joined");
    case "invited": return t("Invited, not yet answered");
    case "declined": return t("Declined");
    case "left": return t("Left the party");
    default: return String(member.status || "");
  }
}

/** Ask for a table in `room` (the lobby's and the friends page's "Play now"); to its screen. */
export async function askForTable(ctx, fields) {
  try {
    const ticket = await api.createTicket(fields);
    ctx.go(`#/queue/${ticket.id}`);
  } catch (err) {
    if (err instanceof ApiError && err.code === "already_searching") {
      ctx.go("#/queue", { text: t("You are already looking for a table: here it is.") });
    } else ctx.handleError(err);
  }
}

/** The waiting screen of a ticket. */
export async function queueScreen(root, route, ctx) {
  const me = session().username;
  let ticket;
  try {
    ticket = route.id ? await api.ticket(route.id) : await api.myTicket();
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) {
      ctx.go("#/lobby", { text: t("You are not looking for a table now.") });
      return null;
    }
    throw err;
  }
  const id = ticket.id;
  const title = h("h1", { id: "queue-title" }, t("Looking for a table"));
  const box = h("section", { class: "panel queue", "aria-labelledby": "queue-title",
    "data-testid": "queue", "data-ticket": id });
  const status = h("p", { class: "queue-status", role: "status", "data-testid": "queue-status" });
  const elapsed = h("p", { "data-testid": "queue-elapsed" });
  root.append(title, box);
  let stopped = false;
  let busy = false;
  let pollTimer = null;

  const since = () => Date.parse(ticket.searching_since || ticket.created_at);
  const tick = () => {
    elapsed.textContent = t("Time waited: {time}",
      { time: clock((Date.now() - since()) / 1000) });
  };

  function finish(hash, notice) {
    if (stopped) return;
    stopped = true;
    ctx.go(hash, notice);
  }

  // An ended ticket leaves this screen: to the table, or to the lobby saying why.
  function take(next) {
    if (stopped || !next || next.id !== id) return;
    ticket = next;
    if (ticket.status === "matched" && ticket.game_id) {
      finish(`#/table/${ticket.game_id}`, { text: t("A table is ready: the match starts.") });
    } else if (ticket.status === "cancelled") {
      finish("#/lobby", { text: cancelledText(ticket, me) });
    } else draw();
  }

  async function reload() {
    if (!stopped) take(await api.ticket(id));
  }

  const act = (call) => async () => {
    if (busy || stopped) return;
    busy = true;
    try {
      await call();
    } catch (err) {
      if (err instanceof ApiError && ["already_matched", "ticket_closed"].includes(err.code)) {
        await reload().catch(ctx.handleError);
      } else ctx.handleError(err);
    } finally {
      busy = false;
    }
  };

  const cancel = act(async () => {
    await api.cancelTicket(id);
    finish("#/lobby", { text: t("You left the queue.") });
  });
  const join = act(async () => take(await api.joinTicket(id)));
  const decline = act(async () => {
    await api.declineTicket(id);
    finish("#/lobby", { text: t("You declined the invitation to queue together.") });
  });

  function statusText(mine) {
    if (ticket.status === "forming") {
      if (mine && mine.status === "invited") {
        const owner = (ticket.members || []).find((m) => m.owner);
        return t("{name} asks you to queue together.", { name: shownName(owner) || "?" });
      }
      return t("Waiting for your friends to join: the search starts once everyone has.");
    }
    const people = (ticket.members || []).filter((m) => m.status === "joined").length;
    const missing = Math.max(0, 3 - people);
    return tn("Looking for {n} more player…", "Looking for {n} more players…", missing);
  }

  const info = h("div", {});
  const rest = h("div", {});
  box.append(info, status, elapsed, rest);

  function draw() {
    const members = ticket.members || [];
    const mine = members.find((m) => m.username === me);
    const invited = mine && mine.status === "invited";
    box.dataset.status = ticket.status;
    const text = statusText(mine);
    if (status.textContent !== text) status.textContent = text;
    tick();
    keepFocus(box, () => drawParts(members, invited));
  }

  function drawParts(members, invited) {
    fill(info, h("p", { "data-testid": "queue-room" },
      t("Room: {room}", { room: roomName(ticket.room) })));
    fill(rest,
      ticket.status === "searching" ? h("p", { "data-testid": "queue-estimate" },
        ticket.estimated_wait === null || ticket.estimated_wait === undefined ?
          t("No estimate of the wait yet.") :
          t("Estimated wait: about {time}.", { time: duration(ticket.estimated_wait) })) : null,
      h("p", { class: "help" }, ticket.bots_after === null || ticket.bots_after === undefined ?
        t("People only: no bots fill the table.") :
        t("If nobody comes within {time}, bots fill the empty seats.",
          { time: duration(ticket.bots_after) })),
      members.length > 1 ? [
        h("h2", { id: "queue-party" }, t("Your party")),
        h("ul", { class: "plain queue-members", "aria-labelledby": "queue-party",
          "data-testid": "queue-members" }, members.map((m) =>
          h("li", { "data-testid": "queue-member", "data-username": m.username,
            "data-status": m.status },
          person(m, m.username === me ? t("You") : null), " ",
          h("span", { class: "member-status" }, memberStatus(m))))),
      ] : null,
      h("div", { class: "buttons" },
        invited ? [
          h("button", { type: "button", "data-testid": "join-party",
            onclick: join }, t("Join the party")),
          h("button", { type: "button", class: "secondary", "data-testid": "decline-party",
            onclick: decline }, t("Decline")),
        ] : h("button", { type: "button", "data-testid": "cancel-ticket", onclick: cancel }, t("Cancel the search"))),
    );
  }

  function poll() {
    clearTimeout(pollTimer);
    const wait = ticket.status === "forming" ? FORMING_POLL_MS : SEARCHING_POLL_MS;
    pollTimer = setTimeout(async () => {
      await reload().catch(() => {});
      if (!stopped) poll();
    }, wait);
  }

  const clockTimer = setInterval(tick, 1000);
  const notices = followMe({
    // Each (re)connection: what happened while the stream was not looking is read again.
    onOpen: () => reload().catch(() => {}),
    onEvent: (type, data) => {
      if (!data || data.ticket_id !== id) return;
      if (type === "matched" && data.game_id) {
        finish(`#/table/${data.game_id}`, { text: t("A table is ready: the match starts.") });
      } else if (type === "ticket_cancelled" || type === "ticket_searching") {
        reload().catch(ctx.handleError);
      }
    },
  });
  take(ticket);
  poll();
  return () => {
    stopped = true;
    clearTimeout(pollTimer);
    clearInterval(clockTimer);
    notices.close();
  };
}

/** The lobby's panel of the open ticket (GET /me/matchmaking), or null when there is none. */
export function openTicketPanel(ticket) {
  if (!ticket) return null;
  return h("section", { class: "panel notice", "aria-labelledby": "open-ticket-title",
    "data-testid": "open-ticket", "data-ticket": ticket.id },
  h("h2", { id: "open-ticket-title" }, t("You are looking for a table")),
  h("p", {}, t("Room: {room}", { room: roomName(ticket.room) })),
  h("p", {}, h("a", { href: `#/queue/${ticket.id}`, class: "button",
    "data-testid": "open-ticket-link" }, t("Back to the waiting screen"))));
}

/**
 * The lobby's "Play against people": each room of GET /rooms with its "Play now" (a room the
 * wallet cannot cover is shown, not offered), the rules, and whether bots may fill the table.
 */
export function matchPanel(rooms, ctx) {
  const waits = rooms.map((r) => r.bots_after).filter((s) => s !== null && s !== undefined);
  const preset = h("select", { id: "match-preset", "data-testid": "match-preset" },
    Object.keys(PRESETS).map((value) => h("option", { value }, presetName(value))));
  const bots = waits.length ? h("input", { type: "checkbox", id: "match-bots", checked: true,
    "data-testid": "match-bots" }) : null;
  const play = (room) => () => askForTable(ctx, {
    room: room.key,
    rules: preset.value,
    ...(bots && !bots.checked ? { bots_after: null } : {}),
  });
  return h("section", { class: "panel match", "aria-labelledby": "match-title",
    "data-testid": "match" },
  h("h2", { id: "match-title" }, t("Play against people")),
  h("p", { class: "help" }, t("The matchmaker seats you with two players near your rating, " +
    "in the room you choose.")),
  h("label", { for: "match-preset" }, t("Rules")), preset,
  bots ? h("div", { class: "check" }, bots, h("label", { for: "match-bots" },
    t("Bots fill the empty seats if nobody comes within {time}",
      { time: duration(Math.min(...waits)) }))) : null,
  h("ul", { class: "plain rooms" }, rooms.map((r) => h("li", {},
    h("span", {}, r.affordable ? roomName(r) :
      t("{room} (not enough chips)", { room: roomName(r) })),
    h("button", { type: "button", "data-testid": "play-room", "data-room": r.key,
      disabled: !r.affordable, onclick: play(r),
      "aria-label": t("Play now: {room}", { room: roomName(r) }) }, t("Play now"))))));
}
