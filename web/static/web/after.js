// After a match: the replay (a step slider over GET /games/{id}/replay?at=N) and the audit.

import { api } from "./api.js";
import { cardElement } from "./cards.js";
import { clear, h } from "./dom.js";
import { formatList, formatNumber, t, tn } from "./i18n.js";
import { seatLabel } from "./live-state.js";

function seatName(payload, seat) {
  const entry = ((payload && payload.seats) || []).find((s) => s.seat === seat);
  return seatLabel(entry, seat);
}

function nav(id) {
  return h("p", { class: "buttons" },
    h("a", { href: `#/table/${id}`, class: "button" }, t("Back to the table")),
    h("a", { href: `#/replay/${id}?at=1`, class: "button" }, t("Replay")),
    h("a", { href: `#/audit/${id}`, class: "button" }, t("Audit")),
    h("a", { href: "#/lobby", class: "button" }, t("Lobby")));
}

// The phases of a round, as the replay names them (one the client does not know as sent).
function phaseName(phase) {
  switch (phase) {
    // Translators: a phase of a round: the cards are being dealt.
    case "dealing": return t("dealing");
    // Translators: a phase of a round: a turn that starts with a draw.
    case "start": return t("a turn starts");
    // Translators: a phase of a round: a turn under way (melds, lay-offs, the discard).
    case "play": return t("playing");
    case "draw_call": return t("answering a Draw");
    case "round_over": return t("round over");
    case "match_over": return t("match over");
    case "aborted": return t("aborted");
    default: return String(phase || "");
  }
}

export async function replayScreen(root, route, ctx) {
  const id = route.id;
  const game = await api.game(id); // seat names
  let at = Number(route.params.get("at")) || 1;
  const first = await api.replay(id, at);
  const version = first.version;
  const slider = h("input", { type: "range", id: "replay-step", min: 1, max: version, value: first.at,
    "data-testid": "replay-step", "aria-label": t("Step of the replay") });
  const stepText = h("output", { for: "replay-step", "data-testid": "replay-at" });
  // The arrows point back and forth in the reading direction (mirrored right to left).
  const prev = h("button", { type: "button", class: "step-arrow",
    "aria-label": t("Previous step") }, "◀");
  const next = h("button", { type: "button", class: "step-arrow",
    "aria-label": t("Next step") }, "▶");
  const board = h("div", { class: "replay-board", "data-testid": "replay-view" });
  root.append(h("h1", {}, t("Replay")), nav(id),
    h("div", { class: "panel" }, h("label", { for: "replay-step" }, t("Step")),
      h("div", { class: "stepper" }, prev, slider, next), stepText),
    board);

  let pending = 0;
  async function show(step) {
    at = Math.min(Math.max(1, step), version);
    slider.value = at;
    history.replaceState(null, "", `#/replay/${id}?at=${at}`);
    const mine = ++pending;
    const body = await api.replay(id, at);
    if (mine !== pending) return;
    drawStep(body);
  }

  function drawStep(body) {
    const view = body.view || {};
    const where = { at: formatNumber(body.at), of: formatNumber(body.version),
      round: view.round ?? "?", phase: phaseName(view.phase) };
    stepText.textContent = view.turn !== null && view.turn !== undefined ?
      t("Event {at} of {of}: round {round}, {phase}, {name} to act",
        { ...where, name: seatName(game, view.turn) }) :
      t("Event {at} of {of}: round {round}, {phase}", where);
    board.dataset.at = body.at;
    clear(board);
    const hands = view.hands || [];
    for (let seat = 0; seat < 3; seat++) {
      const cards = hands[seat] || (seat === body.seat ? view.hand : null);
      board.append(h("div", { class: "panel" },
        h("h2", {}, seatName(game, seat)),
        // A named group (a paragraph may not carry a name): each card says its own.
        cards ? h("div", { class: "cards", role: "group",
          "aria-label": t("{name}'s hand", { name: seatName(game, seat) }) },
        cards.map((c) => cardElement(c, "small"))) :
          h("p", {}, (view.hand_counts || [])[seat] === undefined ? t("? cards") :
            tn("{n} card", "{n} cards", view.hand_counts[seat]))));
    }
    const pile = view.discard_pile || [];
    board.append(h("div", { class: "panel" },
      h("p", {}, t("Stock: {stock} · discard pile: {pile}", {
        stock: view.stock_count ?? "?", pile: formatNumber(pile.length) })),
      pile.length ? h("p", {}, t("Top card:"), " ", cardElement(pile[pile.length - 1])) : null,
      h("p", {}, t("Melds: {count}", { count: formatNumber((view.melds || []).length) })),
      (view.melds || []).map((m) => h("p", {},
        t("#{meld} ({name}):", { meld: m.meld_id, name: seatName(game, m.owner) }), " ",
        h("span", { class: "cards" }, (m.cards || []).map((c) => cardElement(c, "small")))))));
  }

  slider.addEventListener("input", () => show(Number(slider.value)).catch(ctx.handleError));
  prev.addEventListener("click", () => show(at - 1).catch(ctx.handleError));
  next.addEventListener("click", () => show(at + 1).catch(ctx.handleError));
  drawStep(first);
  history.replaceState(null, "", `#/replay/${id}?at=${first.at}`);
}

/**
 * The verdict: the server's own `sound` when it gives one, else sound when every boolean
 * `*_ok` check passed; `failure` ({seq, check, reason}) names the first bad seq.
 */
export function verdictOf(audit) {
  const a = audit || {};
  const failed = Object.entries(a)
    .filter(([key, value]) => key.endsWith("_ok") && value === false)
    .map(([key]) => key);
  const failure = a.failure && typeof a.failure === "object" ? a.failure : null;
  const broken = failure && failure.seq != null ? failure.seq : a.first_broken_seq;
  const sound = typeof a.sound === "boolean"
    ? a.sound
    : !failed.length && !failure && (broken === null || broken === undefined);
  return { sound, failed, broken, failure };
}

export async function auditScreen(root, route) {
  const id = route.id;
  const audit = await api.audit(id);
  const { sound, failed, broken, failure } = verdictOf(audit);
  const checked = [
    audit.chain_ok ? t("hash chain") : null,
    audit.legal_ok ? t("every move's legality") : null,
    audit.commitments_ok ? t("every deal's commitment") : null,
    audit.seal_ok ? t("the server's seal") : null,
    audit.snapshot_ok ? t("the snapshot against a fold from zero") : null,
  ].filter(Boolean);
  // Apart from the tn() below: a t() nested in another call's arguments is not extracted.
  const noneFailed = t("no check failed");
  const rounds = audit.rounds || [];
  const hasBroken = broken !== null && broken !== undefined;
  const where = !hasBroken ? null : failure && failure.check && failure.reason ?
    t("It fails at seq {seq} ({check}: {reason}).", { seq: broken, check: failure.check,
      reason: failure.reason }) :
    failure && failure.check ? t("It fails at seq {seq} ({check}).", { seq: broken,
      check: failure.check }) : t("It fails at seq {seq}.", { seq: broken });
  root.append(
    h("h1", {}, t("Audit")),
    nav(id),
    h("div", { class: `panel verdict ${sound ? "sound" : "broken"}`, "data-testid": "audit-verdict",
      "data-sound": sound ? "true" : "false", role: "status" },
    h("h2", {}, sound ? t("✔ Sound") : t("✘ Not sound")),
    h("p", {}, sound ?
      tn("{n} event checked: {checks}.", "{n} events checked: {checks}.", audit.version || 0,
        { checks: checked.length ? formatList(checked) : noneFailed }) :
      [where, where && failed.length ? " " : null,
        failed.length ? t("Failed: {checks}.", { checks: formatList(failed) }) : null]),
    hasBroken ? h("p", {},
      h("a", { href: `#/replay/${id}?at=${broken}`, "data-testid": "audit-failed-step" },
        t("See the game at seq {seq}", { seq: broken }))) : null),
    h("div", { class: "panel" },
      h("h2", {}, t("Deals")),
      h("table", {},
        h("thead", {}, h("tr", {}, h("th", {}, t("Round")), h("th", {}, t("Seq")),
          h("th", {}, t("Commitment")), h("th", {}, t("Checked")))),
        h("tbody", {}, rounds.map((r) => h("tr", {},
          h("td", {}, `${r.round ?? "?"}`),
          h("td", {}, `${r.seq ?? "?"}`),
          h("td", { class: "mono" }, String(r.deck_commitment || "").slice(0, 16) + "…"),
          h("td", {}, r.commitment_ok ? t("✔ yes") : t("✘ no"))))))),
  );
}
