// People as the table shows them: the avatar (web/static/web/avatars/<key>.svg), the display name
// and, smaller, the username. Seats, chat messages and profiles carry `display_name` and `avatar`
// beside `username`; an answer without them shows the username and no picture.

import { h } from "./dom.js";
import { t } from "./i18n.js";

/** The avatars' keys (accounts.profile.AVATARS), each with its name for the picker. */
export const AVATAR_NAMES = {
  carabao: () => t("Carabao"),
  tarsier: () => t("Tarsier"),
  eagle: () => t("Philippine eagle"),
  jeepney: () => t("Jeepney"),
  mango: () => t("Mango"),
  sampaguita: () => t("Sampaguita"),
  parol: () => t("Parol"),
  banca: () => t("Banca"),
  coconut: () => t("Coconut"),
  sun: () => t("Sun"),
  pearl: () => t("Pearl"),
  anahaw: () => t("Anahaw leaf"),
};

/** The picture of an avatar key (served beside this module), or null for an unknown key. */
export function avatarUrl(key) {
  if (typeof key !== "string" || !/^[a-z0-9_-]{1,40}$/.test(key)) return null;
  return new URL(`./avatars/${key}.svg`, import.meta.url).href;
}

/** The name to show for a person: the display name, else the username. */
export function shownName(entry) {
  if (!entry) return "";
  return entry.display_name || entry.username || "";
}

/** An avatar image, its alt text the person's display name; null without an avatar. */
export function avatarImage(entry, size = "small") {
  const src = avatarUrl(entry && entry.avatar);
  if (!src) return null;
  return h("img", { class: `avatar ${size}`, src, alt: shownName(entry), width: 32, height: 32,
    "data-testid": "avatar", "data-avatar": entry.avatar });
}

/**
 * A person: the avatar, the display name and the username in smaller text when the two differ;
 * or the avatar and `label` alone (the player's own seat: "You").
 */
export function person(entry, label = null) {
  const name = shownName(entry);
  const username = entry && entry.username;
  return h("span", { class: "person", "data-testid": "person" },
    avatarImage(entry),
    h("bdi", { class: "person-name" }, label || name),
    !label && username && username !== name ?
      h("small", { class: "person-username" }, h("bdi", {}, username)) : null);
}
