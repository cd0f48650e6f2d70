// Cards as the API writes them ("7H", "TD", "AS") and as people read them.

const RANKS = "A23456789TJQK";
const SUITS = "CDHS";
const RANK_NAMES = {
  A: "ace", T: "10", J: "jack", Q: "queen", K: "king",
};
const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const SUIT_SYMBOLS = { C: "♣", D: "♦", H: "♥", S: "♠" };

function parts(code) {
  const text = String(code);
  const suit = text.slice(-1);
  let rank = text.slice(0, -1);
  if (rank === "10") rank = "T";
  return { rank, suit };
}

/** "7 of hearts", "ace of spades": what a screen reader says. */
export function cardName(code) {
  const { rank, suit } = parts(code);
  return `${RANK_NAMES[rank] || rank} of ${SUIT_NAMES[suit] || suit}`;
}

/** "7♥", "10♦": what the eye reads. */
export function cardShort(code) {
  const { rank, suit } = parts(code);
  return `${rank === "T" ? "10" : rank}${SUIT_SYMBOLS[suit] || suit}`;
}

/**
 * The accessible name of a control that shows the card as cardShort does: it contains the rank
 * as printed ("A", "J", "7"), so a voice-control user can say what they see: "7 of hearts",
 * "A, ace of spades".
 */
export function cardLabel(code) {
  const { rank } = parts(code);
  const printed = rank === "T" ? "10" : rank;
  const name = cardName(code);
  return printed === (RANK_NAMES[rank] || rank) ? name : `${printed}, ${name}`;
}

export function isRed(code) {
  const { suit } = parts(code);
  return suit === "H" || suit === "D";
}

/** Sorted by suit, then rank (runs read left to right). */
export function sortHand(cards) {
  const key = (code) => {
    const { rank, suit } = parts(code);
    return SUITS.indexOf(suit) * 20 + RANKS.indexOf(rank);
  };
  return [...cards].sort((a, b) => key(a) - key(b));
}

/** A card as a DOM element (not interactive). */
export function cardElement(code, extraClass = "") {
  const span = document.createElement("span");
  span.className = `card ${isRed(code) ? "red" : "black"} ${extraClass}`.trim();
  span.textContent = cardShort(code);
  span.setAttribute("role", "img");
  span.setAttribute("aria-label", cardName(code));
  span.dataset.card = code;
  return span;
}

export function cardList(codes) {
  return (codes || []).map(cardShort).join(" ");
}

export function cardListName(codes) {
  return (codes || []).map(cardName).join(", ");
}
