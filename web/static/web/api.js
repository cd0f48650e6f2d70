// The public API and its streams, as any client uses them (README "API", docs/live.md).
// Defensive by design: unknown fields in answers are ignored, never required.

import { language, t } from "./i18n.js";

const BASE = "/api/v1";
const TOKEN_KEY = "tongits.token";
const USER_KEY = "tongits.username";
const DEVICE_KEY = "tongits.device_key";

export class ApiError extends Error {
  constructor(status, body) {
    const detail = (body && (body.detail || body.code)) ||
      t("The server answered HTTP {status}.", { status });
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
    this.status = status;
    this.code = (body && body.code) || "";
    this.body = body || {};
  }
}

export function session() {
  return { token: localStorage.getItem(TOKEN_KEY), username: localStorage.getItem(USER_KEY) };
}

export function saveSession(token, username) {
  localStorage.setItem(TOKEN_KEY, token);
  localStorage.setItem(USER_KEY, username);
}

export function clearSession() {
  localStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(USER_KEY);
}

/**
 * This browser's secret for guest play (POST /auth/device): 32 random bytes as base64url, made
 * once and kept, so that a guest is the same account on this browser every time.
 */
export function deviceKey() {
  let key = localStorage.getItem(DEVICE_KEY);
  if (!key || !/^[A-Za-z0-9_-]{32,128}$/.test(key)) {
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    key = btoa(String.fromCharCode(...bytes))
      .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    localStorage.setItem(DEVICE_KEY, key);
  }
  return key;
}

function newKey() {
  if (globalThis.crypto && crypto.randomUUID) return crypto.randomUUID();
  return `${Date.now()}-${Math.random().toString(16).slice(2)}`;
}

/** One JSON request; resolves to the parsed body, rejects with an ApiError on 4xx/5xx. */
export async function call(method, path, body, extraHeaders = {}) {
  // Answers (error details among them) in the page's language when the account has none.
  const headers = { Accept: "application/json", "Accept-Language": language(), ...extraHeaders };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const { token } = session();
  if (token) headers.Authorization = `Token ${token}`;
  const response = await fetch(BASE + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { detail: text.slice(0, 200) };
    }
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export const api = {
  register: (username, password, email) =>
    call("POST", "/auth/register", { username, password, email: email || "" }),
  login: (username, password) => call("POST", "/auth/token", { username, password }),
  deviceSignIn: (key) => call("POST", "/auth/device", { device_key: key, device: "browser" }),
  logout: () => call("POST", "/auth/logout"),
  requestReset: (email) => call("POST", "/auth/password-reset", { email }),
  confirmReset: (uid, token, newPassword) =>
    call("POST", "/auth/password-reset/confirm", { uid, token, new_password: newPassword }),
  me: () => call("GET", "/me"),
  // Profile: display_name, avatar, country, language (null or "" resets one).
  updateMe: (fields) => call("PATCH", "/me", fields),
  avatars: () => call("GET", "/avatars"),
  logins: () => call("GET", "/me/logins"),
  addPassword: (username, password) =>
    call("POST", "/me/logins", { method: "password", username, password }),
  removeLogin: (method) => call("DELETE", `/me/logins/${encodeURIComponent(method)}`),
  myGames: () => call("GET", "/me/games"),
  openTables: () => call("GET", "/tables?status=waiting"),
  watchTables: () => call("GET", "/tables?watch=1"),
  // watching: { visibility, spectator_delay, spectator_chat } (who may watch, docs/live.md)
  createTable: (rules, seats, buyIn = 0, watching = {}) =>
    call("POST", "/tables", { rules, seats, buy_in: buyIn, ...watching }),
  rooms: () => call("GET", "/rooms"),
  tournaments: (status) => call("GET", `/tournaments?status=${encodeURIComponent(status)}`),
  tournament: (id) => call("GET", `/tournaments/${id}`),
  enterTournament: (id) => call("POST", `/tournaments/${id}/registration`, {}),
  leaveTournament: (id) => call("DELETE", `/tournaments/${id}/registration`),
  weekly: (room, week) => call("GET", `/leaderboards/weekly?room=${encodeURIComponent(room)}` +
    (week ? `&week=${encodeURIComponent(week)}` : "")),
  tableOptions: () => call("GET", "/tables/options"),
  wallet: () => call("GET", "/me/wallet"),
  // The first page, or the page a previous answer's `next` link names (an absolute URL).
  walletEntries: (next) => {
    if (!next) return call("GET", "/me/wallet/entries");
    const url = new URL(next, location.href);
    return call("GET", url.pathname.replace(BASE, "") + url.search);
  },
  claimDaily: () => call("POST", "/me/wallet/daily"),
  setListed: (listed) => call("PATCH", "/me/wallet", { listed }),
  match: (id) => call("GET", `/matches/${id}`),
  table: (id) => call("GET", `/tables/${id}`),
  join: (id) => call("POST", `/tables/${id}/join`),
  leave: (id) => call("POST", `/tables/${id}/leave`),
  start: (id) => call("POST", `/tables/${id}/start`),
  answerInvitation: (id, answer) => call("POST", `/tables/${id}/invitation`, { answer }),
  game: (id) => call("GET", `/games/${id}`),
  command: (id, command, version) =>
    call(
      "POST",
      `/games/${id}/commands`,
      { command, expected_version: version },
      { "Idempotency-Key": newKey() },
    ),
  resign: (id) => call("POST", `/games/${id}/resign`),
  replay: (id, at) => call("GET", `/games/${id}/replay${at ? `?at=${at}` : ""}`),
  audit: (id) => call("GET", `/games/${id}/audit`),
  // Rematch (README "Rematch"): propose, answer "accept" or "decline".
  proposeRematch: (id) => call("POST", `/games/${id}/rematch`),
  answerRematch: (id, answer) => call("POST", `/games/${id}/rematch/answer`, { answer }),
  // Table chat (docs/chat.md).
  chat: (id, after = 0) => call("GET", `/games/${id}/chat?after=${after}`),
  sendChat: (id, text, channel) =>
    call("POST", `/games/${id}/chat`, channel ? { text, channel } : { text }),
  reportChat: (id, messageId, reason) =>
    call("POST", `/games/${id}/chat/${messageId}/report`, { reason }),
  mutes: () => call("GET", "/me/mutes"),
  mute: (username) => call("PUT", `/me/mutes/${encodeURIComponent(username)}`),
  unmute: (username) => call("DELETE", `/me/mutes/${encodeURIComponent(username)}`),
  // The matchmaker: a ticket in a room (a party when it names friends), my open one.
  // fields: { room, rules, rated, bots_after (seconds, or null for people only), with }
  createTicket: (fields) => call("POST", "/matchmaking/tickets", fields),
  myTicket: () => call("GET", "/me/matchmaking"),
  ticket: (id) => call("GET", `/matchmaking/tickets/${id}`),
  cancelTicket: (id) => call("DELETE", `/matchmaking/tickets/${id}`),
  joinTicket: (id) => call("POST", `/matchmaking/tickets/${id}/join`),
  declineTicket: (id) => call("POST", `/matchmaking/tickets/${id}/decline`),
  // Friends and blocks: POST /me/friends asks, or accepts their request; DELETE ends a
  // friendship, withdraws a request or declines one.
  friends: () => call("GET", "/me/friends"),
  addFriend: (username) => call("POST", "/me/friends", { username }),
  removeFriend: (username) => call("DELETE", `/me/friends/${encodeURIComponent(username)}`),
  blocks: () => call("GET", "/me/blocks"),
  block: (username) => call("POST", "/me/blocks", { username }),
  unblock: (username) => call("DELETE", `/me/blocks/${encodeURIComponent(username)}`),
  unreadNotifications: () => call("GET", "/me/notifications?unread=true&page_size=50"),
  markRead: (ids) => call("POST", "/me/notifications/read", { ids }),
};

// Every event type of the game stream (an EventSource needs one listener per name). A type
// added later still reaches the page through the `view` frame that follows every batch.
const GAME_EVENTS = [
  "game_started", "round_started", "drew", "took_discard", "melded", "laid_off", "discarded",
  "draw_called", "challenged", "folded", "turn_timed_out", "round_ended", "match_ended",
  "resigned", "aborted", "client_seed_set", "chat", "chat_hidden",
];
const ME_EVENTS = [
  "games", "seated", "table_changed", "match_started", "your_turn", "match_ended", "settled", "unseated",
  "table_closed", "invited", "rematch", "ticket_searching", "matched", "ticket_cancelled",
  "presence", "notification",
];

/**
 * Follow a stream with one-time tickets (an EventSource cannot send the token header).
 * Reconnects with a fresh ticket and ?after=<last seq>, backing off 1, 2, 4 ... 8 s.
 * handlers: onEvent(type, data), onEnd(data), onError(err), onOpen() (each (re)connection:
 * frames without an id, such as chat, are read again from their own list). Returns { close() }.
 */
function follow(ticketPath, streamPath, names, handlers, after = 0) {
  let source = null;
  let closed = false;
  let lastSeq = after;
  let backoff = 1000;
  let timer = null;

  async function open() {
    if (closed) return;
    let ticket;
    try {
      ticket = (await call("POST", ticketPath)).ticket;
    } catch (err) {
      if (handlers.onError) handlers.onError(err);
      if (err instanceof ApiError && err.status >= 400 && err.status < 500) return;
      return retry();
    }
    if (closed) return;
    const query = new URLSearchParams({ ticket });
    if (lastSeq) query.set("after", String(lastSeq));
    source = new EventSource(`${BASE}${streamPath}?${query}`);
    const listen = (name) =>
      source.addEventListener(name, (message) => {
        backoff = 1000;
        let data = null;
        try {
          data = JSON.parse(message.data);
        } catch {
          return;
        }
        if (message.lastEventId && /^\d+$/.test(message.lastEventId)) {
          lastSeq = Math.max(lastSeq, Number(message.lastEventId));
        }
        if (name === "end") {
          closed = true;
          source.close();
          if (handlers.onEnd) handlers.onEnd(data);
          if (data && data.reason === "shutdown") {
            closed = false; // the server process is stopping: reconnect elsewhere
            retry();
          }
          return;
        }
        handlers.onEvent(name, data);
      });
    for (const name of [...names, "view", "end"]) listen(name);
    source.onopen = () => {
      if (handlers.onOpen) handlers.onOpen();
    };
    source.onerror = () => {
      if (source) source.close();
      retry();
    };
  }

  function retry() {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(open, backoff);
    backoff = Math.min(backoff * 2, 8000);
  }

  open();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      if (source) source.close();
    },
  };
}

export function followGame(id, handlers, after = 0) {
  return follow(`/games/${id}/stream-ticket`, `/games/${id}/stream`, GAME_EVENTS, handlers, after);
}

// /me/stream is one connection per page, shared by every screen and panel that follows it
// (an account may hold only a few streams open at once).
const meFollowers = new Set();
let meStream = null;
let meOpen = false;

function meDispatch(name, ...args) {
  for (const follower of [...meFollowers]) {
    const handler = follower[name];
    if (handler) {
      try {
        handler(...args);
      } catch (err) {
        console.error(err); // one follower's failure must not silence the others
      }
    }
  }
}

function openMe() {
  meOpen = false;
  meStream = follow("/me/stream-ticket", "/me/stream", ME_EVENTS, {
    onEvent: (type, data) => meDispatch("onEvent", type, data),
    onOpen: () => {
      meOpen = true;
      meDispatch("onOpen");
    },
    onEnd: (data) => {
      if (!(data && data.reason === "shutdown")) meStream = null;
      meDispatch("onEnd", data);
    },
    onError: (err) => {
      meOpen = false;
      // A refused ticket ends the stream for good: the next follower opens a new one.
      if (err instanceof ApiError && err.status >= 400 && err.status < 500) meStream = null;
      meDispatch("onError", err);
    },
  });
}

/**
 * Follow /me/stream: handlers as follow()'s; onOpen is also called at once for a follower that
 * comes while the shared stream is open (it may have missed frames before). Returns { close() }.
 */
export function followMe(handlers) {
  const follower = { ...handlers };
  meFollowers.add(follower);
  if (!meStream) openMe();
  else if (meOpen && follower.onOpen) {
    queueMicrotask(() => {
      if (meFollowers.has(follower)) follower.onOpen();
    });
  }
  return {
    close() {
      meFollowers.delete(follower);
      if (!meFollowers.size) closeMe();
    },
  };
}

/** Close the shared /me/stream (signing out: its followers belong to the account that left). */
export function closeMe() {
  if (meStream) meStream.close();
  meStream = null;
  meOpen = false;
}
