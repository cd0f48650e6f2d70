// The table chat's drawing: the panel (built once), its message list and its form. Clicks and
// the form go to the `actions` of chat.js; nothing here changes the state.

import { clear, h } from "./dom.js";
import { formatNumber, t } from "./i18n.js";
import { avatarImage, shownName } from "./people.js";
import { personMenu } from "./person-menu.js";

const REASONS = [
  ["abuse", () => t("Abuse")],
  ["spam", () => t("Spam")],
  ["cheating", () => t("Cheating")],
  ["other", () => t("Other")],
];

const counted = (length, maxLength) => t("{count} of {max}", { count: formatNumber(length),
  max: formatNumber(maxLength) });

export function buildChat(maxLength) {
  const text = h("input", { id: "chat-text", name: "text", maxlength: maxLength,
    autocomplete: "off", "data-testid": "chat-text", "aria-describedby": "chat-count" });
  const count = h("span", { id: "chat-count", class: "chat-count" }, counted(0, maxLength));
  const send = h("button", { type: "submit", "data-testid": "chat-send" }, t("Send"));
  const form = h("form", { class: "chat-form", hidden: true },
    h("label", { for: "chat-text" }, t("Message")), h("div", { class: "chat-row" }, text, send),
    count);
  const parts = {
    text, count, send, form, maxLength,
    note: h("p", { class: "chat-note" }),
    list: h("ol", { class: "plain chat-list" }),
    muted: h("p", { class: "chat-muted", "data-testid": "chat-muted", hidden: true }),
    empty: h("p", { class: "chat-empty" }, "…"),
  };
  // A live log, focusable: a keyboard scrolls it once it outgrows its box.
  parts.log = h("div", { class: "chat-log", role: "log", "aria-label": t("Chat messages"),
    "data-testid": "chat-log", tabindex: "0" }, parts.empty, parts.list);
  text.addEventListener("input", () => {
    count.textContent = counted(text.value.length, maxLength);
  });
  parts.el = h("section", { class: "chat-box", "aria-labelledby": "chat-title",
    "data-testid": "chat" },
  h("h2", { id: "chat-title" }, t("Table chat")), parts.note, parts.log, parts.muted, form);
  return parts;
}

/** The form: shown when the reader may write; sends through actions.send. */
export function renderChatForm(parts, state, actions) {
  parts.form.hidden = !state.writes;
  parts.note.textContent = !state.loaded ? t("Loading the chat…") :
    state.closed ? t("This table's chat is closed.") :
    state.writes === "spectators" ? t("The spectators' chat: the players do not see it.") :
      state.writes ? "" : state.channels.length ? t("You may read this chat, not write in it.") :
        t("This table has no chat for spectators.");
  parts.send.disabled = state.sending;
  if (!parts.form.dataset.bound) {
    parts.form.dataset.bound = "true";
    parts.form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (await actions.send(parts.text.value)) {
        parts.text.value = "";
        parts.count.textContent = counted(0, parts.maxLength);
      }
    });
  }
}

function messageControls(message, state, actions) {
  if (message.username === state.me) return null;
  const name = shownName(message);
  if (state.reported.has(message.id)) {
    return [personMenu(state.menus, `message-${message.id}`, message,
      { onBlocked: actions.blocked }),
    h("span", { class: "chat-reported", "data-testid": "chat-reported" }, t("Reported"))];
  }
  if (state.reporting === message.id) {
    return h("span", { class: "chat-controls", role: "group",
      "aria-label": t("Report {name}'s message: why?", { name }) },
    REASONS.map(([reason, label]) => h("button", { type: "button", class: "link",
      "data-testid": "chat-report-reason", "data-reason": reason,
      onclick: () => actions.report(message, reason) }, label())),
    h("button", { type: "button", class: "link", onclick: actions.cancelReport }, t("Cancel")));
  }
  return h("span", { class: "chat-controls" },
    personMenu(state.menus, `message-${message.id}`, message, { onBlocked: actions.blocked }),
    h("button", { type: "button", class: "link", "data-testid": "chat-mute",
      onclick: () => actions.mute(message) }, t("Mute {name}", { name })),
    h("button", { type: "button", class: "link", "data-testid": "chat-report",
      "aria-label": t("Report {name}'s message", { name }),
      onclick: () => actions.askReport(message) }, t("Report")));
}

/** Who this reader mutes, each with an Unmute button. */
function renderMuted(parts, state, actions) {
  const names = [...state.muted].sort();
  clear(parts.muted);
  parts.muted.hidden = names.length === 0;
  if (!names.length) return;
  parts.muted.append(t("Muted:"), " ");
  names.forEach((name, i) => {
    if (i) parts.muted.append(" ");
    parts.muted.append(h("button", { type: "button", class: "link", "data-testid": "chat-unmute",
      "data-username": name, onclick: () => actions.unmute(name) },
    t("Unmute {name}", { name: state.names.get(name) || name })));
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
  parts.empty.textContent = state.loaded ? t("No message yet.") : "…";
  for (const m of list) {
    const mine = m.username === state.me;
    parts.list.append(h("li", { "data-testid": "chat-message", "data-id": m.id,
      "data-username": m.username, "data-channel": m.channel },
    avatarImage(m),
    h("span", { class: "chat-text" },
      h("strong", { title: mine ? null : m.username }, h("bdi", {}, mine ? t("You") :
        shownName(m))),
      !mine && m.display_name && m.display_name !== m.username ?
        [" ", h("small", { class: "person-username" }, h("bdi", {}, m.username))] : null,
      ": ", m.text === null || m.text === undefined ? t("(deleted)") :
        h("bdi", {}, m.text)),
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
