// The browser table: screens routed by the URL's hash, drawn from the API's answers.
//   #/login  #/lobby  #/table/<id>  #/replay/<id>?at=N  #/audit/<id>  #/wallet  #/profile
//   #/tournaments  #/tournament/<id>  #/weekly?room=&week=
//   #/friends  #/queue/<ticket id> (#/queue: the open ticket)
//   #/reset?uid=..&token=..  (the link of a password-reset mail: TONGITS_PASSWORD_RESET_URL)

import {
  api, ApiError, clearSession, closeMe, deviceKey, followMe, saveSession, session,
} from "./api.js";
import { h, clear, say } from "./dom.js";
import {
  LANGUAGES, chooseLanguage, formatList, formatNumber, language, saveLanguage, t, useLanguage,
} from "./i18n.js";
import { friendsScreen } from "./friends.js";
import { botLevel } from "./live-state.js";
import {
  PRESETS, matchPanel, openTicketPanel, presetName, queueScreen,
} from "./matchmaking.js";
import { avatarImage, shownName } from "./people.js";
import { profileScreen } from "./profile.js";
import { startPrompts } from "./prompts.js";
import { tableScreen } from "./table.js";
import { replayScreen, auditScreen } from "./after.js";
import { bonusButton, chips, refreshBalance, walletScreen } from "./wallet.js";
import { renderWatchList, watchChooser } from "./watch.js";
import { tournamentScreen, tournamentsScreen, weeklyScreen } from "./tournaments.js";

const app = document.getElementById("app");
let cleanup = null;
let account = null; // GET /me's answer while signed in: names, avatar, language, guest
let prompts = null; // a friend's invitation and a seated ticket, shown on every screen
let notice = null; // what the next screen says in the status line ({ text, error })

function route() {
  const hash = location.hash.replace(/^#\/?/, "");
  const [path, query = ""] = hash.split("?");
  const [name = "", id = ""] = path.split("/");
  return { name, id, params: new URLSearchParams(query) };
}

/** To the screen of `hash`; `said` ({ text, error }): what its status line says once drawn. */
export function go(hash, said = null) {
  notice = said;
  if (location.hash === hash) render();
  else location.hash = hash;
}

/** Follow the player's stream for what shows on every screen (prompts.js), while signed in. */
function startFollowing() {
  if (prompts || !session().token) return;
  prompts = startPrompts(document.getElementById("prompts"), { go, handleError });
}

function stopFollowing() {
  if (prompts) prompts.close();
  prompts = null;
  closeMe();
}

// The page's own texts in index.html (data-i18n="<key>"), in the page's language.
const PAGE_TEXTS = {
  loading: () => t("Loading…"),
};

function translatePage() {
  document.title = t("Tongits");
  for (const el of document.querySelectorAll("[data-i18n]")) {
    const text = PAGE_TEXTS[el.dataset.i18n];
    if (text) el.textContent = text();
  }
}

/** The account as GET /me (or PATCH /me) answered: the header shows it, the session keeps the
 * username (a guest who chose one has a new one). */
function setAccount(user) {
  account = user || null;
  const { token } = session();
  if (account && token && account.username) saveSession(token, account.username);
  showWho();
}

/** The language switch: the six languages, each named in its own language. */
function showLanguageSwitch() {
  const box = document.getElementById("language-switch");
  if (!box) return;
  const select = h("select", { id: "language-select", "data-testid": "language-switch",
    "aria-label": t("Language") },
  LANGUAGES.map(([code, name]) => h("option", { value: code, lang: code,
    selected: code === language() }, name)));
  select.addEventListener("change", () => switchLanguage(select.value));
  clear(box).append(select);
}

/** Speak `code`: the account's language when signed in (PATCH /me), else this browser's. */
async function switchLanguage(code) {
  try {
    if (account) setAccount(await api.updateMe({ language: code }));
    else saveLanguage(code);
    await useLanguage(code);
  } catch (err) {
    handleError(err);
  }
  translatePage();
  render();
}

function showWho() {
  const who = document.getElementById("whoami");
  clear(who);
  const { token, username } = session();
  if (!token) return;
  const name = account ? shownName(account) : username || "?";
  who.append(
    h("a", { href: "#/profile", class: "profile-link", "data-testid": "profile-link",
      "aria-label": t("Your profile: {name}", { name }) },
    account ? avatarImage(account) : null, h("bdi", {}, name)),
    " ",
    h("a", { href: "#/friends", "data-testid": "friends-link" }, t("Friends")),
    " ",
    h("a", { href: "#/tournaments", "data-testid": "tournaments-link" }, t("Tournaments")),
    " ",
    h("a", { href: "#/wallet", id: "balance", class: "balance", "data-testid": "balance" },
      t("chips")),
    " ",
    h("button", { type: "button", class: "link", "data-testid": "log-out", onclick: logout },
      t("Log out")),
  );
  refreshBalance();
}

async function logout() {
  try {
    await api.logout();
  } catch {
    // the token may already be gone: log out locally anyway
  }
  stopFollowing();
  clearSession();
  account = null;
  await useLanguage(chooseLanguage(null));
  translatePage();
  go("#/login");
}

/** Signed in (a log-in, a registration, guest play): who we are, in their language. */
async function signedIn(token, username) {
  saveSession(token, username);
  setAccount(await api.me());
  await useLanguage(chooseLanguage(account.language));
  translatePage();
  stopFollowing(); // another account may have been followed on this page
  startFollowing();
  go("#/lobby");
}

const PUBLIC_SCREENS = new Set(["login", "reset"]);

let renders = 0;

async function render() {
  if (cleanup) cleanup();
  cleanup = null;
  const mine = ++renders;
  app.setAttribute("aria-busy", "true"); // until this screen is drawn
  const said = notice;
  notice = null;
  say(said ? said.text : "", Boolean(said && said.error));
  showLanguageSwitch();
  showWho();
  const r = route();
  const { token } = session();
  if (!token && !PUBLIC_SCREENS.has(r.name)) {
    app.removeAttribute("aria-busy");
    return go("#/login");
  }
  clear(app);
  const screens = {
    login: loginScreen,
    lobby: lobbyScreen,
    table: tableScreen,
    replay: replayScreen,
    audit: auditScreen,
    reset: resetScreen,
    wallet: walletScreen,
    profile: profileScreen,
    friends: friendsScreen,
    queue: queueScreen,
    tournaments: tournamentsScreen,
    tournament: tournamentScreen,
    weekly: weeklyScreen,
  };
  const screen = screens[r.name] || (token ? lobbyScreen : loginScreen);
  const ctx = { go, handleError, refreshBalance, account: () => account, setAccount,
    useAccountLanguage };
  try {
    cleanup = (await screen(app, r, ctx)) || null;
  } catch (err) {
    handleError(err);
  }
  if (mine === renders) app.removeAttribute("aria-busy");
  app.focus({ preventScroll: true });
}

/** After the profile changed the account's language: the whole page speaks it at once. */
async function useAccountLanguage() {
  await useLanguage(chooseLanguage(account && account.language));
  translatePage();
  await render();
}

/** A form's refusal: each field's messages (a 400 "invalid"), else as any error. */
function showFormError(err) {
  if (err instanceof ApiError && err.body && err.body.fields) {
    const fields = formatList(Object.entries(err.body.fields).map(([field, problems]) =>
      t("{field}: {problem}", { field, problem: [].concat(problems).join(" ") })));
    say(t("{detail} {fields}", { detail: err.message, fields }), true);
  } else handleError(err);
}

export function handleError(err) {
  if (err instanceof ApiError && err.status === 401) {
    stopFollowing();
    clearSession();
    account = null;
    say(t("Your session ended: log in again."));
    go("#/login");
    return;
  }
  say(err instanceof ApiError ? t("{detail} ({code})", { detail: err.message,
    code: err.code || err.status }) : t("Something went wrong: {error}", { error: String(err) }),
  true);
}

// ------------------------------------------------------------------ log in / register

function loginScreen(root) {
  const form = (id, title, withEmail, submit) => {
    const user = h("input", { id: `${id}-username`, name: "username", required: true,
      autocomplete: "username", "data-testid": `${id}-username` });
    const pass = h("input", { id: `${id}-password`, name: "password", type: "password",
      required: true, autocomplete: id === "register" ? "new-password" : "current-password",
      "data-testid": `${id}-password` });
    const email = h("input", { id: `${id}-email`, name: "email", type: "email",
      autocomplete: "email" });
    const el = h("form", { class: "panel", "aria-labelledby": `${id}-title` },
      h("h2", { id: `${id}-title` }, title),
      h("label", { for: `${id}-username` }, t("Username")), user,
      h("label", { for: `${id}-password` }, t("Password")), pass,
      withEmail ? [h("label", { for: `${id}-email` }, t("Email (optional)")), email] : [],
      h("button", { type: "submit", "data-testid": `${id}-submit` }, title),
    );
    el.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        const body = await submit(user.value.trim(), pass.value, email.value.trim());
        await signedIn(body.token, user.value.trim());
      } catch (err) {
        showFormError(err);
      }
    });
    return el;
  };
  root.append(
    h("h1", {}, t("Play Tongits")),
    h("div", { class: "columns" },
      guestPanel(),
      form("login", t("Log in"), false, (u, p) => api.login(u, p)),
      form("register", t("Register"), true, (u, p, e) => api.register(u, p, e)),
    ),
    forgotForm(),
  );
}

// Guest play: this browser's own key (made once, kept in localStorage) is the account, so the
// same guest comes back here after a log-out; the profile can give it a username and password.
function guestPanel() {
  const play = async () => {
    try {
      const body = await api.deviceSignIn(deviceKey());
      await signedIn(body.token, (body.user && body.user.username) || "");
    } catch (err) {
      handleError(err);
    }
  };
  return h("section", { class: "panel", "aria-labelledby": "guest-title" },
    h("h2", { id: "guest-title" }, t("Play as guest")),
    h("p", {}, t("No name or password needed: this browser keeps your guest account. " +
      "To play it on other devices too, choose a username and password on your profile.")),
    h("button", { type: "button", "data-testid": "play-as-guest", onclick: play },
      t("Play as guest")));
}

// The same answer whether or not an account has the address (the server's 202).
function forgotForm() {
  const email = h("input", { id: "forgot-email", name: "email", type: "email", required: true,
    autocomplete: "email", "data-testid": "forgot-email" });
  const el = h("form", { class: "panel", "aria-labelledby": "forgot-title" },
    h("h2", { id: "forgot-title" }, t("Forgot your password?")),
    h("label", { for: "forgot-email" }, t("Email")), email,
    h("button", { type: "submit", "data-testid": "forgot-submit" }, t("Mail me a link")),
  );
  el.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api.requestReset(email.value.trim());
      say(t("If an account has this address, a reset link is on its way."));
    } catch (err) {
      handleError(err);
    }
  });
  return el;
}

// ------------------------------------------------------------------ password reset

function resetScreen(root, r) {
  const uid = r.params.get("uid") || "";
  const token = r.params.get("token") || "";
  const pass = h("input", { id: "reset-password", name: "password", type: "password",
    required: true, autocomplete: "new-password", "data-testid": "reset-password" });
  const el = h("form", { class: "panel", "aria-labelledby": "reset-title" },
    h("h2", { id: "reset-title" }, t("Choose a new password")),
    h("label", { for: "reset-password" }, t("New password")), pass,
    h("button", { type: "submit", "data-testid": "reset-submit" }, t("Set the password")),
  );
  el.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api.confirmReset(uid, token, pass.value);
      clearSession(); // every session ended with the reset
      account = null;
      showWho();
      clear(root).append(
        h("h1", {}, t("Your password is set")),
        h("p", { "data-testid": "reset-done" },
          t("Every session ended: log in with the new password.")),
        h("p", {}, h("a", { href: "#/login" }, t("Log in"))),
      );
    } catch (err) {
      showFormError(err);
    }
  });
  root.append(h("h1", {}, t("Reset your password")), el);
}

// ------------------------------------------------------------------ lobby

const WATCH_POLL_MS = 15000;

/** "hard (rating 31.2)": a bot level with the rating it earned against the others. */
const levelText = (l) => t("{level} (rating {rating})", { level: botLevel(l.level),
  rating: formatNumber(l.rating, { minimumFractionDigits: 1, maximumFractionDigits: 1 }) });

function select(id, label, options, value, text = (o) => o) {
  const el = h("select", { id, name: id },
    options.map((o) => h("option", { value: o.level || o, selected: (o.level || o) === value },
      text(o))));
  return [h("label", { for: id }, label), el];
}

function seatChooser(id, label, levels) {
  const kind = h("select", { id: `${id}-kind`, "aria-label": t("{seat}: who", { seat: label }) },
    h("option", { value: "open" }, t("open seat")),
    levels.map((l) => h("option", { value: `bot:${l.level}` },
      t("bot: {level}", { level: levelText(l) }))),
    h("option", { value: "user" }, t("a friend by name")));
  const name = h("input", { id: `${id}-name`,
    "aria-label": t("{seat}: friend's username", { seat: label }),
    placeholder: t("username"), hidden: true });
  kind.addEventListener("change", () => { name.hidden = kind.value !== "user"; });
  const seat = () => {
    if (kind.value === "open") return { kind: "open" };
    if (kind.value === "user") return { kind: "user", username: name.value.trim() };
    return { kind: "bot", level: kind.value.split(":")[1] };
  };
  return { el: h("fieldset", {}, h("legend", {}, label), kind, name), seat };
}

/**
 * Where to play: free (no chips at stake) or one of quick play's rooms (GET /rooms), a buy-in
 * with its stake; a room the wallet cannot cover is shown, not offered.
 */
function roomChooser(id, rooms) {
  const room = (r) => (r.affordable ?
    t("Buy-in {chips}, stake {stake}", { chips: chips(r.buy_in), stake: formatNumber(r.stake) }) :
    t("Buy-in {chips}, stake {stake} (not enough chips)", { chips: chips(r.buy_in),
      stake: formatNumber(r.stake) }));
  const el = h("select", { id, name: id, "data-testid": id },
    h("option", { value: "0:1" }, t("Free: no chips at stake")),
    rooms.map((r) => h("option", { value: `${r.buy_in}:${r.stake}`, disabled: !r.affordable },
      room(r))));
  const choice = () => {
    const [buyIn, stake] = el.value.split(":").map(Number);
    return { buyIn, stake };
  };
  // A room's table: its buy-in, and the preset's rules with the room's stake.
  const rules = (preset) => {
    const { buyIn, stake } = choice();
    return buyIn ? { preset, stake } : preset;
  };
  return { label: h("label", { for: id }, t("Room")), el, rules, buyIn: () => choice().buyIn };
}

/** Who sits at a listed table, in words: each person's name, or the bot's level. */
export function seatsText(seats) {
  return formatList((seats || []).map((s) => {
    if (s.kind === "bot") return t("bot ({level})", { level: botLevel(s.level) });
    if (s.username) return shownName(s);
    return s.kind === "open" ? t("open seat") : String(s.kind || "?");
  }));
}

/** The open ticket (GET /me/matchmaking), or null when there is none. */
function openTicket() {
  return api.myTicket().catch((err) => {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  });
}

async function lobbyScreen(root, route, ctx) {
  const { username } = session();
  const [rooms, wallet, options, ticket] = await Promise.all(
    [api.rooms(), api.wallet(), api.tableOptions(), openTicket()]);
  const levels = options.bot_levels;
  const presets = Object.keys(PRESETS);
  const presetText = presetName;
  const [labelA, selA] = select("quick-bot-1", t("First bot"), levels, "easy", levelText);
  const [labelB, selB] = select("quick-bot-2", t("Second bot"), levels, "normal", levelText);
  const [labelP, selP] = select("quick-preset", t("Rules"), presets, "standard", presetText);
  const quickRoom = roomChooser("quick-room", rooms);
  const quick = h("form", { class: "panel", "aria-labelledby": "quick-title" },
    h("h2", { id: "quick-title" }, t("Quick play against bots")),
    quickRoom.label, quickRoom.el, labelP, selP, labelA, selA, labelB, selB,
    h("button", { type: "submit", "data-testid": "quick-play" }, t("Play now")));
  quick.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const table = await api.createTable(quickRoom.rules(selP.value), [
        { kind: "user" },
        { kind: "bot", level: selA.value },
        { kind: "bot", level: selB.value },
      ], quickRoom.buyIn());
      go(`#/table/${table.id}`);
    } catch (err) {
      handleError(err);
    }
  });

  const [labelF, selF] = select("friends-preset", t("Rules"), presets, "standard", presetText);
  const friendsRoom = roomChooser("friends-room", rooms);
  const s2 = seatChooser("friends-seat-2", t("Seat {n}", { n: formatNumber(2) }), levels);
  const s3 = seatChooser("friends-seat-3", t("Seat {n}", { n: formatNumber(3) }), levels);
  const spectators = watchChooser("friends-watch");
  const friends = h("form", { class: "panel", "aria-labelledby": "friends-title" },
    h("h2", { id: "friends-title" }, t("A table with friends")),
    friendsRoom.label, friendsRoom.el, labelF, selF, s2.el, s3.el, spectators.el,
    h("button", { type: "submit", "data-testid": "create-table" }, t("Open the table")));
  friends.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const table = await api.createTable(friendsRoom.rules(selF.value),
        [{ kind: "user" }, s2.seat(), s3.seat()], friendsRoom.buyIn(), spectators.value());
      go(`#/table/${table.id}`);
    } catch (err) {
      handleError(err);
    }
  });

  const purse = h("section", { class: "panel", "aria-labelledby": "purse-title" });
  const drawPurse = (w) => clear(purse).append(
    h("h2", { id: "purse-title" }, t("Your chips")),
    h("p", {}, w.in_play ?
      t("{available} available, {in_play} in play", { available: chips(w.available),
        in_play: chips(w.in_play) }) :
      t("{available} available", { available: chips(w.available) })),
    bonusButton(w, drawPurse),
    h("p", {}, h("a", { href: "#/wallet" }, t("Your wallet and its entries"))));
  drawPurse(wallet);

  const mine = h("section", { class: "panel", "aria-labelledby": "mine-title" },
    h("h2", { id: "mine-title" }, t("Your games")), h("p", {}, t("Loading…")));
  const open = h("section", { class: "panel", "aria-labelledby": "open-title" },
    h("h2", { id: "open-title" }, t("Open tables")), h("p", {}, t("Loading…")));
  const watchBox = h("section", { class: "panel", "aria-labelledby": "watch-title",
    "data-testid": "watch" }, h("h2", { id: "watch-title" }, t("Watch a table")),
  h("p", {}, t("Loading…")));

  const queued = h("div", {}, openTicketPanel(ticket));
  root.append(h("h1", {}, t("Lobby")), queued,
    h("div", { class: "columns" }, quick, matchPanel(rooms, ctx), friends, purse, mine, open,
      watchBox));

  const gameLabel = (g) => {
    if (g.is_my_turn) return h("strong", {}, g.draw_answer ? t("Answer the Draw") : t("Your turn"));
    if (g.invitation === "pending") return h("strong", {}, t("Invitation"));
    return h("span", {}, g.status === "waiting" ? t("waiting") : g.status === "active" ?
      t("active") : g.status);
  };
  const drawMine = (games) => {
    const list = [...((games && games.games) || [])].sort(
      (a, b) => Number(Boolean(b.is_my_turn)) - Number(Boolean(a.is_my_turn)));
    clear(mine).append(h("h2", { id: "mine-title" }, t("Your games")));
    if (!list.length) mine.append(h("p", {}, t("No waiting or active table.")));
    else {
      mine.append(h("ul", { class: "plain", "data-testid": "my-games" }, list.map((g) =>
        h("li", {},
          h("a", { href: `#/table/${g.game_id}` }, gameLabel(g), " · ",
            t("round {round} · table {table}", { round: formatNumber(g.round || 0),
              table: String(g.game_id).slice(0, 8) }))))));
    }
  };
  const [games, tables, watchable] = await Promise.all(
    [api.myGames(), api.openTables(), api.watchTables()]);
  drawMine(games);
  renderWatchList(watchBox, watchable, username);
  // The watch list's tables and counts change by themselves: read again now and then.
  const watchTimer = setInterval(() => {
    api.watchTables().then((list) => renderWatchList(watchBox, list, username)).catch(() => {});
  }, WATCH_POLL_MS);
  // Your games stay current: /me/stream sends the whole list again after each notice.
  const notices = followMe({
    onEvent: (type, data) => {
      if (type === "games") drawMine(Array.isArray(data) ? { games: data } : data);
      // The open ticket's panel follows the ticket's frames.
      if (type === "ticket_searching" || type === "ticket_cancelled" || type === "matched") {
        openTicket().then((open) => {
          const panel = openTicketPanel(open);
          clear(queued);
          if (panel) queued.append(panel);
        }).catch(() => {});
      }
    },
  });
  clear(open).append(h("h2", { id: "open-title" }, t("Open tables")));
  const others = (Array.isArray(tables) ? tables : (tables && tables.results) || [])
    .filter((table) => !(table.seats || []).some((s) => s.username === username));
  if (!others.length) open.append(h("p", {}, t("No open table right now.")));
  else {
    open.append(h("ul", { class: "plain" }, others.map((table) => {
      const preset = (table.rules && table.rules.preset) || "custom";
      const rulesName = PRESETS[preset] ? PRESETS[preset]() : t("custom rules");
      const owner = table.created_by || "?";
      const line = table.buy_in ?
        t("{owner}'s table ({rules}, buy-in {chips}): {seats}", { owner, rules: rulesName,
          chips: chips(table.buy_in), seats: seatsText(table.seats) }) :
        t("{owner}'s table ({rules}): {seats}", { owner, rules: rulesName,
          seats: seatsText(table.seats) });
      return h("li", {}, line, " ",
        h("button", {
          type: "button",
          "data-testid": "join-table",
          "data-table": table.id,
          onclick: async () => {
            try {
              await api.join(table.id);
              go(`#/table/${table.id}`);
            } catch (err) {
              handleError(err);
            }
          },
        }, t("Join")));
    })));
  }
  return () => {
    notices.close();
    clearInterval(watchTimer);
  };
}

// ------------------------------------------------------------------ start

/** Signed in already: who we are, so that the first screen speaks the account's language. */
async function start() {
  if (session().token) {
    try {
      account = await api.me();
      setAccount(account);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) clearSession();
    }
  }
  await useLanguage(chooseLanguage(account && account.language));
  translatePage();
  window.addEventListener("hashchange", render);
  startFollowing();
  render();
}

start();
