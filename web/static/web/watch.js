// Watching: the lobby's list of running public tables (GET /tables?watch=1, each with its
// spectator count) and the table form's choice of who may watch (docs/live.md "Spectators").

import { clear, h } from "./dom.js";
import { formatNumber, t, tn } from "./i18n.js";
import { botLevel } from "./live-state.js";
import { person } from "./people.js";

export const MAX_DELAY = 50; // games.models.MAX_SPECTATOR_DELAY

const VISIBILITY = [
  ["private", () => t("Private: players only")],
  ["unlisted", () => t("Unlisted: by its address")],
  ["public", () => t("Public: listed to watch")],
];

/** The table form's "Spectators" fieldset; value() gives the fields of POST /tables. */
export function watchChooser(id) {
  const visibility = h("select", { id: `${id}-visibility`, "data-testid": `${id}-visibility` },
    VISIBILITY.map(([value, text]) => h("option", { value }, text())));
  const delay = h("input", { id: `${id}-delay`, type: "number", min: 0, max: MAX_DELAY, value: 0,
    inputmode: "numeric", "data-testid": `${id}-delay` });
  const chat = h("select", { id: `${id}-chat` },
    h("option", { value: "no" }, t("No: spectators only watch")),
    h("option", { value: "yes" }, t("Yes: a spectators' channel")));
  const extra = h("div", { hidden: true },
    h("label", { for: `${id}-delay` }, t("Spectators' delay, in events ({min} to {max})",
      { min: formatNumber(0), max: formatNumber(MAX_DELAY) })), delay,
    h("label", { for: `${id}-chat` }, t("Spectators may chat")), chat);
  visibility.addEventListener("change", () => { extra.hidden = visibility.value === "private"; });
  const el = h("fieldset", {}, h("legend", {}, t("Spectators")),
    h("label", { for: `${id}-visibility` }, t("Who may watch")), visibility, extra);
  const value = () => {
    if (visibility.value === "private") return { visibility: "private" };
    const events = Math.min(MAX_DELAY, Math.max(0, Math.round(Number(delay.value) || 0)));
    return { visibility: visibility.value, spectator_delay: events,
      spectator_chat: chat.value === "yes" };
  };
  return { el, value };
}

const watchers = (n) => tn("{n} watching", "{n} watching", n);

/** A listed table's seat: the person (avatar and names), or a bot's level. */
function seatItem(seat) {
  if (seat.username || seat.display_name) return person(seat);
  if (seat.kind === "bot") return t("bot ({level})", { level: botLevel(seat.level) });
  return seat.kind === "open" ? t("open seat") : String(seat.kind || "?");
}

/** The lobby's "Watch a table" panel: the public tables under way, not the player's own. */
export function renderWatchList(el, tables, username) {
  const list = (Array.isArray(tables) ? tables : (tables && tables.results) || [])
    .filter((table) => !(table.seats || []).some((s) => s.username === username));
  clear(el).append(h("h2", { id: "watch-title" }, t("Watch a table")));
  if (!list.length) {
    el.append(h("p", { "data-testid": "watch-empty" }, t("No public table is being played now.")));
    return;
  }
  el.append(h("ul", { class: "plain", "data-testid": "watch-list" }, list.map((table) => {
    const owner = table.created_by || "?";
    const round = formatNumber(table.round || 1);
    const preset = table.rules && table.rules.preset;
    return h("li", { "data-testid": "watch-entry", "data-table": table.id,
      "data-spectators": table.spectators ?? 0 },
    preset ? t("{owner}'s table ({rules}, round {round}):", { owner, rules: preset, round }) :
      t("{owner}'s table (round {round}):", { owner, round }), " ",
    h("span", { class: "seat-list" }, (table.seats || []).map((s) =>
      h("span", { class: "seat-item" }, seatItem(s)))),
    " · ",
    h("span", { "data-testid": "spectator-count" }, watchers(table.spectators ?? 0)),
    table.spectator_delay ? [" · ", tn("{n} event behind", "{n} events behind",
      table.spectator_delay)] : "", " ",
    h("a", { href: `#/table/${table.id}`, class: "button", "data-testid": "watch-table",
      "data-table": table.id, "aria-label": t("Watch {owner}'s table", { owner }) },
    t("Watch")));
  })));
}
