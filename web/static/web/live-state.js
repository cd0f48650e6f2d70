// The live table's data, apart from the page: the last `view` payload, the clock offset to the
// server, the event log received so far, the player's selection and the pending questions
// (a command in flight, the resign confirmation, the settlement). No DOM here: each function
// applies one thing that happened (a stream frame, a command's answer, a click) or derives
// what the renderers show, so that the drawing code only reads.

import { cardList, cardListName, cardName, cardShort, sortHand } from "./cards.js";
import { formatNumber, t } from "./i18n.js";

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

/** A seat's entry in the payload ({seat, kind, username, display_name, avatar, level}). */
export function seatEntry(state, seat) {
  const payload = state.payload;
  return (payload && (payload.seats || []).find((s) => s.seat === seat)) || null;
}

/** A seat in words: "You", a person's display name, "Bot 2 (easy)", else "Seat 2". */
export function seatName(state, seat) {
  const payload = state.payload;
  if (payload && seat === payload.seat) return t("You");
  return seatLabel(seatEntry(state, seat), seat);
}

/** A seat of a table or a game in words, without knowing whose page it is. */
export function seatLabel(entry, seat) {
  const number = formatNumber(Number(seat ?? (entry && entry.seat) ?? 0) + 1);
  if (!entry) return t("Seat {n}", { n: number });
  if (entry.kind === "bot") {
    return t("Bot {n} ({level})", { n: number, level: botLevel(entry.level) });
  }
  return entry.display_name || entry.username || t("Seat {n}", { n: number });
}

/** A bot level's name (easy, normal, hard; one the client does not know as sent). */
export function botLevel(level) {
  switch (level) {
    // Translators: a bot's level of play.
    case "easy": return t("easy");
    // Translators: a bot's level of play.
    case "normal": return t("normal");
    // Translators: a bot's level of play.
    case "hard": return t("hard");
    default: return String(level || t("bot"));
  }
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
    if (view.match_winner === null || view.match_winner === undefined) return t("Match over");
    return view.match_winner === me ? t("Match over: you won") :
      t("Match over: {name} won", { name: seatName(state, view.match_winner) });
  }
  if (view.phase === "round_over" || view.phase === "dealing") {
    return t("Round over: the next deal comes soon");
  }
  if (view.phase === "draw_call" && view.draw_call) {
    const caller = seatName(state, view.draw_call.caller);
    return view.turn === me ? t("{caller} called Draw: your answer", { caller }) :
      t("{caller} called Draw: {name} answers", { caller, name: seatName(state, view.turn) });
  }
  if (view.turn === me) return t("Your turn");
  if (view.turn !== null && view.turn !== undefined) {
    return t("{name}'s turn", { name: seatName(state, view.turn) });
  }
  return view.phase || "";
}

export function isMyTurn(state) {
  const payload = state.payload;
  return payload.view.turn === payload.seat && payload.status === "active";
}

/** Why a round ended, in words (a reason the client does not know is shown as sent). */
export function roundReason(reason) {
  switch (reason) {
    // Translators: why a round ended: a player went out with no card left (Tongits).
    case "tongits": return t("Tongits");
    // Translators: why a round ended: the stock ran out.
    case "stock_out": return t("the stock ran out");
    // Translators: why a round ended: a Draw was called and settled.
    case "draw": return t("Draw");
    // Translators: why a round ended: the round reached its most turns.
    case "turn_cap": return t("the turn limit was reached");
    default: return String(reason || "?");
  }
}

export function describeEvent(state, item) {
  const d = item.data || {};
  const name = (seat) => seatName(state, seat);
  const who = d.seat !== undefined && d.seat !== null ? name(d.seat) : "";
  const round = formatNumber(d.round ?? 0);
  switch (item.type) {
    case "game_started": return t("Match started");
    case "round_started": return t("Round {round} dealt (dealer: {dealer})",
      { round, dealer: name(d.dealer) });
    case "drew": return d.card ? t("{name} drew {card}", { name: who, card: cardShort(d.card) }) :
      t("{name} drew from the stock", { name: who });
    case "took_discard": return t("{name} took {card} from the discard pile",
      { name: who, card: cardShort(d.card) });
    case "melded": return d.cards ? t("{name} melded {cards}", { name: who,
      cards: cardList(d.cards) }) : t("{name} melded a secret set", { name: who });
    case "laid_off": return t("{name} laid off {card} on meld #{meld}",
      { name: who, card: cardShort(d.card), meld: d.meld_id });
    case "discarded": return t("{name} discarded {card}", { name: who, card: cardShort(d.card) });
    case "draw_called": return t("{name} called Draw", { name: who });
    case "challenged": return t("{name} challenged", { name: who });
    case "folded": return t("{name} folded", { name: who });
    case "turn_timed_out": return t("{name}: time ran out", { name: who });
    case "round_ended":
      return d.winner === null || d.winner === undefined ?
        t("Round {round} over: no winner ({reason})", { round, reason: roundReason(d.reason) }) :
        t("Round {round} over: {name} won ({reason})", { round, name: name(d.winner),
          reason: roundReason(d.reason) });
    case "match_ended": return t("Match over: {name} won", { name: name(d.winner) });
    case "resigned": return t("{name} resigned", { name: who });
    case "aborted": return t("The match was aborted");
    case "client_seed_set": return t("{name} added a seed to the next shuffle", { name: who });
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
  const cards = command.cards ? cardList(command.cards) : "";
  const cardNames = command.cards ? cardListName(command.cards) : "";
  const meld = command.meld_id;
  // Each pair: a move's button, and its name to screen readers, which starts with the button's
  // words so that a voice-control user can say what they see.
  switch (command.type) {
    case "draw":
      return [t("Draw from the stock"), t("Draw from the stock")];
    case "take_discard":
      if (meld !== undefined && !command.cards) {
        return [t("Take {card} onto meld #{meld}", { card: cardShort(top), meld }),
          // Translators: the button's name to screen readers; it starts with its visible words.
          t("Take {card} onto meld #{meld}: the {name} onto meld {meld}",
            { card: cardShort(top), meld, name: cardName(top) })];
      }
      if (!top) {
        return [t("Take the discard with {cards}", { cards }),
          // Translators: the button's name to screen readers; it starts with its visible words.
          t("Take the discard with {cards}: to meld with {names}", { cards, names: cardNames })];
      }
      return [t("Take {card} with {cards}", { card: cardShort(top), cards }),
        // Translators: the button's name to screen readers; it starts with its visible words.
        t("Take {card} with {cards}: the {name}, to meld with {names}",
          { card: cardShort(top), cards, name: cardName(top), names: cardNames })];
    case "meld":
      return command.hidden ?
        [t("Secret set {cards}", { cards }),
          // Translators: the button's name to screen readers; it starts with its visible words.
          t("Secret set {cards}: {names}, melded face down", { cards, names: cardNames })] :
        [t("Meld {cards}", { cards }),
          // Translators: the button's name to screen readers; it starts with its visible words.
          t("Meld {cards}: {names}", { cards, names: cardNames })];
    case "lay_off":
      return [t("Lay off {card} on #{meld}", { card: cardShort(command.card), meld }),
        // Translators: the button's name to screen readers; it starts with its visible words.
        t("Lay off {card} on #{meld}: the {name} on meld {meld}",
          { card: cardShort(command.card), meld, name: cardName(command.card) })];
    case "discard":
      return [t("Discard {card}", { card: cardShort(command.card) }),
        // Translators: the button's name to screen readers; it starts with its visible words.
        t("Discard {card}: the {name}", { card: cardShort(command.card),
          name: cardName(command.card) })];
    case "call_draw":
      return [t("Call Draw"),
        // Translators: the button's name to screen readers; it starts with its visible words.
        t("Call Draw (fight)")];
    case "challenge":
      return [t("Challenge"),
        // Translators: the button's name to screen readers; it starts with its visible words.
        t("Challenge the Draw")];
    case "fold":
      return [t("Fold"),
        // Translators: the button's name to screen readers; it starts with its visible words.
        t("Fold: do not challenge")];
    default:
      return [command.type, `${command.type}: ${JSON.stringify(command)}`];
  }
}
