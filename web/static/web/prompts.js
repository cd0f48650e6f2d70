// What reaches the player wherever they are, from /me/stream: a friend's invitation to queue
// together (a `party_invite` notification, or an unread one found at sign-in) with Join and
// Decline, and a ticket seated at a table (`matched`) while another screen shows.

import { api, ApiError, followMe, session } from "./api.js";
import { clear, h, say } from "./dom.js";
import { t } from "./i18n.js";
import { cancelledText, roomName } from "./matchmaking.js";
import { shownName } from "./people.js";

/** Follow the player's stream into `el` (the page's prompt area); returns { close() }. */
export function startPrompts(el, ctx) {
  const me = session().username;
  const shown = new Map(); // ticket id -> { ticket, notes: [notification ids] }
  let stopped = false;

  const onQueue = (id) => location.hash.startsWith(`#/queue/${id}`) ||
    location.hash === "#/queue";

  function draw() {
    clear(el);
    for (const { ticket } of shown.values()) {
      const owner = (ticket.members || []).find((m) => m.owner);
      const name = shownName(owner) || "?";
      const titleId = `party-invite-${ticket.id}`;
      el.append(h("section", { class: "panel prompt", "aria-labelledby": titleId,
        "data-testid": "party-invite", "data-ticket": ticket.id },
      h("h2", { id: titleId }, t("Queue together?")),
      h("p", {}, t("{name} asks you to queue together: {room}.",
        { name, room: roomName(ticket.room) })),
      h("div", { class: "buttons" },
        h("button", { type: "button", "data-testid": "join-party-prompt",
          onclick: () => answer(ticket, true) }, t("Join the party")),
        h("button", { type: "button", class: "secondary", "data-testid": "decline-party-prompt",
          onclick: () => answer(ticket, false) }, t("Decline")))));
    }
  }

  function forget(id) {
    const entry = shown.get(id);
    shown.delete(id);
    draw();
    const notes = entry ? entry.notes : [];
    if (notes.length) api.markRead(notes).catch(() => {});
  }

  async function answer(ticket, join) {
    try {
      if (join) {
        const joined = await api.joinTicket(ticket.id);
        forget(ticket.id);
        ctx.go(`#/queue/${joined.id}`);
      } else {
        await api.declineTicket(ticket.id);
        forget(ticket.id);
        say(t("You declined the invitation to queue together."));
      }
    } catch (err) {
      if (err instanceof ApiError && err.code === "ticket_closed") {
        forget(ticket.id);
        say(t("This invitation to queue together has ended."));
      } else ctx.handleError(err);
    }
  }

  // An invitation is shown while its party forms and waits for our answer.
  async function offer(ticketId, noteId) {
    const known = shown.get(ticketId);
    if (known) {
      if (noteId && !known.notes.includes(noteId)) known.notes.push(noteId);
      return;
    }
    let ticket;
    try {
      ticket = await api.ticket(ticketId);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404 && noteId) {
        api.markRead([noteId]).catch(() => {});
      }
      return;
    }
    const mine = (ticket.members || []).find((m) => m.username === me);
    if (stopped) return;
    if (ticket.status === "forming" && mine && mine.status === "invited") {
      shown.set(ticket.id, { ticket, notes: noteId ? [noteId] : [] });
      draw();
    } else if (noteId) {
      api.markRead([noteId]).catch(() => {});
    }
  }

  async function ended(data) {
    if (shown.has(data.ticket_id)) {
      forget(data.ticket_id);
      say(t("The invitation to queue together was called off."));
      return;
    }
    if (onQueue(data.ticket_id)) return; // the waiting screen says why itself
    const ticket = await api.ticket(data.ticket_id).catch(() => null);
    if (ticket && !stopped) say(cancelledText(ticket, me));
  }

  const notices = followMe({
    onEvent: (type, data) => {
      if (!data) return;
      if (type === "notification" && data.kind === "party_invite" && data.data) {
        offer(String(data.data.ticket_id), data.id);
      } else if (type === "ticket_cancelled") {
        ended(data);
      } else if (type === "matched" && data.game_id && !onQueue(data.ticket_id) &&
        location.hash !== `#/table/${data.game_id}`) {
        ctx.go(`#/table/${data.game_id}`, { text: t("A table is ready: the match starts.") });
      }
    },
  });

  // Invitations that came while no page was open.
  api.unreadNotifications().then((page) => {
    for (const note of (page && page.results) || []) {
      if (note.kind === "party_invite" && note.data) offer(String(note.data.ticket_id), note.id);
    }
  }).catch(() => {});

  return {
    close() {
      stopped = true;
      notices.close();
      shown.clear();
      clear(el);
    },
  };
}
