// A small menu on another person, beside their seat or their chat message: add them as a friend,
// or block them (after a confirmation). Which menu is open lives in the caller's `menus` (from
// createMenus), so the table's frequent redraws keep it open and the keyboard where it was.

import { api } from "./api.js";
import { h, say } from "./dom.js";
import { t } from "./i18n.js";
import { shownName } from "./people.js";

/** The menus of one screen part: `redraw()` draws that part again (synchronously). */
export function createMenus(redraw, ctx) {
  return { open: null, confirming: false, busy: false, redraw, ctx };
}

function focusOn(key) {
  const el = document.querySelector(`[data-focus-key="${CSS.escape(key)}"]`);
  if (el) el.focus(); // scrolled into view: a chat log's redraw scrolls to its newest line
}

function setMenu(menus, open, confirming, focusKey) {
  menus.open = open;
  menus.confirming = confirming;
  menus.redraw();
  if (focusKey) focusOn(focusKey);
}

/**
 * The menu of `entry` (a seat or a chat message: username, display_name), keyed by `key` (unique
 * on the screen); null for a bot, an empty seat or a deleted account. `onBlocked(entry)` runs
 * once the block is made.
 */
export function personMenu(menus, key, entry, { onBlocked } = {}) {
  if (!entry || !entry.username || entry.kind === "bot" || entry.kind === "open") return null;
  const name = shownName(entry);
  const open = menus.open === key;
  const panelId = `person-menu-${String(key).replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const toggleKey = `${key}:toggle`;
  const close = () => setMenu(menus, null, false, toggleKey);

  const run = (call) => async () => {
    if (menus.busy) return;
    menus.busy = true;
    try {
      await call();
    } catch (err) {
      menus.ctx.handleError(err);
    } finally {
      menus.busy = false;
    }
    close();
  };
  const addFriend = run(async () => {
    const answer = await api.addFriend(entry.username);
    say(answer.state === "friends" ? t("{name} and you are friends now.", { name }) :
      t("Friend request sent to {name}.", { name }));
  });
  const block = run(async () => {
    await api.block(entry.username);
    say(t("You blocked {name}: neither of you sees the other's chat, invitations or tables " +
      "any more.", { name }));
    if (onBlocked) onBlocked(entry);
  });

  const item = (focusKey, testid, text, onclick, extra = {}) => h("button", { type: "button",
    class: "link", "data-focus-key": `${key}:${focusKey}`, "data-testid": testid,
    "data-username": entry.username, onclick, ...extra }, text);
  let panel = null;
  if (open && menus.confirming) {
    panel = h("div", { id: panelId, class: "person-menu-panel", role: "group",
      "aria-label": t("Block {name}?", { name }) },
    h("p", {}, t("Block {name}? Neither of you will see the other's chat, invitations or " +
      "tables, and a friendship between you ends.", { name })),
    item("block-confirm", "person-block-confirm", t("Yes, block {name}", { name }), block),
    item("cancel", "person-menu-cancel", t("Cancel"), close));
  } else if (open) {
    panel = h("div", { id: panelId, class: "person-menu-panel", role: "group",
      "aria-label": t("What to do with {name}", { name }) },
    item("add-friend", "person-add-friend", t("Add {name} as a friend", { name }), addFriend),
    item("block", "person-block", t("Block {name}…", { name }),
      () => setMenu(menus, key, true, `${key}:block-confirm`)));
  }
  return h("span", {
    class: "person-menu",
    onkeydown: (event) => {
      if (event.key === "Escape" && menus.open === key) {
        event.stopPropagation();
        close();
      }
    },
  },
  h("button", { type: "button", class: "menu-toggle", "aria-expanded": open ? "true" : "false",
    "aria-controls": open ? panelId : null, "data-focus-key": toggleKey,
    "data-testid": "person-menu", "data-username": entry.username,
    "aria-label": t("More about {name}", { name }),
    onclick: () => setMenu(menus, open ? null : key, false, toggleKey) },
  h("span", { "aria-hidden": "true" }, "⋯")),
  panel);
}
