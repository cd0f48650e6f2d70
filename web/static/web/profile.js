// The profile page (#/profile): what others see (display name, avatar, country), the language
// the server and this page speak to the account in, and the ways into the account (GET
// /me/logins), with a guest's form to keep the account under a username and password.

import { api, ApiError } from "./api.js";
import { clear, h, say } from "./dom.js";
import { LANGUAGES, formatDateTime, language, t } from "./i18n.js";
import { AVATAR_NAMES, avatarImage, shownName } from "./people.js";

// ISO 3166-1 alpha-2, as the server checks a country (pycountry's list).
const COUNTRIES = (
  "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR " +
  "BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ " +
  "EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW " +
  "GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY " +
  "KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV " +
  "MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY " +
  "QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG " +
  "TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM " +
  "ZW").split(" ");
const DISPLAY_NAME_MAX = 24; // accounts.profile.DISPLAY_NAME_MAX

/** Every country, named and sorted in the page's language. */
function countryOptions(chosen) {
  let names = null;
  try {
    names = new Intl.DisplayNames([language()], { type: "region" });
  } catch {
    names = null;
  }
  const named = COUNTRIES.map((code) => [code, (names && names.of(code)) || code]);
  const collator = new Intl.Collator(language());
  named.sort((a, b) => collator.compare(a[1], b[1]));
  return [
    h("option", { value: "", selected: !chosen }, t("Not shown")),
    ...named.map(([code, name]) => h("option", { value: code, selected: code === chosen }, name)),
  ];
}

/** A way into the account, in words. */
function loginText(entry) {
  switch (entry.method) {
    case "password": return t("Username and password ({username})",
      { username: entry.username || "?" });
    case "device": return entry.device ?
      t("A device's own key ({device})", { device: entry.device }) : t("A device's own key");
    case "apple": return entry.email ? t("Sign in with Apple ({email})", { email: entry.email }) :
      t("Sign in with Apple");
    case "google": return entry.email ?
      t("Sign in with Google ({email})", { email: entry.email }) : t("Sign in with Google");
    default: return String(entry.method);
  }
}

export async function profileScreen(root, route, ctx) {
  // The account as this page last heard it (GET /me at the start, then the answers to its own
  // changes): a GET /me right after a change may reach a web process that has not heard of it.
  const [me, avatars, logins] = await Promise.all([
    ctx.account() ? Promise.resolve(ctx.account()) : api.me(), api.avatars(), api.logins()]);
  ctx.setAccount(me);
  const card = h("section", { class: "panel profile-card", "aria-labelledby": "profile-name",
    "data-testid": "profile-card" });
  const loginBox = h("section", { class: "panel", "aria-labelledby": "logins-title",
    "data-testid": "logins" });
  const keepBox = h("div", {});
  root.append(h("h1", {}, t("Your profile")), card,
    h("div", { class: "columns" }, profileForm(me, avatars, ctx, (user) => drawCard(user)),
      h("div", { class: "stack" }, loginBox, keepBox)));

  function drawCard(user) {
    clear(card).append(
      avatarImage(user, "large"),
      h("div", {},
        h("h2", { id: "profile-name" }, h("bdi", { "data-testid": "profile-display-name" },
          shownName(user))),
        h("p", { class: "person-username" }, t("Username: {username}",
          { username: user.username })),
        user.guest ? h("p", { "data-testid": "guest-note" },
          t("A guest account: it lives on this browser until you give it a password.")) : null));
  }

  function drawLogins(entries) {
    clear(loginBox).append(h("h2", { id: "logins-title" }, t("Ways to sign in")));
    loginBox.append(h("ul", { class: "plain logins", "data-testid": "login-list" },
      entries.map((entry) => h("li", { "data-testid": "login", "data-method": entry.method },
        h("span", {}, loginText(entry)), " ",
        h("small", {}, entry.last_used_at ?
          t("last used {when}", { when: formatDateTime(entry.last_used_at) }) :
          t("not used yet")),
        entries.length > 1 ? h("button", { type: "button", class: "secondary",
          "data-testid": "remove-login", "data-method": entry.method,
          "aria-label": t("Remove: {way}", { way: loginText(entry) }),
          onclick: () => remove(entry) }, t("Remove")) : null))));
    if (entries.length === 1) {
      loginBox.append(h("p", {}, t("Your only way in: it cannot be removed.")));
    }
  }

  async function remove(entry) {
    try {
      await api.removeLogin(entry.method);
      say(t("Removed: {way}.", { way: loginText(entry) }));
    } catch (err) {
      if (err instanceof ApiError && err.code === "last_login") say(err.message, true);
      else ctx.handleError(err);
    }
    await reload();
  }

  // After a way in was added or removed: an account without a password is a guest's.
  async function reload(entries = null) {
    const list = entries || await api.logins();
    const password = list.find((e) => e.method === "password");
    const user = { ...ctx.account(), guest: !password };
    if (password && password.username) user.username = password.username;
    ctx.setAccount(user);
    drawCard(user);
    drawLogins(list);
    drawKeep(user);
  }

  function drawKeep(user) {
    clear(keepBox);
    if (user.guest) keepBox.append(keepForm(ctx, reload));
  }

  drawCard(me);
  drawLogins(logins);
  drawKeep(me);
}

/** What others see and the language: one form, saved with one PATCH /me. */
function profileForm(me, avatars, ctx, onSaved) {
  const name = h("input", { id: "profile-display-name-input", name: "display_name",
    value: me.display_name || "", maxlength: DISPLAY_NAME_MAX, autocomplete: "nickname",
    "aria-describedby": "display-name-help display-name-error",
    "data-testid": "display-name" });
  const nameError = h("p", { id: "display-name-error", class: "field-error",
    "data-testid": "display-name-error", "aria-live": "polite" });
  const picker = h("fieldset", { class: "avatar-picker", "data-testid": "avatar-picker" },
    h("legend", {}, t("Avatar")),
    h("div", { class: "avatar-grid" }, avatars.map((a) => {
      const label = AVATAR_NAMES[a.key] ? AVATAR_NAMES[a.key]() : a.key;
      return h("label", { class: "avatar-choice", title: label },
        h("input", { type: "radio", name: "avatar", value: a.key, checked: a.key === me.avatar,
          "data-testid": "avatar-choice", "data-avatar": a.key }),
        h("img", { src: a.url, alt: label, width: 48, height: 48 }));
    })));
  const country = h("select", { id: "profile-country", name: "country",
    "data-testid": "country" }, countryOptions(me.country));
  const lang = h("select", { id: "profile-language", name: "language",
    "data-testid": "profile-language" },
  h("option", { value: "", selected: !me.language }, t("This browser's language")),
  LANGUAGES.map(([code, label]) => h("option", { value: code, lang: code,
    selected: code === me.language }, label)));
  const form = h("form", { class: "panel", "aria-labelledby": "profile-form-title",
    "data-testid": "profile-form" },
  h("h2", { id: "profile-form-title" }, t("What others see")),
  h("label", { for: "profile-display-name-input" }, t("Display name")), name,
  h("p", { id: "display-name-help", class: "help" },
    t("Up to {max} letters, digits, spaces and _ - . (empty: your username).",
      { max: DISPLAY_NAME_MAX })),
  nameError,
  picker,
  h("label", { for: "profile-country" }, t("Country")), country,
  h("label", { for: "profile-language" }, t("Language")), lang,
  h("button", { type: "submit", "data-testid": "save-profile" }, t("Save")));

  const refuse = (text) => {
    nameError.textContent = text;
    name.setAttribute("aria-invalid", "true");
    name.focus();
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    nameError.textContent = "";
    name.removeAttribute("aria-invalid");
    const chosen = form.querySelector("input[name=avatar]:checked");
    const before = ctx.account() ? ctx.account().language : me.language;
    let user;
    try {
      user = await api.updateMe({
        display_name: name.value.trim(),
        avatar: chosen ? chosen.value : null,
        country: country.value,
        language: lang.value,
      });
    } catch (err) {
      const fields = err instanceof ApiError && err.body && err.body.fields;
      if (err instanceof ApiError && err.code === "display_name_refused") refuse(err.message);
      else if (fields && fields.display_name) refuse([].concat(fields.display_name).join(" "));
      else ctx.handleError(err);
      return;
    }
    ctx.setAccount(user);
    if ((user.language || "") !== (before || "")) await ctx.useAccountLanguage();
    else onSaved(user);
    say(t("Your profile is saved."));
  });
  return form;
}

/** A guest's account kept: a username and password (POST /me/logins, method password). */
function keepForm(ctx, onKept) {
  const user = h("input", { id: "keep-username", name: "username", required: true,
    autocomplete: "username", "data-testid": "keep-username" });
  const pass = h("input", { id: "keep-password", name: "password", type: "password",
    required: true, autocomplete: "new-password", "data-testid": "keep-password" });
  const form = h("form", { class: "panel", "aria-labelledby": "keep-title",
    "data-testid": "keep-account" },
  h("h2", { id: "keep-title" }, t("Keep this account: choose a username and password")),
  h("p", {}, t("Then log in with them on any device: your chips, games and profile stay.")),
  h("label", { for: "keep-username" }, t("Username")), user,
  h("label", { for: "keep-password" }, t("Password")), pass,
  h("button", { type: "submit", "data-testid": "keep-submit" }, t("Keep this account")));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    let answer;
    try {
      answer = await api.addPassword(user.value.trim(), pass.value);
    } catch (err) {
      if (err instanceof ApiError && err.body && err.body.fields) {
        const problems = Object.values(err.body.fields).flat().join(" ");
        say(t("{detail} {fields}", { detail: err.message, fields: problems }), true);
      } else ctx.handleError(err);
      return;
    }
    // The answer's list may be read before the new way in was saved: it is added if missing.
    const entries = [...(answer.logins || [])];
    if (answer.login && !entries.some((e) => e.method === answer.login.method)) {
      entries.push(answer.login);
    }
    await onKept(entries);
    say(t("Your account is kept: log in as {username} with your password on any device.",
      { username: user.value.trim() }));
  });
  return form;
}
