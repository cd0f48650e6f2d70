// The table chat's drawing: the panel (built once), its message list and its form. Clicks and
// the form go to the `actions` of chat.js; nothing here changes the state.

import { clear, h } from "./dom.js";

const REASONS = [["abuse", "Abuse"], ["spam", "Spam"], ["cheating", "Cheating"], ["other", "Other"]];

export function buildChat(maxLength) {
  const text = h("input", { id: "chat-text", name: "text", maxlength: maxLength,
    autocomplete: "off", "data-testid": "chat-text", "aria-describedby": "chat-count" });
  const count = h("span", { id: "chat-count", class: "chat-count" }, `0 of ${maxLength}`);
  const send = h("button", { type: "submit", "data-testid": "chat-send" }, "Send");
  const form = h("form", { class: "chat-form", hidden: true },
    h("label", { for: "chat-text" }, "Message"), h("div", { class: "chat-row" }, text, send),
    count);
  const parts = {
    text, count, send, form, maxLength,
    note: h("p", { class: "chat-note" }),
    list: h("ol", { class: "plain chat-list" }),
    muted: h("p", { class: "chat-muted", "data-testid": "chat-muted", hidden: true }),
    empty: h("p", { class: "chat-empty" }, "…"),
  };
  // A live log, focusable: a keyboard scrolls it once it outgrows its box.
  parts.log = h("div", { class: "chat-log", role: "log", "aria-label": "Chat messages",
    "data-testid": "chat-log", tabindex: "0" }, parts.empty, parts.list);
  text.addEventListener("input", () => {
    count.textContent = `${text.value.length} of ${maxLength}`;
  });
  parts.el = h("section", { class: "chat-box", "aria-labelledby": "chat-title",
    "data-testid": "chat" },
  h("h2", { id: "chat-title" }, "Table chat"), parts.note, parts.log, parts.muted, form);
  return parts;
}

/** The form: shown when the reader may write; sends through actions.send. */
export function renderChatForm(parts, state, actions) {
  parts.form.hidden = !state.writes;
  parts.note.textContent = !state.loaded ? "Loading the chat…" :
    state.closed ? "This table's chat is closed." :
    state.writes === "spectators" ? "The spectators' chat: the players do not see it." :
      state.writes ? "" : state.channels.length ? "You may read this chat, not write in it." :
        "This table has no chat for spectators.";
  parts.send.disabled = state.sending;
  if (!parts.form.dataset.bound) {
    parts.form.dataset.bound = "true";
    parts.form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (await actions.send(parts.text.value)) {
        parts.text.value = "";
        parts.count.textContent = `0 of ${parts.maxLength}`;
      }
    });
  }
}

function messageControls(message, state, actions) {
  if (message.username === state.me) return null;
  if (state.reported.has(message.id)) {
    return h("span", { class: "chat-reported", "data-testid": "chat-reported" }, "Reported");
  }
  if (state.reporting === message.id) {
    return h("span", { class: "chat-controls", role: "group",
      "aria-label": `Report ${message.username}'s message: why?` },
    REASONS.map(([reason, label]) => h("button", { type: "button", class: "link",
      "data-testid": "chat-report-reason", "data-reason": reason,
      onclick: () => actions.report(message, reason) }, label)),
    h("button", { type: "button", class: "link", onclick: actions.cancelReport }, "Cancel"));
  }
  return h("span", { class: "chat-controls" },
    h("button", { type: "button", class: "link", "data-testid": "chat-mute",
      onclick: () => actions.mute(message) }, `Mute ${message.username}`),
    h("button", { type: "button", class: "link", "data-testid": "chat-report",
      "aria-label": `Report ${message.username}'s message`,
      onclick: () => actions.askReport(message) }, "Report"));
}

/** Who this reader mutes, each with an Unmute button. */
function renderMuted(parts, state, actions) {
  const names = [...state.muted].sort();
  clear(parts.muted);
  parts.muted.hidden = names.length === 0;
  if (!names.length) return;
  parts.muted.append("Muted: ");
  names.forEach((name, i) => {
    if (i) parts.muted.append(" ");
    parts.muted.append(h("button", { type: "button", class: "link", "data-testid": "chat-unmute",
      "data-username": name, onclick: () => actions.unmute(name) }, `Unmute ${name}`));
  });
}

/** The messages, oldest first, scrolled to the newest; keeps the focus on the same control. */
export function renderChat(parts, state, actions) {
  renderMuted(parts, state, actions);
  const { log } = parts;
  const focused = log.contains(document.activeElement) ? document.activeElement : null;
  const keep = focused && focused.closest("li") ?
    [focused.closest("li").dataset.id, focused.dataset.testid] : null;
  clear(parts.list);
  const list = [...state.messages.values()].sort((a, b) => a.id - b.id);
  parts.empty.hidden = list.length > 0;
  parts.empty.textContent = state.loaded ? "No message yet." : "…";
  for (const m of list) {
    parts.list.append(h("li", { "data-testid": "chat-message", "data-id": m.id,
      "data-username": m.username, "data-channel": m.channel },
    h("span", { class: "chat-text" }, h("strong", {}, m.username === state.me ? "You" :
      m.username), `: ${m.text ?? "(deleted)"}`),
    messageControls(m, state, actions)));
  }
  log.scrollTop = log.scrollHeight;
  if (keep) {
    const row = log.querySelector(`li[data-id="${keep[0]}"]`);
    const el = row && (row.querySelector(`[data-testid="${keep[1]}"]`) || row.querySelector("button"));
    if (el) el.focus({ preventScroll: true });
    else log.focus({ preventScroll: true });
  }
}
