// The live table's data, apart from the page: the last `view` payload, the clock offset to the
// server, the event log received so far, the player's selection and the pending questions
// (a command in flight, the resign confirmation, the settlement). No DOM here: each function
// applies one thing that happened (a stream frame, a command's answer, a click) or derives
// what the renderers show, so that the drawing code only reads.

import { cardList, cardListName, cardName, cardShort, sortHand } from "./cards.js";

/** A new table's state: nothing received yet. */
export function createState(id) {
  return {
    id,
    payload: null, // the last accepted GET /games/{id} body or `view` frame
    offset: 0, // server clock minus ours, in ms (the turn deadline is the server's)
    selected: new Set(), // hand cards the player picked to filter the moves
    events: new Map(), // seq -> event item, every one received (stream or answers)
    busy: false, // a command is in flight: its buttons are disabled
    confirmResign: false, // the resign question is open
    resigned: false,
    settlement: null, // GET /matches/{id}'s settlement once the match is settled
  };
}

/**
 * Take a payload (a `view` frame, a command's `game`, GET /games/{id}) unless it is older than
 * the one shown; drops the selected cards that left the hand. True when it was taken.
 */
export function applyPayload(state, payload) {
  if (!payload || !payload.view) return false;
  const old = state.payload;
  if (old && old.version > payload.version) return false; // an older answer than what we show
  if (payload.server_time) state.offset = Date.parse(payload.server_time) - Date.now();
  state.payload = payload;
  const handCards = new Set(payload.view.hand || []);
  for (const card of [...state.selected]) if (!handCards.has(card)) state.selected.delete(card);
  return true;
}

/** Remember new event items (by seq, once each); returns the ones not seen before. */
export function addEvents(state, items) {
  const added = [];
  for (const item of items || []) {
    if (!item || typeof item.seq !== "number" || state.events.has(item.seq)) continue;
    state.events.set(item.seq, item);
    added.push(item);
  }
  return added;
}

/** A command's answer: its events, then the game after it (the selection is spent). */
export function applyCommandAnswer(state, body) {
  const added = addEvents(state, body.events);
  state.selected.clear();
  state.busy = false;
  return { added, taken: applyPayload(state, body.game) };
}

export function toggleCard(state, card) {
  if (state.selected.has(card)) state.selected.delete(card);
  else state.selected.add(card);
}

export function clearSelection(state) {
  state.selected.clear();
}

export function mySeat(state) {
  return state.payload ? state.payload.seat : null;
}

export function isActive(state) {
  return Boolean(state.payload) && state.payload.status === "active";
}

export function isFinished(state) {
  const payload = state.payload;
  return Boolean(payload) && (payload.status === "finished" || payload.view.phase === "match_over");
}

export function seatName(state, seat) {
  const payload = state.payload;
  if (payload && seat === payload.seat) return "You";
  const entry = payload && (payload.seats || []).find((s) => s.seat === seat);
  if (!entry) return `Seat ${seat + 1}`;
  if (entry.kind === "bot") return `Bot ${seat + 1} (${entry.level || "bot"})`;
  return entry.username || `Seat ${seat + 1}`;
}

/** Whole seconds left on the turn by the server's clock; null when no turn is timed. */
export function secondsLeft(state, now = Date.now()) {
  const payload = state.payload;
  const deadline = payload && payload.turn_deadline && Date.parse(payload.turn_deadline);
  if (!deadline || payload.status !== "active") return null;
  return Math.max(0, Math.ceil((deadline - (now + state.offset)) / 1000));
}

/** Whose turn it is, in words. */
export function turnText(state) {
  const payload = state.payload;
  const view = payload.view;
  const me = payload.seat;
  if (view.phase === "match_over" || payload.status === "finished") {
    return view.match_winner !== null && view.match_winner !== undefined
      ? `Match over: ${seatName(state, view.match_winner)} won` : "Match over";
  }
  if (view.phase === "round_over" || view.phase === "dealing") {
    return "Round over: the next deal comes soon";
  }
  if (view.phase === "draw_call" && view.draw_call) {
    return `${seatName(state, view.draw_call.caller)} called Draw: ${
      view.turn === me ? "your answer" : `${seatName(state, view.turn)} answers`}`;
  }
  if (view.turn === me) return "Your turn";
  if (view.turn !== null && view.turn !== undefined) return `${seatName(state, view.turn)}'s turn`;
  return view.phase || "";
}

export function isMyTurn(state) {
  const payload = state.payload;
  return payload.view.turn === payload.seat && payload.status === "active";
}

export function describeEvent(state, item) {
  const d = item.data || {};
  const name = (seat) => seatName(state, seat);
  const who = d.seat !== undefined && d.seat !== null ? name(d.seat) : "";
  switch (item.type) {
    case "game_started": return "Match started";
    case "round_started": return `Round ${d.round} dealt (dealer: ${name(d.dealer)})`;
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
        `${name(d.winner)} won`} (${d.reason || "?"})`;
    case "match_ended": return `Match over: ${name(d.winner)} won`;
    case "resigned": return `${who} resigned`;
    case "aborted": return "The match was aborted";
    case "client_seed_set": return `${who} added a seed to the next shuffle`;
    default: return item.type;
  }
}

// ------------------------------------------------------------------ the moves

const COMMAND_ORDER = [
  "draw", "take_discard", "call_draw", "challenge", "fold", "meld", "lay_off", "discard",
];

export function commandCards(command) {
  if (Array.isArray(command.cards)) return command.cards;
  return command.card ? [command.card] : [];
}

/**
 * The legal commands, by kind and then in the hand's order (the buttons read like the hand
 * above them), and those of them that use every selected card.
 */
export function moves(state) {
  const payload = state.payload;
  const legal = [...(payload.legal_commands || [])];
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
  return { legal, chosen, shown };
}

/**
 * A command's button: [the visible label, its accessible name]. The name starts with the label
 * (what a voice-control user reads off the screen and says), then says the cards in words.
 */
export function describeCommand(state, command) {
  const pile = (state.payload.view && state.payload.view.discard_pile) || [];
  const top = pile[pile.length - 1];
  const named = (label, words) => [label, words ? `${label}: ${words}` : label];
  switch (command.type) {
    case "draw":
      return named("Draw from the stock");
    case "take_discard":
      if (command.meld_id !== undefined && !command.cards) {
        return named(`Take ${cardShort(top)} onto meld #${command.meld_id}`,
          `the ${cardName(top)} onto meld ${command.meld_id}`);
      }
      return named(`Take ${top ? cardShort(top) : "the discard"} with ${cardList(command.cards)}`,
        `the ${top ? cardName(top) : "discard"}, to meld with ${cardListName(command.cards)}`);
    case "meld":
      return command.hidden
        ? named(`Secret set ${cardList(command.cards)}`,
          `${cardListName(command.cards)}, melded face down`)
        : named(`Meld ${cardList(command.cards)}`, cardListName(command.cards));
    case "lay_off":
      return named(`Lay off ${cardShort(command.card)} on #${command.meld_id}`,
        `the ${cardName(command.card)} on meld ${command.meld_id}`);
    case "discard":
      return named(`Discard ${cardShort(command.card)}`, `the ${cardName(command.card)}`);
    case "call_draw":
      return ["Call Draw", "Call Draw (fight)"];
    case "challenge":
      return ["Challenge", "Challenge the Draw"];
    case "fold":
      return ["Fold", "Fold: do not challenge"];
    default:
      return named(command.type, JSON.stringify(command));
  }
}
