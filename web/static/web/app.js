// The browser table: screens routed by the URL's hash, drawn from the API's answers.
//   #/login  #/lobby  #/table/<id>  #/replay/<id>?at=N  #/audit/<id>  #/wallet
//   #/reset?uid=..&token=..  (the link of a password-reset mail: TONGITS_PASSWORD_RESET_URL)

import { api, ApiError, clearSession, followMe, saveSession, session } from "./api.js";
import { h, clear, say } from "./dom.js";
import { tableScreen } from "./table.js";
import { replayScreen, auditScreen } from "./after.js";
import { bonusButton, chips, refreshBalance, walletScreen } from "./wallet.js";
import { renderWatchList, watchChooser } from "./watch.js";

const app = document.getElementById("app");
let cleanup = null;

function route() {
  const hash = location.hash.replace(/^#\/?/, "");
  const [path, query = ""] = hash.split("?");
  const [name = "", id = ""] = path.split("/");
  return { name, id, params: new URLSearchParams(query) };
}

export function go(hash) {
  if (location.hash === hash) render();
  else location.hash = hash;
}

function showWho() {
  const who = document.getElementById("whoami");
  clear(who);
  const { token, username } = session();
  if (!token) return;
  who.append(
    h("span", {}, `Signed in as ${username || "?"} `),
    h("a", { href: "#/wallet", id: "balance", class: "balance", "data-testid": "balance" },
      "chips"),
    " ",
    h("button", { type: "button", class: "link", onclick: logout }, "Log out"),
  );
  refreshBalance();
}

async function logout() {
  try {
    await api.logout();
  } catch {
    // the token may already be gone: log out locally anyway
  }
  clearSession();
  go("#/login");
}

const PUBLIC_SCREENS = new Set(["login", "reset"]);

async function render() {
  if (cleanup) cleanup();
  cleanup = null;
  say("");
  showWho();
  const r = route();
  const { token } = session();
  if (!token && !PUBLIC_SCREENS.has(r.name)) return go("#/login");
  clear(app);
  const screens = {
    login: loginScreen,
    lobby: lobbyScreen,
    table: tableScreen,
    replay: replayScreen,
    audit: auditScreen,
    reset: resetScreen,
    wallet: walletScreen,
  };
  const screen = screens[r.name] || (token ? lobbyScreen : loginScreen);
  try {
    cleanup = (await screen(app, r, { go, handleError, refreshBalance })) || null;
  } catch (err) {
    handleError(err);
  }
  app.focus({ preventScroll: true });
}

/** A form's refusal: each field's messages (a 400 "invalid"), else as any error. */
function showFormError(err) {
  if (err instanceof ApiError && err.body && err.body.fields) {
    const fields = Object.entries(err.body.fields)
      .map(([k, v]) => `${k}: ${[].concat(v).join(" ")}`).join("; ");
    say(`${err.message} ${fields}`, true);
  } else handleError(err);
}

export function handleError(err) {
  if (err instanceof ApiError && err.status === 401) {
    clearSession();
    say("Your session ended: log in again.");
    go("#/login");
    return;
  }
  say(err instanceof ApiError ? `${err.message} (${err.code || err.status})` : String(err), true);
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
      h("label", { for: `${id}-username` }, "Username"), user,
      h("label", { for: `${id}-password` }, "Password"), pass,
      withEmail ? [h("label", { for: `${id}-email` }, "Email (optional)"), email] : [],
      h("button", { type: "submit", "data-testid": `${id}-submit` }, title),
    );
    el.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        const body = await submit(user.value.trim(), pass.value, email.value.trim());
        saveSession(body.token, user.value.trim());
        go("#/lobby");
      } catch (err) {
        showFormError(err);
      }
    });
    return el;
  };
  root.append(
    h("h1", {}, "Play Tongits"),
    h("div", { class: "columns" },
      form("login", "Log in", false, (u, p) => api.login(u, p)),
      form("register", "Register", true, (u, p, e) => api.register(u, p, e)),
    ),
    forgotForm(),
  );
}

// The same answer whether or not an account has the address (the server's 202).
function forgotForm() {
  const email = h("input", { id: "forgot-email", name: "email", type: "email", required: true,
    autocomplete: "email", "data-testid": "forgot-email" });
  const el = h("form", { class: "panel", "aria-labelledby": "forgot-title" },
    h("h2", { id: "forgot-title" }, "Forgot your password?"),
    h("label", { for: "forgot-email" }, "Email"), email,
    h("button", { type: "submit", "data-testid": "forgot-submit" }, "Mail me a link"),
  );
  el.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api.requestReset(email.value.trim());
      say("If an account has this address, a reset link is on its way.");
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
    h("h2", { id: "reset-title" }, "Choose a new password"),
    h("label", { for: "reset-password" }, "New password"), pass,
    h("button", { type: "submit", "data-testid": "reset-submit" }, "Set the password"),
  );
  el.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api.confirmReset(uid, token, pass.value);
      clearSession(); // every session ended with the reset
      showWho();
      clear(root).append(
        h("h1", {}, "Your password is set"),
        h("p", { "data-testid": "reset-done" }, "Every session ended: ",
          h("a", { href: "#/login" }, "log in"), " with the new password."),
      );
    } catch (err) {
      showFormError(err);
    }
  });
  root.append(h("h1", {}, "Reset your password"), el);
}

// ------------------------------------------------------------------ lobby

const PRESETS = ["standard", "house", "h19"];
const WATCH_POLL_MS = 15000;

/** "hard (rating 31.2)": a bot level with the rating it earned against the others. */
const levelText = (l) => `${l.level} (rating ${l.rating.toFixed(1)})`;

function select(id, label, options, value, text = (o) => o) {
  const el = h("select", { id, name: id },
    options.map((o) => h("option", { value: o.level || o, selected: (o.level || o) === value },
      text(o))));
  return [h("label", { for: id }, label), el];
}

function seatChooser(id, label, levels) {
  const kind = h("select", { id: `${id}-kind`, "aria-label": `${label}: who` },
    h("option", { value: "open" }, "open seat"),
    levels.map((l) => h("option", { value: `bot:${l.level}` }, `bot: ${levelText(l)}`)),
    h("option", { value: "user" }, "a friend by name"));
  const name = h("input", { id: `${id}-name`, "aria-label": `${label}: friend's username`,
    placeholder: "username", hidden: true });
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
  const el = h("select", { id, name: id, "data-testid": id },
    h("option", { value: "0:1" }, "Free: no chips at stake"),
    rooms.map((r) => h("option", { value: `${r.buy_in}:${r.stake}`, disabled: !r.affordable },
      `Buy-in ${chips(r.buy_in)}, stake ${r.stake}${r.affordable ? "" : " (not enough chips)"}`)));
  const choice = () => {
    const [buyIn, stake] = el.value.split(":").map(Number);
    return { buyIn, stake };
  };
  // A room's table: its buy-in, and the preset's rules with the room's stake.
  const rules = (preset) => {
    const { buyIn, stake } = choice();
    return buyIn ? { preset, stake } : preset;
  };
  return { label: h("label", { for: id }, "Room"), el, rules, buyIn: () => choice().buyIn };
}

async function lobbyScreen(root) {
  const { username } = session();
  const [rooms, wallet, options] = await Promise.all(
    [api.rooms(), api.wallet(), api.tableOptions()]);
  const levels = options.bot_levels;
  const [labelA, selA] = select("quick-bot-1", "First bot", levels, "easy", levelText);
  const [labelB, selB] = select("quick-bot-2", "Second bot", levels, "normal", levelText);
  const [labelP, selP] = select("quick-preset", "Rules", PRESETS, "standard");
  const quickRoom = roomChooser("quick-room", rooms);
  const quick = h("form", { class: "panel", "aria-labelledby": "quick-title" },
    h("h2", { id: "quick-title" }, "Quick play against bots"),
    quickRoom.label, quickRoom.el, labelP, selP, labelA, selA, labelB, selB,
    h("button", { type: "submit", "data-testid": "quick-play" }, "Play now"));
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

  const [labelF, selF] = select("friends-preset", "Rules", PRESETS, "standard");
  const friendsRoom = roomChooser("friends-room", rooms);
  const s2 = seatChooser("friends-seat-2", "Seat 2", levels);
  const s3 = seatChooser("friends-seat-3", "Seat 3", levels);
  const spectators = watchChooser("friends-watch");
  const friends = h("form", { class: "panel", "aria-labelledby": "friends-title" },
    h("h2", { id: "friends-title" }, "A table with friends"),
    friendsRoom.label, friendsRoom.el, labelF, selF, s2.el, s3.el, spectators.el,
    h("button", { type: "submit", "data-testid": "create-table" }, "Open the table"));
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
    h("h2", { id: "purse-title" }, "Your chips"),
    h("p", {}, `${chips(w.available)} available`, w.in_play ? `, ${chips(w.in_play)} in play` : ""),
    bonusButton(w, drawPurse),
    h("p", {}, h("a", { href: "#/wallet" }, "Your wallet and its entries")));
  drawPurse(wallet);

  const mine = h("section", { class: "panel", "aria-labelledby": "mine-title" },
    h("h2", { id: "mine-title" }, "Your games"), h("p", {}, "Loading…"));
  const open = h("section", { class: "panel", "aria-labelledby": "open-title" },
    h("h2", { id: "open-title" }, "Open tables"), h("p", {}, "Loading…"));
  const watchBox = h("section", { class: "panel", "aria-labelledby": "watch-title",
    "data-testid": "watch" }, h("h2", { id: "watch-title" }, "Watch a table"), h("p", {}, "Loading…"));

  root.append(h("h1", {}, `Lobby`),
    h("div", { class: "columns" }, quick, friends, purse, mine, open, watchBox));

  const drawMine = (games) => {
    const list = [...((games && games.games) || [])].sort(
      (a, b) => Number(Boolean(b.is_my_turn)) - Number(Boolean(a.is_my_turn)));
    clear(mine).append(h("h2", { id: "mine-title" }, "Your games"));
    if (!list.length) mine.append(h("p", {}, "No waiting or active table."));
    else {
      mine.append(h("ul", { class: "plain", "data-testid": "my-games" }, list.map((g) =>
        h("li", {},
          h("a", { href: `#/table/${g.game_id}` },
            g.is_my_turn ? h("strong", {}, g.draw_answer ? "Answer the Draw" : "Your turn") :
              g.invitation === "pending" ? h("strong", {}, "Invitation") :
                h("span", {}, g.status),
            ` · round ${g.round || 0} · ${String(g.game_id).slice(0, 8)}`)))));
    }
  };
  const [games, tables, watchable] = await Promise.all(
    [api.myGames(), api.openTables(), api.watchTables()]);
  drawMine(games);
  renderWatchList(watchBox, watchable, username);
  // The watch list's tables and counts change by themselves: read again now and then.
  const watchTimer = setInterval(() => {
    api.watchTables().then((t) => renderWatchList(watchBox, t, username)).catch(() => {});
  }, WATCH_POLL_MS);
  // Your games stay current: /me/stream sends the whole list again after each notice.
  const notices = followMe({
    onEvent: (type, data) => {
      if (type === "games") drawMine(Array.isArray(data) ? { games: data } : data);
    },
  });
  clear(open).append(h("h2", { id: "open-title" }, "Open tables"));
  const others = (Array.isArray(tables) ? tables : (tables && tables.results) || [])
    .filter((t) => !(t.seats || []).some((s) => s.username === username));
  if (!others.length) open.append(h("p", {}, "No open table right now."));
  else {
    open.append(h("ul", { class: "plain" }, others.map((t) => {
      const who = (t.seats || []).map((s) => s.username || (s.kind === "bot" ?
        `bot (${s.level})` : s.kind)).join(", ");
      const preset = (t.rules && t.rules.preset) || "custom";
      const stakes = t.buy_in ? `, buy-in ${chips(t.buy_in)}` : "";
      return h("li", {}, `${t.created_by || "?"}'s table (${preset}${stakes}): ${who} `,
        h("button", {
          type: "button",
          "data-testid": "join-table",
          "data-table": t.id,
          onclick: async () => {
            try {
              await api.join(t.id);
              go(`#/table/${t.id}`);
            } catch (err) {
              handleError(err);
            }
          },
        }, "Join"));
    })));
  }
  return () => {
    notices.close();
    clearInterval(watchTimer);
  };
}

window.addEventListener("hashchange", render);
render();
