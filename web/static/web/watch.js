// Watching: the lobby's list of running public tables (GET /tables?watch=1, each with its
// spectator count) and the table form's choice of who may watch (docs/live.md "Spectators").

import { clear, h } from "./dom.js";

export const MAX_DELAY = 50; // games.models.MAX_SPECTATOR_DELAY

const VISIBILITY = [
  ["private", "Private: players only"],
  ["unlisted", "Unlisted: by its address"],
  ["public", "Public: listed to watch"],
];

/** The table form's "Spectators" fieldset; value() gives the fields of POST /tables. */
export function watchChooser(id) {
  const visibility = h("select", { id: `${id}-visibility`, "data-testid": `${id}-visibility` },
    VISIBILITY.map(([value, text]) => h("option", { value }, text)));
  const delay = h("input", { id: `${id}-delay`, type: "number", min: 0, max: MAX_DELAY, value: 0,
    inputmode: "numeric", "data-testid": `${id}-delay` });
  const chat = h("select", { id: `${id}-chat` },
    h("option", { value: "no" }, "No: spectators only watch"),
    h("option", { value: "yes" }, "Yes: a spectators' channel"));
  const extra = h("div", { hidden: true },
    h("label", { for: `${id}-delay` }, `Spectators' delay, in events (0 to ${MAX_DELAY})`), delay,
    h("label", { for: `${id}-chat` }, "Spectators may chat"), chat);
  visibility.addEventListener("change", () => { extra.hidden = visibility.value === "private"; });
  const el = h("fieldset", {}, h("legend", {}, "Spectators"),
    h("label", { for: `${id}-visibility` }, "Who may watch"), visibility, extra);
  const value = () => {
    if (visibility.value === "private") return { visibility: "private" };
    const events = Math.min(MAX_DELAY, Math.max(0, Math.round(Number(delay.value) || 0)));
    return { visibility: visibility.value, spectator_delay: events,
      spectator_chat: chat.value === "yes" };
  };
  return { el, value };
}

const watchers = (n) => `${n} watching`;

/** The lobby's "Watch a table" panel: the public tables under way, not the player's own. */
export function renderWatchList(el, tables, username) {
  const list = (Array.isArray(tables) ? tables : (tables && tables.results) || [])
    .filter((t) => !(t.seats || []).some((s) => s.username === username));
  clear(el).append(h("h2", { id: "watch-title" }, "Watch a table"));
  if (!list.length) {
    el.append(h("p", { "data-testid": "watch-empty" }, "No public table is being played now."));
    return;
  }
  el.append(h("ul", { class: "plain", "data-testid": "watch-list" }, list.map((t) => {
    const who = (t.seats || []).map((s) => s.username || (s.kind === "bot" ?
      `bot (${s.level})` : s.kind)).join(", ");
    const preset = t.rules && t.rules.preset ? `${t.rules.preset}, ` : "";
    return h("li", { "data-testid": "watch-entry", "data-table": t.id,
      "data-spectators": t.spectators ?? 0 },
    `${t.created_by || "?"}'s table (${preset}round ${t.round || 1}): ${who} · `,
    h("span", { "data-testid": "spectator-count" }, watchers(t.spectators ?? 0)),
    t.spectator_delay ? ` · ${t.spectator_delay} events behind` : "", " ",
    h("a", { href: `#/table/${t.id}`, class: "button", "data-testid": "watch-table",
      "data-table": t.id, "aria-label": `Watch ${t.created_by || "?"}'s table` }, "Watch"));
  })));
}
