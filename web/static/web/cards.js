// Cards as the API writes them ("7H", "TD", "AS") and as people read them.

import { t } from "./i18n.js";

const RANKS = "A23456789TJQK";
const SUITS = "CDHS";
// Read when spoken (the page's language may change after this module loads).
const RANK_NAMES = {
  // Translators: a card's rank, said by a screen reader ("ace of spades").
  A: () => t("ace"),
  T: () => "10",
  // Translators: a card's rank, said by a screen reader ("jack of hearts").
  J: () => t("jack"),
  // Translators: a card's rank, said by a screen reader ("queen of clubs").
  Q: () => t("queen"),
  // Translators: a card's rank, said by a screen reader ("king of diamonds").
  K: () => t("king"),
};
const SUIT_NAMES = {
  // Translators: a card's suit, said by a screen reader ("7 of clubs").
  C: () => t("clubs"),
  // Translators: a card's suit, said by a screen reader ("7 of diamonds").
  D: () => t("diamonds"),
  // Translators: a card's suit, said by a screen reader ("7 of hearts").
  H: () => t("hearts"),
  // Translators: a card's suit, said by a screen reader ("7 of spades").
  S: () => t("spades"),
};
const rankName = (rank) => (RANK_NAMES[rank] ? RANK_NAMES[rank]() : rank);
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
  const suitName = SUIT_NAMES[suit] ? SUIT_NAMES[suit]() : suit;
  // Translators: a card as a screen reader says it: {rank} is "7" or "ace", {suit} "hearts".
  return t("{rank} of {suit}", { rank: rankName(rank), suit: suitName });
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
  return printed === rankName(rank) ? name : `${printed}, ${name}`;
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
