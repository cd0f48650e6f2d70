// The table: a waiting room until the match starts, then the live game, drawn from the game's
// stream (`view` frames) and the answers to our own commands.

import { api, ApiError, followGame, followMe, session } from "./api.js";
import { cardElement, cardList, cardListName, cardName, cardShort, isRed, sortHand } from "./cards.js";
import { clear, h, say } from "./dom.js";
import { chips } from "./wallet.js";

const WAITING_POLL_MS = 15000; // a safety net: table_changed on /me/stream tells at once

export async function tableScreen(root, route, ctx) {
  const id = route.id;
  const table = await api.table(id);
  if (table.status === "waiting") return waitingRoom(root, id, table, ctx);
  return liveTable(root, id, ctx);
}

// ------------------------------------------------------------------ waiting room

function seatLabel(seat) {
  if (!seat) return "?";
  if (seat.kind === "bot") return `bot (${seat.level || "?"})`;
  if (seat.username) return seat.username;
  return seat.kind === "open" ? "open seat" : seat.kind || "?";
}

function waitingRoom(root, id, first, ctx) {
  const { username } = session();
  const box = h("section", { class: "panel", "aria-labelledby": "waiting-title" });
  root.append(h("h1", { id: "waiting-title" }, "Waiting for players"), box);
  let timer = null;
  let stopped = false;

  const act = (fn) => async () => {
    try {
      await fn();
      await refresh();
    } catch (err) {
      if (err instanceof ApiError && err.code === "insufficient_chips" && err.body.seat != null) {
        const seat = ((current && current.seats) || []).find((s) => s.seat === err.body.seat);
        say(`${seatLabel(seat)} (seat ${err.body.seat + 1}) cannot cover the buy-in of ${
          chips(current.buy_in)}: nothing was taken from anyone.`, true);
      } else ctx.handleError(err);
    }
  };
  let current = first;

  function draw(table) {
    current = table;
    clear(box);
    const seats = table.seats || [];
    const mine = seats.find((s) => s.username === username);
    const hasOpen = seats.some((s) => s.kind === "open");
    // A seat given by name may be an invitation ("pending" until that player accepts).
    const pending = seats.some((s) => s.invitation === "pending");
    const invited = mine && mine.invitation === "pending";
    box.append(
      h("p", {}, "Share this page's address with your friends; they can also join from the lobby."),
      table.buy_in ? h("p", { "data-testid": "table-buy-in" }, `Buy-in: ${chips(table.buy_in)} a ` +
        "seat, moved into the table's escrow at the start; the most anyone can lose.") : null,
      h("ol", { class: "plain", "data-testid": "waiting-seats" },
        seats.map((s) => h("li", {}, `Seat ${Number(s.seat ?? 0) + 1}: ${seatLabel(s)}${
          s.invitation === "pending" ? " (invited, not yet accepted)" : ""}`))),
      h("div", { class: "buttons" },
        !mine && hasOpen ? h("button", { type: "button", "data-testid": "join-table",
          onclick: act(() => api.join(id)) }, "Take the open seat") : null,
        invited ? h("button", { type: "button", "data-testid": "accept-invitation",
          onclick: act(() => api.answerInvitation(id, "accept")) }, "Accept the invitation") : null,
        invited ? h("button", { type: "button", "data-testid": "decline-invitation",
          onclick: act(async () => {
            await api.answerInvitation(id, "decline");
            ctx.go("#/lobby");
          }) }, "Decline") : null,
        mine && !hasOpen && !pending ? h("button", { type: "button", "data-testid": "start-table",
          onclick: act(() => api.start(id)) }, "Start the match") : null,
        mine && !invited ? h("button", { type: "button", onclick: act(async () => {
          await api.leave(id);
          ctx.go("#/lobby");
        }) }, "Leave") : null,
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
          say("This table was closed.");
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

const COMMAND_ORDER = [
  "draw", "take_discard", "call_draw", "challenge", "fold", "meld", "lay_off", "discard",
];

function commandCards(command) {
  if (Array.isArray(command.cards)) return command.cards;
  return command.card ? [command.card] : [];
}

function describeCommand(command, payload) {
  const pile = (payload.view && payload.view.discard_pile) || [];
  const top = pile[pile.length - 1];
  switch (command.type) {
    case "draw":
      return ["Draw from the stock", "Draw from the stock"];
    case "take_discard":
      if (command.meld_id !== undefined && !command.cards) {
        return [`Take ${cardShort(top)} onto meld #${command.meld_id}`,
          `Take the ${cardName(top)} onto meld ${command.meld_id}`];
      }
      return [`Take ${top ? cardShort(top) : "the discard"} with ${cardList(command.cards)}`,
        `Take the ${top ? cardName(top) : "discard"} to meld with ${cardListName(command.cards)}`];
    case "meld":
      return command.hidden
        ? [`Secret set ${cardList(command.cards)}`, `Meld as a secret set: ${cardListName(command.cards)}`]
        : [`Meld ${cardList(command.cards)}`, `Meld ${cardListName(command.cards)}`];
    case "lay_off":
      return [`Lay off ${cardShort(command.card)} on #${command.meld_id}`,
        `Lay off the ${cardName(command.card)} on meld ${command.meld_id}`];
    case "discard":
      return [`Discard ${cardShort(command.card)}`, `Discard the ${cardName(command.card)}`];
    case "call_draw":
      return ["Call Draw", "Call Draw (fight)"];
    case "challenge":
      return ["Challenge", "Challenge the Draw"];
    case "fold":
      return ["Fold", "Fold: do not challenge"];
    default:
      return [command.type, `${command.type} ${JSON.stringify(command)}`];
  }
}

function liveTable(root, id, ctx) {
  const { username } = session();
  const state = { payload: null, offset: 0, selected: new Set(), items: new Map(), busy: false };
  let stream = null;

  const turn = h("div", { class: "turn", "data-testid": "turn-indicator", role: "status",
    "aria-live": "polite" });
  const countdown = h("span", { class: "countdown", "data-testid": "countdown" });
  const opponents = h("section", { class: "opponents", "aria-label": "Opponents" });
  const centre = h("section", { class: "centre", "aria-label": "Stock and discard pile" });
  const melds = h("section", { class: "melds", "aria-label": "Melds on the table" });
  const hand = h("div", { class: "hand", role: "group", "aria-label": "Your hand" });
  const handInfo = h("p", { class: "hand-info" });
  const commands = h("div", { class: "commands", role: "group", "aria-label": "Your moves" });
  const leave = h("div", { class: "leave", role: "group", "aria-label": "Leave the match" });
  const lastRound = h("section", { class: "last-round", "aria-label": "Last round" });
  const result = h("section", { class: "result" });
  // A match played for chips: what the settlement paid, once the worker has settled it.
  const settlement = h("div", { class: "settlement", "data-testid": "settlement",
    role: "status", "aria-live": "polite" });
  const log = h("ol", { class: "log", "data-testid": "event-log", "aria-label": "Event log" });
  const screen = h("div", { class: "table", "data-testid": "table", "data-game": id },
    h("div", { class: "turnbar" }, turn, countdown),
    result,
    opponents,
    centre,
    melds,
    h("section", { class: "mine", "aria-label": "You" },
      h("h2", {}, "Your hand"), handInfo, hand,
      h("h2", {}, "Moves"), commands, leave),
    lastRound,
    h("details", { class: "log-box", open: true },
      h("summary", {}, "Event log"), log),
  );
  root.append(screen);

  const seatName = (seat) => {
    const payload = state.payload;
    if (payload && seat === payload.seat) return "You";
    const entry = payload && (payload.seats || []).find((s) => s.seat === seat);
    if (!entry) return `Seat ${seat + 1}`;
    if (entry.kind === "bot") return `Bot ${seat + 1} (${entry.level || "bot"})`;
    return entry.username || `Seat ${seat + 1}`;
  };

  function serverNow() {
    return Date.now() + state.offset;
  }

  function tick() {
    const payload = state.payload;
    const deadline = payload && payload.turn_deadline && Date.parse(payload.turn_deadline);
    if (!deadline || payload.status !== "active") {
      countdown.textContent = "";
      return;
    }
    const left = Math.max(0, Math.ceil((deadline - serverNow()) / 1000));
    countdown.textContent = `${left} s left`;
    countdown.classList.toggle("urgent", left <= 5);
  }

  function describeEvent(item) {
    const d = item.data || {};
    const who = d.seat !== undefined && d.seat !== null ? seatName(d.seat) : "";
    switch (item.type) {
      case "game_started": return "Match started";
      case "round_started": return `Round ${d.round} dealt (dealer: ${seatName(d.dealer)})`;
      case "drew": return `${who} drew${d.card ? ` ${cardShort(d.card)}` : " from the stock"}`;
      case "took_discard": return `${who} took ${cardShort(d.card)} from the discard pile`;
      case "melded": return d.cards ? `${who} melded ${cardList(d.cards)}` :
        `${who} melded a secret set`;
      case "laid_off": return `${who} laid off ${cardShort(d.card)} on meld #${d.meld_id}`;
      case "discarded": return `${who} discarded ${cardShort(d.card)}`;
      case "draw_called": return `${who} called Draw`;
      case "challenged": return `${who} challenged`;
      case "folded": return `${who} folded`;
      case "turn_timed_out": return `${who}: time ran out`;
      case "round_ended":
        return `Round ${d.round} over: ${d.winner === null || d.winner === undefined ? "no winner" :
          `${seatName(d.winner)} won`} (${d.reason || "?"})`;
      case "match_ended": return `Match over: ${seatName(d.winner)} won`;
      case "resigned": return `${who} resigned`;
      case "aborted": return "The match was aborted";
      case "client_seed_set": return `${who} added a seed to the next shuffle`;
      default: return item.type;
    }
  }

  function addEvents(items) {
    for (const item of items || []) {
      if (!item || typeof item.seq !== "number" || state.items.has(item.seq)) continue;
      state.items.set(item.seq, item);
      const li = h("li", { "data-seq": item.seq, "data-type": item.type },
        h("span", { class: "seq" }, `#${item.seq}`), " ", describeEvent(item));
      // Keep the log in seq order even if a batch arrives out of order.
      const after = [...log.children].find((el) => Number(el.dataset.seq) > item.seq);
      log.insertBefore(li, after || null);
    }
    log.scrollTop = log.scrollHeight;
  }

  function setPayload(payload) {
    if (!payload || !payload.view) return;
    const old = state.payload;
    if (old && old.version > payload.version) return; // an older answer than what we show
    if (payload.server_time) state.offset = Date.parse(payload.server_time) - Date.now();
    state.payload = payload;
    const handCards = new Set(payload.view.hand || []);
    for (const card of [...state.selected]) if (!handCards.has(card)) state.selected.delete(card);
    draw();
  }

  function rememberFocus() {
    const el = document.activeElement;
    if (!el || !screen.contains(el)) return null;
    return { card: el.dataset.card, command: el.dataset.command, inCommands: commands.contains(el),
      testid: el.dataset.testid };
  }

  function restoreFocus(focus) {
    if (!focus) return;
    let el = null;
    if (focus.card) el = hand.querySelector(`[data-card="${focus.card}"]`);
    if (!el && focus.command) {
      el = [...commands.querySelectorAll("button")].find((b) => b.dataset.command === focus.command);
    }
    if (!el && focus.inCommands) el = commands.querySelector("button");
    if (!el && focus.card) el = hand.querySelector("button");
    if (el) el.focus({ preventScroll: true });
  }

  function draw() {
    const payload = state.payload;
    const view = payload.view;
    const focus = rememberFocus();
    screen.dataset.version = payload.version;
    screen.dataset.status = payload.status;

    // Whose turn.
    const mySeat = payload.seat;
    let text;
    if (view.phase === "match_over" || payload.status === "finished") {
      text = view.match_winner !== null && view.match_winner !== undefined
        ? `Match over: ${seatName(view.match_winner)} won` : "Match over";
    } else if (view.phase === "round_over" || view.phase === "dealing") {
      text = "Round over: the next deal comes soon";
    } else if (view.phase === "draw_call" && view.draw_call) {
      text = `${seatName(view.draw_call.caller)} called Draw: ${
        view.turn === mySeat ? "your answer" : `${seatName(view.turn)} answers`}`;
    } else if (view.turn === mySeat) {
      text = "Your turn";
    } else if (view.turn !== null && view.turn !== undefined) {
      text = `${seatName(view.turn)}'s turn`;
    } else text = view.phase || "";
    turn.textContent = text;
    turn.dataset.turn = view.turn ?? "";
    turn.classList.toggle("my-turn", view.turn === mySeat && payload.status === "active");
    tick();

    // Opponents: cards in hand, opened, rounds won, chips.
    clear(opponents);
    for (let seat = 0; seat < 3; seat++) {
      if (seat === mySeat) continue;
      const count = (view.hand_counts || [])[seat];
      opponents.append(h("div", { class: `opponent${view.turn === seat ? " active" : ""}`,
        "data-testid": "opponent", "data-seat": seat },
        h("h2", {}, seatName(seat)),
        h("p", {}, h("span", { "data-testid": "opponent-count" }, `${count ?? "?"} cards`),
          (view.opened || [])[seat] ? " · opened" : ""),
        h("p", {}, `Rounds won ${(view.round_wins || [])[seat] ?? 0} · chips ${
          (view.chips || [])[seat] ?? 0}`),
        view.hands && view.hands[seat] ? h("p", { class: "cards",
          "aria-label": `${seatName(seat)}'s hand` },
        view.hands[seat].map((c) => cardElement(c, "small"))) : null,
      ));
    }

    // Stock and discard pile.
    clear(centre);
    const pile = view.discard_pile || [];
    const top = pile[pile.length - 1];
    centre.append(
      h("div", { class: "stock", "data-testid": "stock-count" },
        h("span", { class: "card back", "aria-hidden": "true" }, "🂠"),
        ` Stock: ${view.stock_count ?? "?"} cards`),
      h("div", { class: "discard", "data-testid": "discard-pile" },
        top ? cardElement(top) : h("span", { class: "card empty" }, "—"),
        ` Discard pile: ${pile.length} card${pile.length === 1 ? "" : "s"}`,
        top ? h("span", { class: "sr-only" }, `, top: ${cardName(top)}`) : null),
      h("p", {}, `Round ${view.round ?? "?"}`),
    );

    // Melds by owner.
    clear(melds).append(h("h2", {}, "Melds"));
    const all = view.melds || [];
    if (!all.length) melds.append(h("p", {}, "None yet."));
    for (let seat = 0; seat < 3; seat++) {
      const own = all.filter((m) => m.owner === seat);
      if (!own.length) continue;
      melds.append(h("div", { class: "meld-row", "data-seat": seat },
        h("span", { class: "owner" }, `${seatName(seat)}: `),
        own.map((m) => h("span", { class: "meld", "data-meld": m.meld_id,
          "aria-label": m.cards ? `Meld ${m.meld_id}: ${cardListName(m.cards)}` :
            `Meld ${m.meld_id}: a secret set of ${m.size} cards` },
        h("span", { class: "meld-id", "aria-hidden": "true" }, `#${m.meld_id}`),
        m.cards ? m.cards.map((c) => cardElement(c, "small")) :
          h("span", { class: "card back small" }, `secret ×${m.size}`)))));
    }

    // My hand, sorted, each card a toggle.
    clear(hand);
    const cards = sortHand(view.hand || []);
    handInfo.textContent = mySeat === null || mySeat === undefined ? "You are watching." :
      `${cards.length} cards · deadwood ${view.deadwood ?? "?"}`;
    handInfo.dataset.testid = "deadwood";
    for (const card of cards) {
      const selected = state.selected.has(card);
      hand.append(h("button", {
        type: "button",
        class: `card ${isRed(card) ? "red" : "black"}${selected ? " selected" : ""}`,
        "data-testid": "hand-card",
        "data-card": card,
        "aria-label": cardName(card),
        "aria-pressed": selected ? "true" : "false",
        onclick: () => {
          if (state.selected.has(card)) state.selected.delete(card);
          else state.selected.add(card);
          draw();
        },
      }, cardShort(card)));
    }

    drawCommands();
    drawLeave();
    drawLastRound();
    drawResult();
    restoreFocus(focus);
  }

  function drawCommands() {
    const payload = state.payload;
    clear(commands);
    const legal = [...(payload.legal_commands || [])];
    // By kind, then in the hand's order (the buttons read like the hand above them).
    const order = sortHand(payload.view.hand || []);
    const place = (c) => Math.min(...commandCards(c).map((card) => {
      const i = order.indexOf(card);
      return i < 0 ? 99 : i;
    }), 99);
    legal.sort((a, b) => COMMAND_ORDER.indexOf(a.type) - COMMAND_ORDER.indexOf(b.type) ||
      place(a) - place(b));
    const chosen = [...state.selected];
    const shown = chosen.length
      ? legal.filter((c) => chosen.every((card) => commandCards(c).includes(card)))
      : legal;
    if (!legal.length) {
      commands.append(h("p", {}, payload.status === "active" ? "Nothing to do: wait for your turn." :
        "The match is over."));
      return;
    }
    if (chosen.length) {
      commands.append(h("p", {},
        `Selected: ${cardList(chosen)}. `,
        h("button", { type: "button", class: "link", "data-testid": "clear-selection",
          onclick: () => { state.selected.clear(); draw(); } }, "Clear selection")));
      if (!shown.length) commands.append(h("p", {}, "No move uses all the selected cards."));
    }
    for (const command of shown) {
      const [label, spoken] = describeCommand(command, payload);
      commands.append(h("button", {
        type: "button",
        class: `command ${command.type}`,
        "data-testid": "legal-command",
        "data-command": JSON.stringify(command),
        "aria-label": spoken,
        disabled: state.busy,
        onclick: () => send(command),
      }, label));
    }
  }

  function drawLastRound() {
    const last = state.payload.view.last_round;
    clear(lastRound);
    if (!last) return;
    const seats = [0, 1, 2];
    lastRound.append(
      h("h2", {}, `Last round (${last.round ?? "?"})`),
      h("p", { "data-testid": "last-round" },
        last.winner === null || last.winner === undefined ? "No winner" :
          `${seatName(last.winner)} won`, ` (${last.reason || "?"}).`),
      h("table", {},
        h("thead", {}, h("tr", {}, h("th", {}, "Player"), h("th", {}, "Deadwood"),
          h("th", {}, "Payout"))),
        h("tbody", {}, seats.map((s) => h("tr", {},
          h("td", {}, seatName(s)),
          h("td", {}, `${(last.deadwood || [])[s] ?? "?"}${(last.burned || [])[s] ? " (burned)" : ""}`),
          h("td", {}, `${(last.payouts || [])[s] ?? 0}`))))),
    );
  }

  function drawResult() {
    const payload = state.payload;
    const view = payload.view;
    clear(result);
    if (payload.status !== "finished" && view.phase !== "match_over") return;
    const seats = [0, 1, 2];
    result.append(h("div", { class: "panel result-box", "data-testid": "match-result",
      "data-winner": view.match_winner ?? "" },
    h("h2", {}, view.match_winner === payload.seat ? "You won the match!" :
      `${seatName(view.match_winner)} won the match`),
    h("table", {},
      h("thead", {}, h("tr", {}, h("th", {}, "Player"), h("th", {}, "Rounds won"),
        h("th", {}, "Chips"))),
      h("tbody", {}, seats.map((s) => h("tr", {},
        h("td", {}, seatName(s)),
        h("td", {}, `${(view.round_wins || [])[s] ?? 0}`),
        h("td", {}, `${(view.chips || [])[s] ?? 0}`))))),
    payload.settled === undefined ? null :
      h("p", {}, payload.settled ? "Result recorded." : "Recording the result…"),
    view.buy_in ? settlement : null,
    h("p", { class: "buttons" },
      h("a", { href: `#/replay/${id}?at=1`, class: "button", "data-testid": "open-replay" },
        "Replay"),
      h("a", { href: `#/audit/${id}`, class: "button", "data-testid": "open-audit" }, "Audit"),
      h("a", { href: "#/lobby", class: "button" }, "Lobby"))));
    if (view.buy_in && !settlement.textContent) {
      settlement.textContent = `Settling the table stakes (${chips(view.buy_in)} a seat)…`;
    }
  }

  // The settlement of a match played for chips (GET /matches/{id}), once the stream says the
  // match is settled: what each seat was paid, what the rules said, whether the cap applied.
  async function showSettlement() {
    const view = state.payload && state.payload.view;
    if (!view || !view.buy_in || settlement.dataset.settled) return;
    const paid = (await api.match(id)).settlement;
    if (!paid || !paid.settled) return;
    const got = paid.paid[state.payload.seat];
    clear(settlement).append(
      h("h3", {}, "Table stakes"),
      h("p", {}, `Buy-in ${chips(paid.buy_in)} a seat. ${got >= 0 ? "You won" : "You lost"} ${
        chips(Math.abs(got))}: ${chips(paid.buy_in + got)} back to your wallet.`),
      paid.capped ? h("p", {}, "A loser owed more than their buy-in: the winners shared " +
        "what it held, in proportion to what they were owed.") : null,
      h("ul", { class: "plain" }, paid.paid.map((p, s) => h("li", {}, `${seatName(s)}: ${
        p > 0 ? "+" : ""}${p} (the rules said ${paid.owed[s] > 0 ? "+" : ""}${paid.owed[s]})`))));
    settlement.dataset.settled = "true";
    settlement.dataset.paid = String(got);
    await ctx.refreshBalance();
  }

  // Resigning takes two presses (no modal dialog): the server then plays the seat to the end.
  function drawLeave() {
    clear(leave);
    const payload = state.payload;
    if (payload.status !== "active" || state.resigned) return;
    if (!state.confirmResign) {
      leave.append(h("button", { type: "button", class: "link", "data-testid": "resign",
        onclick: () => { state.confirmResign = true; drawLeave(); } }, "Resign this match"));
      return;
    }
    leave.append(
      h("p", {}, "Resign? The server plays your seat to the end, and you are placed last. "),
      h("button", { type: "button", "data-testid": "resign-confirm", onclick: resign },
        "Yes, resign"),
      h("button", { type: "button", class: "link",
        onclick: () => { state.confirmResign = false; drawLeave(); } }, "Keep playing"),
    );
  }

  async function resign() {
    try {
      const body = await api.resign(id);
      state.resigned = true;
      addEvents(body.events);
      setPayload(body.game);
      say("You resigned: the server plays your seat to the end.");
    } catch (err) {
      if (err instanceof ApiError && err.code === "already_resigned") state.resigned = true;
      else ctx.handleError(err);
      drawLeave();
    }
  }

  async function send(command) {
    if (state.busy) return;
    state.busy = true;
    drawCommands();
    try {
      const body = await api.command(id, command, state.payload.version);
      addEvents(body.events);
      state.selected.clear();
      state.busy = false;
      setPayload(body.game);
    } catch (err) {
      state.busy = false;
      if (err instanceof ApiError && err.code === "stale_version") {
        say("The table moved on: here is where it is now.");
        setPayload(await api.game(id));
      } else {
        ctx.handleError(err);
        draw();
      }
    }
  }

  const timer = setInterval(tick, 250);

  (async () => {
    setPayload(await api.game(id));
    stream = followGame(id, {
      onEvent: (type, data) => {
        if (type === "view") setPayload(data);
        else addEvents([data]);
      },
      onEnd: (data) => {
        if (state.payload && state.payload.status !== "finished") {
          api.game(id).then(setPayload).catch(ctx.handleError);
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
  };
}
