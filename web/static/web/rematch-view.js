// The rematch part of a match's result: the proposal, each person's answer, the buttons for
// what the player may do now. Clicks go to the `actions` of rematch.js; nothing here changes
// the state.

import { clear, h } from "./dom.js";

const ANSWERS = { accepted: "accepted", declined: "declined", pending: "not yet answered" };

function statusText(rematch) {
  switch (rematch.status) {
    case "open": return `${rematch.proposed_by || "Someone"} proposed a rematch.`;
    case "started": return "Everyone accepted: the rematch starts.";
    case "declined": return "The rematch was declined.";
    case "lapsed": return "The rematch proposal lapsed: not everyone answered in time.";
    default: return rematch.status;
  }
}

export function renderRematch(el, state, actions) {
  const rematch = state.rematch;
  clear(el);
  el.dataset.status = rematch ? rematch.status : "none";
  el.append(h("h3", {}, "Rematch"));
  if (!rematch) {
    if (!state.loaded) return;
    el.append(
      h("p", {}, "Play the same table again: the same seats, rules and stakes."),
      h("button", { type: "button", "data-testid": "propose-rematch", disabled: state.busy,
        onclick: actions.propose }, "Rematch"));
    return;
  }
  const mine = (rematch.answers || []).find((a) => a.username === state.me);
  el.append(
    h("p", { "data-testid": "rematch-status" }, statusText(rematch)),
    h("ul", { class: "plain", "aria-label": "Answers" }, (rematch.answers || []).map((a) =>
      h("li", { "data-testid": "rematch-answer", "data-username": a.username,
        "data-answer": a.answer },
      `${a.username === state.me ? "You" : a.username}: ${ANSWERS[a.answer] || a.answer}`))));
  if (rematch.status === "open" && mine && mine.answer === "pending") {
    el.append(h("p", { class: "buttons" },
      h("button", { type: "button", "data-testid": "accept-rematch", disabled: state.busy,
        onclick: actions.accept }, "Accept the rematch"),
      h("button", { type: "button", class: "secondary", "data-testid": "decline-rematch",
        disabled: state.busy, onclick: actions.decline }, "Decline")));
  } else if (rematch.status === "open") {
    el.append(h("p", {}, "Waiting for the others' answers…"));
  }
  if (rematch.next_game_id) {
    el.append(h("p", {}, h("a", { href: `#/table/${rematch.next_game_id}`, class: "button",
      "data-testid": "rematch-table" }, "To the new table")));
  }
}
