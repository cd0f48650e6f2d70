// Tournaments and the weekly board: the list (#/tournaments), one tournament with registration,
// its bracket of live tables and its result (#/tournament/<id>), and a room's weekly board
// (#/weekly?room=100:5&week=YYYY-MM-DD). Clients of /tournaments and /leaderboards/weekly.

import { api } from "./api.js";
import { clear, h, say } from "./dom.js";
import { formatDateTime, formatNumber, t } from "./i18n.js";
import { chips, refreshBalance } from "./wallet.js";

const REFRESH_MS = 3000;
const STATUSES = ["registering", "running", "finished"];

function statusText(status) {
  return {
    registering: () => t("Open for registration"),
    running: () => t("Playing"),
    finished: () => t("Finished"),
    cancelled: () => t("Cancelled"),
  }[status]();
}

function startText(tournament) {
  if (!tournament.starts_at) {
    return t("Sit-and-go: starts when {count} players have registered",
      { count: formatNumber(tournament.entrants) });
  }
  return t("Starts at {when}", { when: formatDateTime(tournament.starts_at) });
}

function registerButton(tournament, after, ctx) {
  if (tournament.status !== "registering") return null;
  const mine = tournament.registered_me;
  return h("button", {
    type: "button",
    "data-testid": mine ? "tournament-unregister" : "tournament-register",
    onclick: async () => {
      try {
        if (mine) {
          await api.leaveTournament(tournament.id);
          say(t("You are no longer registered; your chips are back."));
        } else {
          await api.enterTournament(tournament.id);
          say(t("You are registered."));
        }
        refreshBalance();
        await after();
      } catch (err) {
        ctx.handleError(err);
      }
    },
  }, mine ? t("Unregister") : t("Register ({chips})",
    { chips: chips(tournament.buy_in + tournament.fee) }));
}

function summaryRow(tournament, redraw, ctx) {
  return h("li", { "data-testid": "tournament", "data-id": tournament.id,
    "data-status": tournament.status },
  h("a", { href: `#/tournament/${tournament.id}` }, h("bdi", {}, tournament.name)),
  " ",
  h("span", {}, t("{registered} of {entrants} registered, prize pool {pool}", {
    registered: formatNumber(tournament.registered),
    entrants: formatNumber(tournament.entrants), pool: chips(tournament.pool) })),
  " ",
  h("span", {}, startText(tournament)),
  " ",
  registerButton(tournament, redraw, ctx));
}

export async function tournamentsScreen(root, route, ctx) {
  root.append(h("h1", {}, t("Tournaments")),
    h("p", {}, h("a", { href: "#/weekly", "data-testid": "weekly-link" },
      t("This week's leaderboard"))));
  const sections = {};
  for (const status of STATUSES) {
    sections[status] = h("section", { class: "panel", "aria-labelledby": `t-${status}` });
    root.append(sections[status]);
  }
  async function draw() {
    for (const status of STATUSES) {
      const { results } = await api.tournaments(status);
      clear(sections[status]).append(
        h("h2", { id: `t-${status}` }, statusText(status)),
        results.length ?
          h("ul", { class: "list" }, results.map((x) => summaryRow(x, draw, ctx))) :
          h("p", {}, t("None right now.")));
    }
  }
  await draw();
}

function entrantName(detail, entrant) {
  const who = detail.entrants_list[entrant];
  if (!who) return "?";
  return who.kind === "bot" ? t("Bot ({level})", { level: who.level }) : who.username || "?";
}

function tableItem(detail, table, stage) {
  const names = table.entrants.map((e) => {
    const name = h("bdi", {}, entrantName(detail, e));
    return table.winner === e ? h("strong", {}, name, " ", t("(winner)")) : name;
  });
  const label = t("Stage {stage}, table {table}", { stage: formatNumber(stage),
    table: formatNumber(table.index + 1) });
  return h("li", { "data-testid": "bracket-table", "data-game": table.game_id,
    "data-status": table.game_status || "" },
  h("span", {}, label, ": "),
  names.flatMap((n, i) => (i ? [", ", n] : [n])),
  " ",
  table.game_id && table.game_status === "active" ?
    h("a", { href: `#/table/${table.game_id}` }, t("Watch {table}", { table: label })) :
    table.game_id ? h("a", { href: `#/replay/${table.game_id}` },
      t("Replay {table}", { table: label })) : "");
}

export async function tournamentScreen(root, route, ctx) {
  const head = h("section", { class: "panel", "aria-labelledby": "tournament-title" });
  const bracket = h("section", { class: "panel", "aria-labelledby": "bracket-title" });
  const result = h("section", { class: "panel", "aria-labelledby": "result-title" });
  root.append(head, bracket, result);
  let timer = null;

  async function draw() {
    const detail = await api.tournament(route.id);
    clear(head).append(
      h("h1", { id: "tournament-title", "data-testid": "tournament-detail",
        "data-status": detail.status }, h("bdi", {}, detail.name)),
      h("p", {}, statusText(detail.status), " · ", startText(detail)),
      h("p", {}, t("Buy-in {buy_in}, fee {fee}; prizes {prizes} of the pool ({pool}).", {
        buy_in: chips(detail.buy_in), fee: chips(detail.fee),
        prizes: detail.prizes.map((p) => `${formatNumber(p)}%`).join(" / "),
        pool: chips(detail.pool) })),
      h("p", {}, t("{registered} of {entrants} registered", {
        registered: formatNumber(detail.registered),
        entrants: formatNumber(detail.entrants) })),
      registerButton(detail, draw, ctx),
      h("p", { class: "small" }, t("Seating seed commitment: {hash}",
        { hash: detail.seed_commitment })));
    clear(bracket).append(h("h2", { id: "bracket-title" }, t("Bracket")));
    if (!detail.stages_list.length) bracket.append(h("p", {}, t("Not started yet.")));
    for (const stage of detail.stages_list) {
      bracket.append(h("ul", { class: "list", "data-testid": "bracket-stage" },
        stage.tables.map((table) => tableItem(detail, table, stage.stage))));
    }
    clear(result).append(h("h2", { id: "result-title" }, t("Result")));
    if (detail.prize_entries) {
      result.append(h("ol", { "data-testid": "tournament-prizes" },
        detail.prize_entries.map((p) => h("li", {},
          h("bdi", {}, entrantName(detail, p.entrant)), " ", chips(p.amount)))),
      h("p", {}, h("a", { href: `/api/v1/tournaments/${detail.id}/export`,
        "data-testid": "tournament-export" }, t("The signed export, to verify offline"))));
    } else {
      result.append(h("p", {}, detail.status === "cancelled" ?
        t("Cancelled: every buy-in was refunded.") : t("Not finished yet.")));
    }
    if (detail.status === "registering" || detail.status === "running") {
      timer = setTimeout(() => draw().catch(ctx.handleError), REFRESH_MS);
    }
  }
  await draw();
  return () => clearTimeout(timer);
}

export async function weeklyScreen(root, route, ctx) {
  const rooms = await api.rooms();
  const room = route.params.get("room") || rooms[0].key;
  const week = route.params.get("week") || "";
  const board = await api.weekly(room, week);
  const choose = h("select", { id: "weekly-room", "data-testid": "weekly-room" },
    rooms.map((r) => h("option", { value: r.key, selected: r.key === room },
      t("Room {room}", { room: r.key }))));
  choose.addEventListener("change", () => ctx.go(`#/weekly?room=${choose.value}`));
  const rows = board.standings.map((e) => h("tr", { "data-testid": "weekly-row" },
    h("td", {}, formatNumber(e.rank)), h("td", {}, h("bdi", {}, e.username || "?")),
    h("td", {}, formatNumber(e.points)), h("td", {}, formatNumber(e.matches)),
    h("td", {}, formatNumber(e.wins)), h("td", {}, e.reward ? chips(e.reward) : "")));
  root.append(
    h("h1", { id: "weekly-title" }, t("Weekly leaderboard")),
    h("section", { class: "panel", "aria-labelledby": "weekly-title" },
      h("p", {}, h("label", { for: "weekly-room" }, t("Room")), " ", choose),
      h("p", { "data-testid": "weekly-week" }, t("Week of {start} to {end}", {
        start: formatDateTime(board.starts_at), end: formatDateTime(board.ends_at) }),
      board.archived ? ` (${t("final")})` : ""),
      h("p", {}, t("Rewards for the first places: {rewards}",
        { rewards: board.rewards.map((r) => chips(r)).join(", ") })),
      board.standings.length ?
        h("div", { class: "scroll", tabindex: "0", role: "region",
          "aria-label": t("Weekly leaderboard") },
        h("table", { "data-testid": "weekly-board" },
          h("thead", {}, h("tr", {}, h("th", {}, t("Rank")), h("th", {}, t("Player")),
            h("th", {}, t("Points")), h("th", {}, t("Matches")), h("th", {}, t("Wins")),
            h("th", {}, t("Reward")))),
          h("tbody", {}, rows))) :
        h("p", {}, t("No rated match in this room this week yet.")),
      board.past_weeks.length ? h("p", {}, t("Past weeks:"), " ",
        board.past_weeks.flatMap((w, i) => [i ? ", " : "",
          h("a", { href: `#/weekly?room=${room}&week=${w}` }, w)])) : null,
      h("p", {}, h("a", { href: "#/tournaments" }, t("Tournaments")))));
}
