// The rematch part of a match's result: the proposal, each person's answer, the buttons for
// what the player may do now. Clicks go to the `actions` of rematch.js; nothing here changes
// the state.

import { clear, h } from "./dom.js";
import { t } from "./i18n.js";
import { shownName } from "./people.js";

function answerText(answer, name, you) {
  switch (answer) {
    case "accepted": return you ? t("You: accepted") : t("{name}: accepted", { name });
    case "declined": return you ? t("You: declined") : t("{name}: declined", { name });
    case "pending": return you ? t("You: not yet answered") :
      t("{name}: not yet answered", { name });
    default: return `${you ? t("You") : name}: ${answer}`;
  }
}

function statusText(rematch) {
  switch (rematch.status) {
    case "open": return rematch.proposed_by ?
      t("{name} proposed a rematch.", { name: rematch.proposed_by }) :
      t("Someone proposed a rematch.");
    case "started": return t("Everyone accepted: the rematch starts.");
    case "declined": return t("The rematch was declined.");
    case "lapsed": return t("The rematch proposal lapsed: not everyone answered in time.");
    default: return rematch.status;
  }
}

export function renderRematch(el, state, actions) {
  const rematch = state.rematch;
  clear(el);
  el.dataset.status = rematch ? rematch.status : "none";
  el.append(h("h3", {}, t("Rematch")));
  if (!rematch) {
    if (!state.loaded) return;
    el.append(
      h("p", {}, t("Play the same table again: the same seats, rules and stakes.")),
      h("button", { type: "button", "data-testid": "propose-rematch", disabled: state.busy,
        onclick: actions.propose }, t("Rematch")));
    return;
  }
  const mine = (rematch.answers || []).find((a) => a.username === state.me);
  el.append(
    h("p", { "data-testid": "rematch-status" }, statusText(rematch)),
    h("ul", { class: "plain", "aria-label": t("Answers") }, (rematch.answers || []).map((a) =>
      h("li", { "data-testid": "rematch-answer", "data-username": a.username,
        "data-answer": a.answer },
      answerText(a.answer, shownName(a), a.username === state.me)))));
  if (rematch.status === "open" && mine && mine.answer === "pending") {
    el.append(h("p", { class: "buttons" },
      h("button", { type: "button", "data-testid": "accept-rematch", disabled: state.busy,
        onclick: actions.accept }, t("Accept the rematch")),
      h("button", { type: "button", class: "secondary", "data-testid": "decline-rematch",
        disabled: state.busy, onclick: actions.decline }, t("Decline"))));
  } else if (rematch.status === "open") {
    el.append(h("p", {}, t("Waiting for the others' answers…")));
  }
  if (rematch.next_game_id) {
    el.append(h("p", {}, h("a", { href: `#/table/${rematch.next_game_id}`, class: "button",
      "data-testid": "rematch-table" }, t("To the new table"))));
  }
}
