// After a match: the replay (a step slider over GET /games/{id}/replay?at=N) and the audit.

import { api } from "./api.js";
import { cardElement } from "./cards.js";
import { clear, h } from "./dom.js";

function seatName(payload, seat) {
  const entry = ((payload && payload.seats) || []).find((s) => s.seat === seat);
  if (!entry) return `Seat ${seat + 1}`;
  if (entry.kind === "bot") return `Bot ${seat + 1} (${entry.level || "bot"})`;
  return entry.username || `Seat ${seat + 1}`;
}

function nav(id) {
  return h("p", { class: "buttons" },
    h("a", { href: `#/table/${id}`, class: "button" }, "Back to the table"),
    h("a", { href: `#/replay/${id}?at=1`, class: "button" }, "Replay"),
    h("a", { href: `#/audit/${id}`, class: "button" }, "Audit"),
    h("a", { href: "#/lobby", class: "button" }, "Lobby"));
}

export async function replayScreen(root, route, ctx) {
  const id = route.id;
  const game = await api.game(id); // seat names
  let at = Number(route.params.get("at")) || 1;
  const first = await api.replay(id, at);
  const version = first.version;
  const slider = h("input", { type: "range", id: "replay-step", min: 1, max: version, value: first.at,
    "data-testid": "replay-step", "aria-label": "Step of the replay" });
  const stepText = h("output", { for: "replay-step", "data-testid": "replay-at" });
  const prev = h("button", { type: "button", "aria-label": "Previous step" }, "◀");
  const next = h("button", { type: "button", "aria-label": "Next step" }, "▶");
  const board = h("div", { class: "replay-board", "data-testid": "replay-view" });
  root.append(h("h1", {}, "Replay"), nav(id),
    h("div", { class: "panel" }, h("label", { for: "replay-step" }, "Step"),
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
    stepText.textContent = `Event ${body.at} of ${body.version}: round ${view.round ?? "?"}, ${
      view.phase || ""}${view.turn !== null && view.turn !== undefined ?
      `, ${seatName(game, view.turn)} to act` : ""}`;
    board.dataset.at = body.at;
    clear(board);
    const hands = view.hands || [];
    for (let seat = 0; seat < 3; seat++) {
      const cards = hands[seat] || (seat === body.seat ? view.hand : null);
      board.append(h("div", { class: "panel" },
        h("h2", {}, seatName(game, seat)),
        // A named group (a paragraph may not carry a name): each card says its own.
        cards ? h("div", { class: "cards", role: "group",
          "aria-label": `${seatName(game, seat)}'s hand` }, cards.map((c) => cardElement(c, "small"))) :
          h("p", {}, `${(view.hand_counts || [])[seat] ?? "?"} cards`)));
    }
    const pile = view.discard_pile || [];
    board.append(h("div", { class: "panel" },
      h("p", {}, `Stock: ${view.stock_count ?? "?"} · discard pile: ${pile.length}`),
      pile.length ? h("p", {}, "Top: ", cardElement(pile[pile.length - 1])) : null,
      h("p", {}, `Melds: ${(view.melds || []).length}`),
      (view.melds || []).map((m) => h("p", { class: "cards" }, `#${m.meld_id} (${
        seatName(game, m.owner)}): `, (m.cards || []).map((c) => cardElement(c, "small"))))));
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
    audit.chain_ok ? "hash chain" : null,
    audit.legal_ok ? "every move's legality" : null,
    audit.commitments_ok ? "every deal's commitment" : null,
    audit.seal_ok ? "the server's seal" : null,
    audit.snapshot_ok ? "the snapshot against a fold from zero" : null,
  ].filter(Boolean);
  const rounds = audit.rounds || [];
  root.append(
    h("h1", {}, "Audit"),
    nav(id),
    h("div", { class: `panel verdict ${sound ? "sound" : "broken"}`, "data-testid": "audit-verdict",
      "data-sound": sound ? "true" : "false", role: "status" },
    h("h2", {}, sound ? "✔ Sound" : "✘ Not sound"),
    h("p", {}, sound
      ? `${audit.version} events checked: ${checked.join(", ") || "no check failed"}.`
      : `${broken !== null && broken !== undefined ? `It fails at seq ${broken}${
        failure && failure.check ? ` (${failure.check}${failure.reason ? `: ${failure.reason}` :
          ""})` : ""}. ` : ""}${failed.length ? `Failed: ${failed.join(", ")}.` : ""}`),
    broken !== null && broken !== undefined ? h("p", {},
      h("a", { href: `#/replay/${id}?at=${broken}`, "data-testid": "audit-failed-step" },
        `See the game at seq ${broken}`)) : null),
    h("div", { class: "panel" },
      h("h2", {}, "Deals"),
      h("table", {},
        h("thead", {}, h("tr", {}, h("th", {}, "Round"), h("th", {}, "Seq"),
          h("th", {}, "Commitment"), h("th", {}, "Checked"))),
        h("tbody", {}, rounds.map((r) => h("tr", {},
          h("td", {}, `${r.round ?? "?"}`),
          h("td", {}, `${r.seq ?? "?"}`),
          h("td", { class: "mono" }, String(r.deck_commitment || "").slice(0, 16) + "…"),
          h("td", {}, r.commitment_ok ? "✔" : "✘")))))),
  );
}
