// Chips: the balance in the header, the daily bonus, and the wallet page (#/wallet) with the
// wallet's entries, newest first (GET /me/wallet/entries, a cursor per page).

import { api, ApiError } from "./api.js";
import { clear, h, say } from "./dom.js";

const CAUSES = {
  signup_grant: "Sign-up grant",
  daily_bonus: "Daily bonus",
  buy_in: "Buy-in (into the table's escrow)",
  payout: "Match settled",
  refund: "Refund (match aborted)",
  adjustment: "Adjustment",
  account_deleted: "Account deleted",
};

const number = new Intl.NumberFormat("en");

export function chips(n) {
  return `${number.format(n)} chip${n === 1 || n === -1 ? "" : "s"}`;
}

function signed(n) {
  return `${n > 0 ? "+" : ""}${number.format(n)}`;
}

/** The header's balance: a link to the wallet page, refreshed on every screen and settlement. */
export async function refreshBalance() {
  const el = document.getElementById("balance");
  if (!el) return null;
  try {
    const wallet = await api.wallet();
    el.textContent = chips(wallet.balance);
    el.dataset.balance = wallet.balance;
    el.dataset.available = wallet.available;
    el.setAttribute("aria-label", `Your chips: ${chips(wallet.balance)} (${
      number.format(wallet.in_play)} in play). Open your wallet`);
    return wallet;
  } catch {
    return null; // the screen itself reports a failed session
  }
}

/** The daily bonus: a button when it may be claimed, else when the next one comes. */
export function bonusButton(wallet, onClaimed) {
  const bonus = (wallet && wallet.daily_bonus) || {};
  if (!bonus.amount) return null;
  if (!bonus.available) {
    return h("p", { "data-testid": "daily-bonus-claimed" }, `Daily bonus claimed; the next one from ${
      new Date(bonus.next_at).toLocaleString()}.`);
  }
  return h("button", {
    type: "button",
    "data-testid": "daily-bonus",
    onclick: async () => {
      try {
        const body = await api.claimDaily();
        say(`Daily bonus: ${signed(body.entry.amount)} chips.`);
        await refreshBalance();
        if (onClaimed) onClaimed(body.wallet);
      } catch (err) {
        if (err instanceof ApiError && err.code === "already_claimed") {
          say(`Already claimed today: the next bonus from ${
            new Date(err.body.next_at).toLocaleString()}.`, true);
        } else say(err.message, true);
      }
    },
  }, `Claim the daily bonus (${chips(bonus.amount)})`);
}

function entryRow(entry) {
  let what = CAUSES[entry.cause] || entry.cause;
  const result = entry.match_result;
  if (entry.cause === "payout" && typeof result === "number") {
    what += result ? ` (you ${result > 0 ? "won" : "lost"} ${chips(Math.abs(result))})` : " (even)";
  }
  return h("tr", { "data-testid": "wallet-entry", "data-cause": entry.cause,
    "data-amount": entry.amount },
  h("td", {}, new Date(entry.created_at).toLocaleString()),
  h("td", {}, entry.reason ? `${what}: ${entry.reason}` : what),
  h("td", { class: entry.amount < 0 ? "minus" : "plus" }, signed(entry.amount)),
  h("td", {}, number.format(entry.balance_after)),
  h("td", {}, entry.game_id ? h("a", { href: `#/table/${entry.game_id}` }, "the match") : ""));
}

export async function walletScreen(root, route, ctx) {
  const summary = h("section", { class: "panel", "aria-labelledby": "wallet-title" });
  const body = h("tbody", {});
  const more = h("p", {});
  const entries = h("section", { class: "panel", "aria-labelledby": "entries-title" },
    h("h2", { id: "entries-title" }, "Entries"),
    h("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": "Wallet entries" },
      h("table", { "data-testid": "wallet-entries" },
        h("thead", {}, h("tr", {}, h("th", {}, "When"), h("th", {}, "What"),
          h("th", {}, "Chips"), h("th", {}, "Balance after"), h("th", {}, "Match"))),
        body)),
    more);
  root.append(h("h1", { id: "wallet-title" }, "Your chips"), summary, entries);

  function drawSummary(wallet) {
    const listed = h("input", { type: "checkbox", id: "wallet-listed", checked: wallet.listed,
      "data-testid": "wallet-listed" });
    listed.addEventListener("change", async () => {
      try {
        drawSummary(await api.setListed(listed.checked));
      } catch (err) {
        ctx.handleError(err);
      }
    });
    clear(summary).append(
      h("p", { class: "big", "data-testid": "wallet-balance", "data-balance": wallet.balance },
        chips(wallet.balance)),
      h("p", {}, `${chips(wallet.available)} available, ${chips(wallet.in_play)} in play ` +
        "(in the escrow of matches not settled yet)."),
      bonusButton(wallet, (after) => drawSummary(after)),
      h("p", {}, listed, " ", h("label", { for: "wallet-listed" },
        "Show my chips on the leaderboard")),
    );
  }

  async function page(next) {
    const answer = await api.walletEntries(next);
    body.append(...(answer.results || []).map(entryRow));
    clear(more);
    if (answer.next) {
      more.append(h("button", { type: "button", "data-testid": "wallet-more",
        onclick: () => page(answer.next).catch(ctx.handleError) }, "Older entries"));
    }
  }

  const wallet = await api.wallet();
  drawSummary(wallet);
  await page(null);
  refreshBalance();
}
