// The live table's drawing: the page's parts, built once, and one renderer for each part that
// reads the state (live-state.js) and redraws that part only. Clicks go to the `actions` the
// controller (table.js) passes in; nothing here changes the state.

import { cardElement, cardLabel, cardList, cardListName, cardName, cardShort, isRed, sortHand }
  from "./cards.js";
import { clear, h } from "./dom.js";
import { formatNumber, t, tn } from "./i18n.js";
import {
  describeCommand, describeEvent, isActive, isFinished, isMyTurn, moves, roundReason, seatEntry,
  seatName, secondsLeft, turnText,
} from "./live-state.js";
import { person } from "./people.js";
import { personMenu } from "./person-menu.js";
import { chips } from "./wallet.js";

const SEATS = [0, 1, 2];

/** The table's elements, empty until the first payload; `screen` goes into the page. */
export function buildTable(id) {
  const parts = {
    title: h("h1", { class: "table-title" }, t("The table")),
    turn: h("div", { class: "turn", "data-testid": "turn-indicator", role: "status",
      "aria-live": "polite" }),
    countdown: h("span", { class: "countdown", "data-testid": "countdown" }),
    opponents: h("section", { class: "opponents", "aria-label": t("Opponents") }),
    centre: h("section", { class: "centre", "aria-label": t("Stock and discard pile") }),
    melds: h("section", { class: "melds", "aria-label": t("Melds on the table") }),
    hand: h("div", { class: "hand", role: "group", "aria-label": t("Your hand"),
      "data-testid": "hand" }),
    handInfo: h("p", { class: "hand-info" }),
    commands: h("div", { class: "commands", role: "group", "aria-label": t("Your moves") }),
    leave: h("div", { class: "leave", role: "group", "aria-label": t("Leave the match") }),
    lastRound: h("section", { class: "last-round", "aria-label": t("Last round") }),
    result: h("section", { class: "result" }),
    // A match played for chips: what the settlement paid, once the worker has settled it.
    settlement: h("div", { class: "settlement", "data-testid": "settlement",
      role: "status", "aria-live": "polite" }),
    // A finished match's rematch (rematch-view.js draws it), kept across redraws of the result.
    rematch: h("div", { class: "rematch", "data-testid": "rematch", "aria-live": "polite" }),
    // A reader without a seat: what they watch, and how far behind.
    watching: h("p", { class: "watching", "data-testid": "spectator-banner", hidden: true }),
    // Focusable, so that a keyboard can scroll the log once it outgrows its box.
    log: h("ol", { class: "log", "data-testid": "event-log", "aria-label": t("Event log"),
      tabindex: "0" }),
  };
  parts.mine = h("section", { class: "mine", "aria-label": t("You") },
    h("h2", {}, t("Your hand")), parts.handInfo, parts.hand,
    h("h2", {}, t("Moves")), parts.commands, parts.leave);
  // The event log and the table chat (chat.js puts its panel in).
  parts.side = h("div", { class: "side" },
    h("details", { class: "log-box", open: true },
      h("summary", {}, t("Event log")), parts.log));
  parts.screen = h("div", { class: "table", "data-testid": "table", "data-game": id },
    h("div", { class: "turnbar" }, parts.title, parts.turn, parts.countdown),
    parts.watching,
    parts.result,
    parts.opponents,
    parts.centre,
    parts.melds,
    parts.mine,
    parts.lastRound,
    parts.side,
  );
  return parts;
}

/** Everything from the state, keeping the keyboard focus on the same card or move. */
export function renderAll(parts, state, actions) {
  const payload = state.payload;
  const focus = rememberFocus(parts);
  parts.screen.dataset.version = payload.version;
  parts.screen.dataset.status = payload.status;
  renderWatching(parts, state);
  renderTurn(parts, state);
  renderOpponents(parts.opponents, state, actions);
  renderCentre(parts.centre, state);
  renderMelds(parts.melds, state);
  renderHand(parts, state, actions);
  renderCommands(parts.commands, state, actions);
  renderLeave(parts.leave, state, actions);
  renderLastRound(parts.lastRound, state);
  renderResult(parts, state);
  restoreFocus(parts, focus);
}

function watching(state) {
  return state.payload.seat === null || state.payload.seat === undefined;
}

/** A spectator's table is read-only: no hand, no moves; a line says so (and the delay). */
export function renderWatching(parts, state) {
  const on = watching(state);
  parts.screen.dataset.spectator = on ? "true" : "false";
  parts.mine.hidden = on;
  parts.watching.hidden = !on;
  parts.opponents.setAttribute("aria-label", on ? t("Players") : t("Opponents"));
  if (!on) return;
  const delay = (state.table && state.table.spectator_delay) || 0;
  parts.watching.textContent = delay && isActive(state) ?
    tn("You are watching: read-only, no hand shown, {n} event behind the players.",
      "You are watching: read-only, no hand shown, {n} events behind the players.", delay) :
    t("You are watching: read-only, no hand shown.");
}

export function renderCountdown(el, state) {
  const left = secondsLeft(state);
  if (left === null) {
    el.textContent = "";
    return;
  }
  el.textContent = tn("{n} s left", "{n} s left", left);
  el.classList.toggle("urgent", left <= 5);
}

export function renderTurn(parts, state) {
  const view = state.payload.view;
  parts.title.textContent = view.round !== null && view.round !== undefined
    ? t("Round {round}", { round: formatNumber(view.round) }) : t("The table");
  parts.turn.textContent = turnText(state);
  parts.turn.dataset.turn = view.turn ?? "";
  parts.turn.classList.toggle("my-turn", isMyTurn(state));
  renderCountdown(parts.countdown, state);
}

/** A seat as a heading or a table cell shows it: a person's avatar and names, else words. */
export function seatPerson(state, seat) {
  const entry = seatEntry(state, seat);
  const mine = seat === state.payload.seat;
  if (entry && entry.kind !== "bot" && (entry.username || entry.display_name)) {
    return person(entry, mine ? t("You") : null);
  }
  return seatName(state, seat);
}

/** Opponents: cards in hand, opened, rounds won, chips; their hands once revealed; a menu on
 * each person (add as a friend, block) when `actions.menus` is given. */
export function renderOpponents(el, state, actions = {}) {
  const view = state.payload.view;
  clear(el);
  for (const seat of SEATS) {
    if (seat === state.payload.seat) continue;
    const count = (view.hand_counts || [])[seat];
    const cards = count === null || count === undefined ? t("? cards") :
      tn("{n} card", "{n} cards", count);
    el.append(h("div", { class: `opponent${view.turn === seat ? " active" : ""}`,
      "data-testid": "opponent", "data-seat": seat },
    h("div", { class: "seat-head" }, h("h2", {}, seatPerson(state, seat)),
      actions.menus ? personMenu(actions.menus, `seat-${seat}`, seatEntry(state, seat),
        { onBlocked: actions.blocked }) : null),
    h("p", {}, h("span", { "data-testid": "opponent-count" }, cards),
      (view.opened || [])[seat] ? [" · ", t("opened")] : ""),
    h("p", {}, t("Rounds won {wins} · chips {chips}", {
      wins: formatNumber((view.round_wins || [])[seat] ?? 0),
      chips: formatNumber((view.chips || [])[seat] ?? 0) })),
    view.hands && view.hands[seat] ? h("div", { class: "cards", role: "group",
      "aria-label": t("{name}'s hand", { name: seatName(state, seat) }) },
    view.hands[seat].map((c) => cardElement(c, "small"))) : null,
    ));
  }
}

export function renderCentre(el, state) {
  const view = state.payload.view;
  const pile = view.discard_pile || [];
  const top = pile[pile.length - 1];
  const stock = view.stock_count;
  clear(el).append(
    h("div", { class: "stock", "data-testid": "stock-count" },
      h("span", { class: "card back", "aria-hidden": "true" }, "🂠"), " ",
      stock === null || stock === undefined ? t("Stock: ? cards") :
        tn("Stock: {n} card", "Stock: {n} cards", stock)),
    h("div", { class: "discard", "data-testid": "discard-pile" },
      top ? cardElement(top) : h("span", { class: "card empty" }, "—"), " ",
      tn("Discard pile: {n} card", "Discard pile: {n} cards", pile.length),
      top ? h("span", { class: "sr-only" }, " ", t("The top card: {card}.",
        { card: cardName(top) })) : null),
  );
}

/** Melds by owner; each meld one image to a screen reader, its cards in its name. */
export function renderMelds(el, state) {
  const all = state.payload.view.melds || [];
  clear(el).append(h("h2", {}, t("Melds")));
  if (!all.length) el.append(h("p", {}, t("None yet.")));
  for (const seat of SEATS) {
    const own = all.filter((m) => m.owner === seat);
    if (!own.length) continue;
    el.append(h("div", { class: "meld-row", "data-seat": seat },
      h("span", { class: "owner" }, seatPerson(state, seat)), " ",
      own.map((m) => h("span", { class: "meld", "data-meld": m.meld_id, role: "img",
        "aria-label": m.cards ?
          t("Meld {meld}: {cards}", { meld: m.meld_id, cards: cardListName(m.cards) }) :
          tn("Meld {meld}: a secret set of {n} card", "Meld {meld}: a secret set of {n} cards",
            m.size, { meld: m.meld_id }) },
      h("span", { class: "meld-id", "aria-hidden": "true" }, `#${m.meld_id}`),
      m.cards ? m.cards.map((c) => cardElement(c, "small")) :
        h("span", { class: "card back small" }, t("secret ×{n}", { n: m.size }))))));
  }
}

/** My hand, sorted, each card a toggle of the selection. */
export function renderHand(parts, state, actions) {
  const view = state.payload.view;
  const cards = sortHand(view.hand || []);
  const seat = state.payload.seat;
  parts.handInfo.textContent = seat === null || seat === undefined ? t("You are watching.") :
    tn("{n} card · deadwood {deadwood}", "{n} cards · deadwood {deadwood}", cards.length,
      { deadwood: view.deadwood ?? "?" });
  parts.handInfo.dataset.testid = "deadwood";
  clear(parts.hand);
  for (const card of cards) {
    const selected = state.selected.has(card);
    parts.hand.append(h("button", {
      type: "button",
      class: `card ${isRed(card) ? "red" : "black"}${selected ? " selected" : ""}`,
      "data-testid": "hand-card",
      "data-card": card,
      "aria-label": cardLabel(card),
      "aria-pressed": selected ? "true" : "false",
      onclick: () => actions.toggleCard(card),
    }, cardShort(card)));
  }
}

/** The legal moves (those using every selected card), disabled while one is in flight. */
export function renderCommands(el, state, actions) {
  clear(el);
  const { legal, chosen, shown } = moves(state);
  if (!legal.length) {
    el.append(h("p", {}, isActive(state) ? t("Nothing to do: wait for your turn.") :
      t("The match is over.")));
    return;
  }
  if (chosen.length) {
    el.append(h("p", {},
      t("Selected: {cards}.", { cards: cardList(chosen) }), " ",
      h("button", { type: "button", class: "link", "data-testid": "clear-selection",
        onclick: actions.clearSelection }, t("Clear selection"))));
    if (!shown.length) el.append(h("p", {}, t("No move uses all the selected cards.")));
  }
  for (const command of shown) {
    const [label, name] = describeCommand(state, command);
    el.append(h("button", {
      type: "button",
      class: `command ${command.type}`,
      "data-testid": "legal-command",
      "data-command": JSON.stringify(command),
      "aria-label": name === label ? null : name,
      disabled: state.busy,
      onclick: () => actions.send(command),
    }, label));
  }
}

// Resigning takes two presses (no modal dialog): the server then plays the seat to the end.
export function renderLeave(el, state, actions) {
  clear(el);
  if (!isActive(state) || state.resigned || watching(state)) return;
  if (!state.confirmResign) {
    el.append(h("button", { type: "button", class: "link", "data-testid": "resign",
      onclick: actions.askResign }, t("Resign this match")));
    return;
  }
  el.append(
    h("p", {}, t("Resign? The server plays your seat to the end, and you are placed last.")),
    h("button", { type: "button", "data-testid": "resign-confirm", onclick: actions.resign },
      t("Yes, resign")),
    h("button", { type: "button", class: "link", onclick: actions.keepPlaying },
      t("Keep playing")),
  );
}

export function renderLastRound(el, state) {
  const last = state.payload.view.last_round;
  clear(el);
  if (!last) return;
  const reason = roundReason(last.reason);
  const deadwood = (s) => {
    const points = (last.deadwood || [])[s];
    const text = points === null || points === undefined ? "?" : formatNumber(points);
    return (last.burned || [])[s] ? t("{points} (burned)", { points: text }) : text;
  };
  el.append(
    h("h2", {}, t("Last round ({round})", { round: last.round ?? "?" })),
    h("p", { "data-testid": "last-round" },
      last.winner === null || last.winner === undefined ? t("No winner ({reason}).", { reason }) :
        t("{name} won ({reason}).", { name: seatName(state, last.winner), reason })),
    h("table", {},
      h("thead", {}, h("tr", {}, h("th", {}, t("Player")), h("th", {}, t("Deadwood")),
        h("th", {}, t("Payout")))),
      h("tbody", {}, SEATS.map((s) => h("tr", {},
        h("td", {}, seatPerson(state, s)),
        h("td", {}, deadwood(s)),
        h("td", {}, formatNumber((last.payouts || [])[s] ?? 0)))))),
  );
}

/** The match's result once it is over: the standings, the settlement, where to go next. */
export function renderResult(parts, state) {
  const payload = state.payload;
  const view = payload.view;
  const { result, settlement } = parts;
  clear(result);
  if (!isFinished(state)) return;
  result.append(h("div", { class: "panel result-box", "data-testid": "match-result",
    "data-winner": view.match_winner ?? "" },
  h("h2", {}, view.match_winner === payload.seat ? t("You won the match!") :
    t("{name} won the match", { name: seatName(state, view.match_winner) })),
  h("table", {},
    h("thead", {}, h("tr", {}, h("th", {}, t("Player")), h("th", {}, t("Rounds won")),
      h("th", {}, t("Chips")))),
    h("tbody", {}, SEATS.map((s) => h("tr", {},
      h("td", {}, seatPerson(state, s)),
      h("td", {}, formatNumber((view.round_wins || [])[s] ?? 0)),
      h("td", {}, formatNumber((view.chips || [])[s] ?? 0)))))),
  payload.settled === undefined ? null :
    h("p", {}, payload.settled ? t("Result recorded.") : t("Recording the result…")),
  view.buy_in ? settlement : null,
  watching(state) ? null : parts.rematch,
  h("p", { class: "buttons" },
    h("a", { href: `#/replay/${state.id}?at=1`, class: "button", "data-testid": "open-replay" },
      t("Replay")),
    h("a", { href: `#/audit/${state.id}`, class: "button", "data-testid": "open-audit" },
      t("Audit")),
    h("a", { href: "#/lobby", class: "button" }, t("Lobby")))));
  if (view.buy_in && !settlement.textContent) {
    settlement.textContent = t("Settling the table stakes ({chips} a seat)…",
      { chips: chips(view.buy_in) });
  }
}

/** What the settlement of a match played for chips paid each seat (state.settlement). */
export function renderSettlement(el, state) {
  const paid = state.settlement;
  const got = paid.paid[state.payload.seat];
  const signed = (n) => formatNumber(n, { signDisplay: "exceptZero" });
  const back = chips(paid.buy_in + got);
  clear(el).append(
    h("h3", {}, t("Table stakes")),
    h("p", {}, got >= 0 ?
      t("Buy-in {buy_in} a seat. You won {chips}: {back} back to your wallet.",
        { buy_in: chips(paid.buy_in), chips: chips(got), back }) :
      t("Buy-in {buy_in} a seat. You lost {chips}: {back} back to your wallet.",
        { buy_in: chips(paid.buy_in), chips: chips(-got), back })),
    paid.capped ? h("p", {}, t("A loser owed more than their buy-in: the winners shared " +
      "what it held, in proportion to what they were owed.")) : null,
    h("ul", { class: "plain" }, paid.paid.map((p, s) => h("li", {},
      t("{name}: {paid} (the rules said {owed})", { name: seatName(state, s), paid: signed(p),
        owed: signed(paid.owed[s]) })))));
  el.dataset.settled = "true";
  el.dataset.paid = String(got);
}

/** New log lines, each in seq order even if a batch arrived out of order; scrolled to the end. */
export function appendEvents(log, state, items) {
  for (const item of items) {
    const li = h("li", { "data-seq": item.seq, "data-type": item.type },
      h("span", { class: "seq" }, `#${item.seq}`), " ", describeEvent(state, item));
    const after = [...log.children].find((el) => Number(el.dataset.seq) > item.seq);
    log.insertBefore(li, after || null);
  }
  log.scrollTop = log.scrollHeight;
}

function rememberFocus(parts) {
  const el = document.activeElement;
  if (!el || !parts.screen.contains(el)) return null;
  return { card: el.dataset.card, command: el.dataset.command,
    inCommands: parts.commands.contains(el), testid: el.dataset.testid,
    key: el.dataset.focusKey };
}

function restoreFocus(parts, focus) {
  if (!focus) return;
  const { hand, commands } = parts;
  let el = null;
  if (focus.key) el = parts.screen.querySelector(`[data-focus-key="${CSS.escape(focus.key)}"]`);
  if (!el && focus.card) el = hand.querySelector(`[data-card="${focus.card}"]`);
  if (!el && focus.command) {
    el = [...commands.querySelectorAll("button")].find((b) => b.dataset.command === focus.command);
  }
  if (!el && focus.inCommands) el = commands.querySelector("button");
  if (!el && focus.card) el = hand.querySelector("button");
  if (el) el.focus({ preventScroll: true });
}
