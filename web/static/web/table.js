// The table: a waiting room until the match starts, then the live game, drawn from the game's
// stream (`view` frames) and the answers to our own commands.

import { api, ApiError, followGame, followMe, session } from "./api.js";
import { clear, h, keepFocus, say } from "./dom.js";
import { formatNumber, t } from "./i18n.js";
import {
  addEvents, applyCommandAnswer, applyPayload, clearSelection, createState, isFinished, seatLabel,
  toggleCard,
} from "./live-state.js";
import {
  appendEvents, buildTable, renderAll, renderCommands, renderCountdown, renderLeave,
  renderOpponents, renderSettlement,
} from "./live-view.js";
import { person } from "./people.js";
import { createMenus, personMenu } from "./person-menu.js";
import { chips } from "./wallet.js";
import { startChat } from "./chat.js";
import { startRematch } from "./rematch.js";

const WAITING_POLL_MS = 15000; // a safety net: table_changed on /me/stream tells at once

export async function tableScreen(root, route, ctx) {
  const id = route.id;
  const table = await api.table(id);
  if (table.status === "waiting") return waitingRoom(root, id, table, ctx);
  return liveTable(root, id, table, ctx);
}

// ------------------------------------------------------------------ waiting room

/** A waiting room's seat: the person (avatar and names, and a menu on another person), a bot's
 * level, or an open seat. */
function seatLine(seat, menu) {
  const number = formatNumber(Number(seat.seat ?? 0) + 1);
  const pending = seat.invitation === "pending";
  if (seat.username || seat.display_name) {
    return [t("Seat {n}:", { n: number }), " ", person(seat),
      pending ? [" ", t("(invited, not yet accepted)")] : null, menu ? [" ", menu] : null];
  }
  if (seat.kind === "open") return t("Seat {n}: open seat", { n: number });
  return t("Seat {n}: {who}", { n: number, who: seatLabel(seat, seat.seat) });
}

function waitingRoom(root, id, first, ctx) {
  const { username } = session();
  const box = h("section", { class: "panel", "aria-labelledby": "waiting-title" });
  root.append(h("h1", { id: "waiting-title" }, t("Waiting for players")), box);
  let timer = null;
  let stopped = false;

  const act = (fn) => async () => {
    try {
      await fn();
      await refresh();
    } catch (err) {
      if (err instanceof ApiError && err.code === "insufficient_chips" && err.body.seat != null) {
        const seat = ((current && current.seats) || []).find((s) => s.seat === err.body.seat);
        say(t("{name} (seat {n}) cannot cover the buy-in of {chips}: nothing was taken from " +
          "anyone.", { name: seat ? seatLabel(seat, seat.seat) : "?",
          n: formatNumber(err.body.seat + 1), chips: chips(current.buy_in) }), true);
      } else ctx.handleError(err);
    }
  };
  let current = first;
  const menus = createMenus(() => draw(current), ctx);

  function draw(table) {
    current = table;
    keepFocus(box, () => drawSeats(table));
  }

  function drawSeats(table) {
    clear(box);
    const seats = table.seats || [];
    const mine = seats.find((s) => s.username === username);
    const hasOpen = seats.some((s) => s.kind === "open");
    // A seat given by name may be an invitation ("pending" until that player accepts).
    const pending = seats.some((s) => s.invitation === "pending");
    const invited = mine && mine.invitation === "pending";
    box.append(
      h("p", {}, t("Share this page's address with your friends; they can also join from the " +
        "lobby.")),
      table.buy_in ? h("p", { "data-testid": "table-buy-in" }, t("Buy-in: {chips} a seat, " +
        "moved into the table's escrow at the start; the most anyone can lose.",
      { chips: chips(table.buy_in) })) : null,
      h("ol", { class: "plain", "data-testid": "waiting-seats" },
        seats.map((s) => h("li", { "data-seat": s.seat }, seatLine(s,
          s.username === username ? null : personMenu(menus, `seat-${s.seat}`, s,
            { onBlocked: () => refresh().catch(() => {}) }))))),
      h("div", { class: "buttons" },
        !mine && hasOpen ? h("button", { type: "button", "data-testid": "join-table",
          onclick: act(() => api.join(id)) }, t("Take the open seat")) : null,
        invited ? h("button", { type: "button", "data-testid": "accept-invitation",
          onclick: act(() => api.answerInvitation(id, "accept")) }, t("Accept the invitation")) :
          null,
        invited ? h("button", { type: "button", "data-testid": "decline-invitation",
          onclick: act(async () => {
            await api.answerInvitation(id, "decline");
            ctx.go("#/lobby");
          }) }, t("Decline")) : null,
        mine && !hasOpen && !pending ? h("button", { type: "button", "data-testid": "start-table",
          onclick: act(() => api.start(id)) }, t("Start the match")) : null,
        mine && !invited ? h("button", { type: "button", onclick: act(async () => {
          await api.leave(id);
          ctx.go("#/lobby");
        }) }, t("Leave")) : null,
      ),
    );
  }

  async function refresh() {
    if (stopped) return;
    const table = await api.table(id);
    if (stopped) return;
    if (table.status !== "waiting") {
      stopped = true;
      clearTimeout(timer);
      ctx.go(`#/table/${id}`);
      return;
    }
    draw(table);
  }

  function poll() {
    timer = setTimeout(async () => {
      try {
        await refresh();
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) {
          say(t("This table was closed."));
          stopped = true;
          return;
        }
      }
      if (!stopped) poll();
    }, WAITING_POLL_MS);
  }

  draw(first);
  poll(); // a slow safety net only: the player's own stream tells of every change
  // Seats taken or left, invitations answered (table_changed) and the start (match_started):
  // at once, from the player's own stream.
  const notices = followMe({
    onEvent: (type, data) => {
      if (data && data.game_id === id && type !== "games") refresh().catch(() => {});
    },
  });
  return () => {
    stopped = true;
    clearTimeout(timer);
    notices.close();
  };
}

// ------------------------------------------------------------------ live table

// The controller: the state (live-state.js) changes only here, on a stream frame, a command's
// answer or a click, and the renderers (live-view.js) then redraw what it touched. The chat
// (chat.js) and, once the match is over, the rematch (rematch.js) are controllers of their own.
// A reader without a seat (a spectator, or staff) sees the table read-only.
function liveTable(root, id, table, ctx) {
  const state = createState(id);
  state.table = table;
  const parts = buildTable(id);
  const chat = startChat(id, ctx);
  let rematch = null;
  let stream = null;
  parts.side.append(chat.el);
  root.append(parts.screen);

  const actions = {
    toggleCard(card) {
      toggleCard(state, card);
      draw();
    },
    clearSelection() {
      clearSelection(state);
      draw();
    },
    send: (command) => send(command),
    askResign() {
      state.confirmResign = true;
      renderLeave(parts.leave, state, actions);
    },
    keepPlaying() {
      state.confirmResign = false;
      renderLeave(parts.leave, state, actions);
    },
    resign: () => resign(),
    // A person's seat menu: add them as a friend, or block them (their chat lines go too).
    menus: createMenus(() => renderOpponents(parts.opponents, state, actions), ctx),
    blocked: (entry) => chat.forget(entry.username),
  };

  function draw() {
    renderAll(parts, state, actions);
    const seated = state.payload.seat !== null && state.payload.seat !== undefined;
    if (!rematch && seated && isFinished(state)) rematch = startRematch(parts.rematch, id, ctx);
  }

  function takePayload(payload) {
    if (applyPayload(state, payload)) draw();
  }

  function takeEvents(items) {
    appendEvents(parts.log, state, addEvents(state, items));
  }

  // The settlement of a match played for chips (GET /matches/{id}), once the stream says the
  // match is settled: what each seat was paid, what the rules said, whether the cap applied.
  async function showSettlement() {
    const view = state.payload && state.payload.view;
    if (!view || !view.buy_in || state.settlement) return;
    const paid = (await api.match(id)).settlement;
    if (!paid || !paid.settled) return;
    state.settlement = paid;
    renderSettlement(parts.settlement, state);
    await ctx.refreshBalance();
  }

  async function resign() {
    try {
      const body = await api.resign(id);
      state.resigned = true;
      takeEvents(body.events);
      takePayload(body.game);
      say(t("You resigned: the server plays your seat to the end."));
    } catch (err) {
      if (err instanceof ApiError && err.code === "already_resigned") state.resigned = true;
      else ctx.handleError(err);
      renderLeave(parts.leave, state, actions);
    }
  }

  async function send(command) {
    if (state.busy) return;
    state.busy = true;
    renderCommands(parts.commands, state, actions);
    try {
      const body = await api.command(id, command, state.payload.version);
      const { added, taken } = applyCommandAnswer(state, body);
      appendEvents(parts.log, state, added);
      if (taken) draw();
    } catch (err) {
      state.busy = false;
      if (err instanceof ApiError && err.code === "stale_version") {
        say(t("The table moved on: here is where it is now."));
        takePayload(await api.game(id));
      } else {
        ctx.handleError(err);
        draw();
      }
    }
  }

  const timer = setInterval(() => {
    if (state.payload) renderCountdown(parts.countdown, state);
  }, 250);

  (async () => {
    takePayload(await api.game(id));
    chat.load();
    stream = followGame(id, {
      onOpen: () => chat.load(), // chat frames have no id: what came meanwhile is listed
      onEvent: (type, data) => {
        if (type === "view") takePayload(data);
        else if (type === "chat" || type === "chat_hidden") chat.take(type, data);
        else takeEvents([data]);
      },
      onEnd: (data) => {
        chat.poll();
        if (state.payload && state.payload.status !== "finished") {
          api.game(id).then(takePayload).catch(ctx.handleError);
        }
        if (data && data.reason === "settled") {
          const settle = () => showSettlement().catch(ctx.handleError);
          if (state.payload) settle();
          else setTimeout(settle, 500);
        }
      },
      onError: (err) => {
        if (err instanceof ApiError) ctx.handleError(err);
      },
    });
  })().catch(ctx.handleError);

  return () => {
    clearInterval(timer);
    if (stream) stream.close();
    chat.close();
    if (rematch) rematch.close();
  };
}
