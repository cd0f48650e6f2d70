// The table chat (docs/chat.md): the messages this reader may read, live from the game's stream
// (`chat`, `chat_hidden`) and read again from GET .../chat?after= on each (re)connection, a
// message to send, per message Mute (their messages go, here and everywhere) and Report, and an
// Unmute for each player this reader mutes (their messages come back, read again from the start).
// The state changes only here; chat-view.js draws it.

import { api, ApiError, session } from "./api.js";
import { say } from "./dom.js";
import { t } from "./i18n.js";
import { shownName } from "./people.js";
import { createMenus } from "./person-menu.js";
import { buildChat, renderChat, renderChatForm } from "./chat-view.js";

export const MAX_LENGTH = 200; // TONGITS_CHAT_MAX_LENGTH
const POLL_MS = 5000;

/** The chat of table `id`; `parts.el` goes into the page. take(type, data) takes a frame. */
export function startChat(id, ctx) {
  const state = {
    me: session().username,
    messages: new Map(), // id -> message, in id order once sorted
    lastId: 0,
    loaded: false,
    writes: null, // the channel we may write in (null: none)
    channels: [],
    muted: new Set(), // the usernames this reader mutes (GET /me/mutes, and from this page)
    names: new Map(), // username -> the display name their messages carried
    reporting: null, // the message whose report reasons are shown
    reported: new Set(),
    sending: false,
  };
  let stopped = false;
  let timer = null;

  const draw = () => {
    if (!stopped) renderChat(parts, state, actions);
  };
  // The menu on each message's author: add them as a friend, or block them.
  state.menus = createMenus(draw, ctx);

  // Drop what a person wrote (muted or blocked from this page): the server withholds the rest.
  function forget(username) {
    for (const [key, m] of state.messages) {
      if (m.username === username) state.messages.delete(key);
    }
  }

  function add(items) {
    for (const m of items || []) {
      if (!m || typeof m.id !== "number") continue;
      if (m.username && m.display_name) state.names.set(m.username, m.display_name);
      if (state.muted.has(m.username) || m.hidden) continue;
      state.messages.set(m.id, m);
      state.lastId = Math.max(state.lastId, m.id);
    }
  }

  // One read at a time; a call during a read asks for one more after it (a stream that just
  // opened must see what was written while the read ran).
  let loading = null;
  let again = false;
  async function readAll() {
    if (!state.loaded) {
      const mutes = await api.mutes();
      for (const m of mutes.results || []) state.muted.add(m.username);
    }
    let more = true;
    while (more && !stopped) {
      const page = await api.chat(id, state.lastId);
      state.channels = page.channels || [];
      state.writes = page.writes || null;
      add(page.messages);
      more = Boolean(page.more && (page.messages || []).length);
    }
    const first = !state.loaded;
    state.loaded = true;
    if (first) renderChatForm(parts, state, actions);
    draw();
  }
  function load() {
    if (loading) {
      again = true;
      return loading;
    }
    loading = (async () => {
      do {
        again = false;
        await readAll();
      } while (again && !stopped);
    })().finally(() => { loading = null; });
    return loading;
  }

  const actions = {
    async send(text) {
      const clean = text.trim();
      if (!clean || state.sending) return false;
      state.sending = true;
      renderChatForm(parts, state, actions);
      try {
        add([await api.sendChat(id, clean, state.writes)]);
        draw();
        return true;
      } catch (err) {
        ctx.handleError(err);
        return false;
      } finally {
        state.sending = false;
        renderChatForm(parts, state, actions);
      }
    },
    async mute(message) {
      try {
        await api.mute(message.username);
      } catch (err) {
        ctx.handleError(err);
        return;
      }
      state.muted.add(message.username);
      forget(message.username);
      say(t("{name} is muted: their messages no longer reach you.",
        { name: shownName(message) }));
      draw();
    },
    blocked(entry) {
      forget(entry.username);
      draw();
    },
    async unmute(username) {
      try {
        await api.unmute(username);
      } catch (err) {
        ctx.handleError(err);
        return;
      }
      state.muted.delete(username);
      state.lastId = 0; // the server withheld their messages: read the chat again from the start
      await load().catch((err) => ctx.handleError(err));
      say(t("{name} is unmuted: their messages reach you again.",
        { name: state.names.get(username) || username }));
    },
    askReport(message) {
      state.reporting = message.id;
      draw();
    },
    cancelReport() {
      state.reporting = null;
      draw();
    },
    async report(message, reason) {
      try {
        await api.reportChat(id, message.id, reason);
      } catch (err) {
        if (!(err instanceof ApiError && err.code === "already_reported")) {
          ctx.handleError(err);
          return;
        }
      }
      state.reporting = null;
      state.reported.add(message.id);
      say(t("Reported {name}'s message: the moderators will look at it.",
        { name: shownName(message) }));
      draw();
    },
  };

  const parts = buildChat(MAX_LENGTH);
  draw();
  return {
    el: parts.el,
    load: () => load().catch((err) => {
      if (!(err instanceof ApiError && err.code === "chat_closed")) return ctx.handleError(err);
      state.loaded = true; // past TONGITS_CHAT_KEEP_SECONDS: nothing to read or write
      state.closed = true;
      renderChatForm(parts, state, actions);
      return draw();
    }),
    take(type, data) {
      if (type === "chat") add([data]);
      else if (type === "chat_hidden" && data) state.messages.delete(data.id);
      else return;
      draw();
    },
    // Once the game's stream has ended (the match is settled), new messages are read every
    // few seconds instead, while the table is shown.
    poll() {
      if (!timer) timer = setInterval(() => load().catch(() => {}), POLL_MS);
    },
    // Someone blocked from their seat: their lines go from this page at once.
    forget(username) {
      forget(username);
      draw();
    },
    close() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
